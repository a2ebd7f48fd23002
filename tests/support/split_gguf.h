// Splits a GGUF file at tensor boundaries the way llama.cpp's gguf-split does (GGUF.md; its
// README and split keys: examples/gguf-split in llama.cpp): part 1 carries all the metadata, every
// part split.no (from 0), split.count and split.tensors.count, and its own share of the tensors
// with offsets relative to its own data section. Written with Hearth's GGUF writer.
#pragma once

#include <string>
#include <vector>

#include "engine/model/gguf.h"
#include "engine/model/gguf_split.h"
#include "engine/model/gguf_writer.h"

namespace hearth::test {

// Writes <prefix>-00001-of-0000N.gguf ... from file, its tensors shared out in order, nParts >= 2.
// Returns the parts' paths (empty when a write fails).
inline std::vector<std::string> writeSplit(const GgufFile& file, const std::string& prefix, int nParts) {
    const auto& tensors = file.tensors();
    std::vector<std::string> paths;
    for (int part = 0; part < nParts; ++part) {
        GgufWriter w;
        if (part == 0)
            for (const auto& [key, value] : file.metadata()) w.setValue(key, value);
        w.set("split.no", static_cast<uint16_t>(part));
        w.set("split.count", static_cast<uint16_t>(nParts));
        w.set("split.tensors.count", static_cast<int32_t>(tensors.size()));
        const size_t from = tensors.size() * part / nParts, to = tensors.size() * (part + 1) / nParts;
        for (size_t i = from; i < to; ++i) {
            const auto bytes = file.tensorData(tensors[i]);
            w.addTensor(tensors[i].name, tensors[i].dims, tensors[i].type,
                        std::vector<uint8_t>(bytes.begin(), bytes.end()));
        }
        paths.push_back(ggufSplitPath(prefix, part + 1, nParts));
        if (!w.writeFile(paths.back())) return {};
    }
    return paths;
}

}  // namespace hearth::test

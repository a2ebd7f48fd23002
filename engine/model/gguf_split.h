// Split GGUF models as llama.cpp's gguf-split writes them: parts named
// <prefix>-00001-of-00003.gguf, <prefix>-00002-of-00003.gguf, ... (five digits each), every part a
// whole GGUF file whose tensor offsets are relative to its own data section; the first part holds
// the model's metadata and split.no = 0, split.count = N, split.tensors.count = all parts'
// tensors together; each other part repeats split.no (its index from 0) and split.count.
// GgufFile::open joins the parts; these helpers name them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth {

struct GgufSplitName {
    std::string prefix;  // the path before "-00001-of-00003.gguf"
    int index = 0;  // 1-based, as in the name
    int count = 0;
};

// The largest part count a name can carry (five digits).
inline constexpr int kMaxGgufSplitParts = 99999;

// nullopt unless path ends in "-NNNNN-of-MMMMM.gguf" with 1 <= NNNNN <= MMMMM.
std::optional<GgufSplitName> parseGgufSplitName(std::string_view path);
// "<prefix>-00002-of-00003.gguf"
std::string ggufSplitPath(std::string_view prefix, int index, int count);
// The files a model opened at path is made of, by name only (nothing is read): every part's path
// when path is the first part of a split model ("-00001-of-0000N.gguf", N > 1), else {path}.
std::vector<std::string> ggufModelFiles(const std::string& path);

}  // namespace hearth

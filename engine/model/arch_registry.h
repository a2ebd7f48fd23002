// The architectures Hearth implements, keyed on general.architecture. Each architecture file
// defines its loader; model.cpp holds the table (explicit, so a static link keeps every entry).
#pragma once

#include <memory>
#include <string_view>

#include "engine/error.h"
#include "engine/model/model.h"

namespace hearth {

using ArchLoader = Result<std::unique_ptr<Model>> (*)(const GgufFile&);

struct ArchEntry {
    std::string_view name;
    ArchLoader load;
};

Result<std::unique_ptr<Model>> loadLlama(const GgufFile& file);
Result<std::unique_ptr<Model>> loadQwen2(const GgufFile& file);  // arch_llama.cpp: Llama with Q/K/V biases, NeoX RoPE
Result<std::unique_ptr<Model>> loadGemma3(const GgufFile& file);

}  // namespace hearth

// The architectures Hearth implements, keyed on general.architecture. Each architecture file
// reads its hyperparameters and options and builds the shared decoder (decoder.h); model.cpp
// holds the table (explicit, so a static link keeps every entry).
#pragma once

#include <memory>
#include <string_view>

#include "engine/error.h"
#include "engine/model/model.h"

namespace hearth {

using ArchLoader = Result<std::unique_ptr<Model>> (*)(const GgufFile&, const ModelLoadOptions&);

struct ArchEntry {
    std::string_view name;
    ArchLoader load;
};

Result<std::unique_ptr<Model>> loadLlama(const GgufFile& file, const ModelLoadOptions& options);  // arch_llama.cpp
Result<std::unique_ptr<Model>> loadQwen2(const GgufFile& file, const ModelLoadOptions& options);  // arch_qwen.cpp
Result<std::unique_ptr<Model>> loadQwen3(const GgufFile& file, const ModelLoadOptions& options);  // arch_qwen.cpp
Result<std::unique_ptr<Model>> loadPhi3(const GgufFile& file, const ModelLoadOptions& options);  // arch_phi3.cpp
Result<std::unique_ptr<Model>> loadGemma2(const GgufFile& file, const ModelLoadOptions& options);  // arch_gemma.cpp
Result<std::unique_ptr<Model>> loadGemma3(const GgufFile& file, const ModelLoadOptions& options);  // arch_gemma.cpp

}  // namespace hearth

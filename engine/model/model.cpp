// Chooses the architecture implementation from general.architecture.
#include "engine/str_cat.h"
#include "engine/model/model.h"

#include <array>

#include "engine/model/arch_registry.h"
#include "engine/model/gguf.h"

namespace hearth {

namespace {
constexpr std::array kArchitectures{
    ArchEntry{"llama", &loadLlama},
    ArchEntry{"gemma3", &loadGemma3},
};
}  // namespace

Result<std::unique_ptr<Model>> Model::load(const GgufFile& file) {
    const GgufValue* archValue = file.find("general.architecture");
    if (!archValue || !archValue->asString())
        return fail(ErrorCode::InvalidFormat, "missing metadata key general.architecture");
    const std::string& arch = *archValue->asString();
    for (const ArchEntry& entry : kArchitectures)
        if (entry.name == arch) return entry.load(file);
    return fail(ErrorCode::Unsupported, strCat("architecture '", arch, "' is not supported"));
}

}  // namespace hearth

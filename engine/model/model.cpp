// Chooses the architecture implementation from general.architecture; what every architecture's
// forward entry points share (forward() as a one-item batch, the per-item checks).
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

Result<void> Model::forward(Backend& backend, KvCache& cache, KvSequence& seq, std::span<const int32_t> tokens,
                            std::span<float> logits) {
    const ForwardItem item{&seq, tokens, logits};
    return forwardBatch(backend, cache, std::span<const ForwardItem>(&item, 1));
}

Result<void> Model::checkItem(const ForwardItem& item) const {
    if (!item.seq) return fail(ErrorCode::InvalidArgument, "no KV sequence");
    if (item.tokens.empty()) return {};
    for (int32_t id : item.tokens)
        if (id < 0 || id >= config_.nVocab)
            return fail(ErrorCode::InvalidArgument, strCat("token id ", id, " outside the vocabulary"));
    const auto nVocab = static_cast<size_t>(config_.nVocab);
    if (item.logits.size() % nVocab != 0 || item.logits.size() / nVocab > item.tokens.size())
        return fail(ErrorCode::InvalidArgument, "logits buffer must hold nVocab floats per row, for at most every token");
    return {};
}

}  // namespace hearth

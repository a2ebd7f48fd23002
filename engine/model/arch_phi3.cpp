// Phi-3 / 3.5 / 4 (general.architecture phi3): the Llama decoder with fused tensors — attn_qkv
// holding Q, K and V, ffn_up holding gate and up — NeoX (half-split) RoPE, and, for the
// long-context models, LongRoPE: two sets of per-pair RoPE factors (rope_factors_short / _long),
// the long one used when the model runs at more than its original context, as llama.cpp
// chooses, with a magnitude correction of the rotated dimensions (rope.scaling.attn_factor).
// The files' attention.sliding_window is read and not applied: llama.cpp disables Phi-3's
// sliding window (its conversion does not say which layers use it), and Hearth matches the
// reference it is tested against.
#include "engine/model/arch_registry.h"
#include "engine/model/decoder.h"
#include "engine/model/gguf.h"
#include "engine/model/hparams.h"
#include "engine/str_cat.h"

namespace hearth {

Result<std::unique_ptr<Model>> loadPhi3(const GgufFile& file, const ModelLoadOptions& options) {
    constexpr std::string_view kArch = "phi3";
    if (auto r = refuseRopeScaling(file, kArch); !r) return std::unexpected(r.error());
    auto config = readCommonConfig(file, kArch);
    if (!config) return std::unexpected(config.error());
    config->ropeStyle = RopeStyle::HalfSplit;
    DecoderOptions decoder{.fusedGateUp = true};
    const bool hasLong = file.findTensor("rope_factors_long.weight") != nullptr;
    const bool hasShort = file.findTensor("rope_factors_short.weight") != nullptr;
    if (hasLong != hasShort)
        return fail(ErrorCode::InvalidFormat,
                    "phi3: rope_factors_long.weight and rope_factors_short.weight come together");
    if (hasLong) {
        auto original = readIntKey(file, kArch, "rope.scaling.original_context_length", 1, config->contextLength,
                                   config->contextLength);
        if (!original) return std::unexpected(original.error());
        const int64_t context = options.contextLength > 0
            ? std::min<int64_t>(options.contextLength, config->contextLength)
            : config->contextLength;
        auto factors = readFreqFactors(
            file, context > *original ? "rope_factors_long.weight" : "rope_factors_short.weight", config->nRot / 2);
        if (!factors) return std::unexpected(factors.error());
        config->ropeFreqFactors = std::move(*factors);
    }
    auto attnFactor = readFloatKey(file, kArch, "rope.scaling.attn_factor", 1e-3, 1e3, 1.0);
    if (!attnFactor) return std::unexpected(attnFactor.error());
    decoder.ropeAttnFactor = static_cast<float>(*attnFactor);
    return makeDecoder(file, std::move(*config), decoder);
}

}  // namespace hearth

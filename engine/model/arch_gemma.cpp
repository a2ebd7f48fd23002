// Gemma 2 and Gemma 3: the decoder with embeddings scaled by sqrt(nEmbd), sandwich RMSNorms
// around attention and FFN, NeoX (half-split) RoPE, GeGLU, output tied to token_embd, and local
// sliding-window layers interleaved with global ones. Gemma 2 alternates them (every other
// layer local) and soft-caps attention scores and the final logits; Gemma 3 has five local
// layers per global one, each kind with its own RoPE base, and normalises each head of Q and K.
// The converter already added 1 to every Gemma norm weight: they are plain multipliers.
// Numerics follow llama.cpp's gemma2/gemma3 graphs, which GGUF files are converted and tested for.
#include <cmath>

#include "engine/model/arch_registry.h"
#include "engine/model/decoder.h"
#include "engine/model/gguf.h"
#include "engine/model/hparams.h"
#include "engine/str_cat.h"

namespace hearth {
namespace {

constexpr int64_t kMaxWindow = 1 << 24;

// What the two generations differ in beyond the keys' prefix.
struct GemmaGeneration {
    std::string_view arch;
    int64_t defaultPattern;  // llama.cpp's period when the file names none
    int64_t defaultWindow;  // window when the file has no attention.sliding_window (0: no local layers)
    double defaultSwaBase;  // RoPE base of local layers without rope.freq_base_swa (0: the global base)
    int largeLayers;  // the layer count of the largest model, which scales queries differently
    bool qkNorm;
    double defaultAttnSoftcap, defaultFinalSoftcap;
};

// Gemma 2: llama.cpp's defaults (n_swa 4096, pattern 2, soft-caps 50 and 30) and its 27B
// (46 layers). Gemma 3: five local layers, then one global; local RoPE base 10k, global 1M
// (Gemma 3 report, arXiv 2503.19786, "Long context"); 27B has 62 layers.
constexpr GemmaGeneration kGemma2{"gemma2", 2, 4096, 0.0, 46, false, 50.0, 30.0};
constexpr GemmaGeneration kGemma3{"gemma3", 6, 0, 10000.0, 62, true, 0.0, 0.0};

Result<std::unique_ptr<Model>> loadGemma(const GgufFile& file, const GemmaGeneration& g) {
    auto config = readCommonConfig(file, g.arch);
    if (!config) return std::unexpected(config.error());
    auto valueLength = readIntKey(file, g.arch, "attention.value_length", 1, 1 << 16, config->headDim);
    if (!valueLength) return std::unexpected(valueLength.error());
    if (*valueLength != config->headDim)
        return fail(ErrorCode::Unsupported,
                    strCat(g.arch, " with value_length different from key_length is not supported"));
    if (auto r = refuseRopeScaling(file, g.arch); !r) return std::unexpected(r.error());
    auto window = readIntKey(file, g.arch, "attention.sliding_window", 0, kMaxWindow, g.defaultWindow);
    if (!window) return std::unexpected(window.error());
    if (*window > 0) {
        auto local = readSlidingLayers(file, g.arch, config->nLayers, g.defaultPattern);
        if (!local) return std::unexpected(local.error());
        config->slidingWindow = static_cast<int32_t>(*window);
        config->slidingLayers = std::move(*local);
    }
    auto baseSwa = readFloatKey(file, g.arch, "rope.freq_base_swa", 1.0, 1e12,
                                g.defaultSwaBase > 0 ? g.defaultSwaBase : double{config->ropeFreqBase});
    if (!baseSwa) return std::unexpected(baseSwa.error());
    config->ropeFreqBaseSwa = static_cast<float>(*baseSwa);
    config->ropeStyle = RopeStyle::HalfSplit;
    auto attnSoftcap = readFloatKey(file, g.arch, "attn_logit_softcapping", 0.0, 1e6, g.defaultAttnSoftcap);
    if (!attnSoftcap) return std::unexpected(attnSoftcap.error());
    auto finalSoftcap = readFloatKey(file, g.arch, "final_logit_softcapping", 0.0, 1e6, g.defaultFinalSoftcap);
    if (!finalSoftcap) return std::unexpected(finalSoftcap.error());
    // The largest model scales queries by 1/sqrt(nEmbd / nHeads) instead of 1/sqrt(headDim)
    // (query_pre_attn_scalar in gemma_pytorch's config.py; llama.cpp keys it on the layer count,
    // since GGUF files carry no such key).
    const float attentionScale = config->nLayers == g.largeLayers
        ? 1.0f / std::sqrt(static_cast<float>(config->nEmbd / config->nHeads))
        : 1.0f / std::sqrt(static_cast<float>(config->headDim));
    const DecoderOptions options{.scaleEmbeddings = true,
                                 .qkNorm = g.qkNorm,
                                 .postNorms = true,
                                 .activation = FfnActivation::Gelu,
                                 .attentionScale = attentionScale,
                                 .attentionSoftcap = static_cast<float>(*attnSoftcap),
                                 .finalSoftcap = static_cast<float>(*finalSoftcap)};
    return makeDecoder(file, std::move(*config), options);
}

}  // namespace

Result<std::unique_ptr<Model>> loadGemma2(const GgufFile& file, const ModelLoadOptions&) {
    return loadGemma(file, kGemma2);
}

Result<std::unique_ptr<Model>> loadGemma3(const GgufFile& file, const ModelLoadOptions&) {
    return loadGemma(file, kGemma3);
}

}  // namespace hearth

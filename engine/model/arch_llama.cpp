// Llama (TinyLlama, Llama 2 and 3.x, Mistral, SmolLM2, DeepSeek-R1 distills of Llama): the plain
// decoder — RMSNorm, RoPE on consecutive pairs, grouped-query attention, SwiGLU, tied or untied
// output — with optional Q/K/V biases and Llama 3.1's RoPE frequency factors.
#include "engine/model/arch_registry.h"
#include "engine/model/decoder.h"
#include "engine/model/gguf.h"
#include "engine/model/hparams.h"

namespace hearth {

Result<std::unique_ptr<Model>> loadLlama(const GgufFile& file, const ModelLoadOptions&) {
    constexpr std::string_view kArch = "llama";
    // Llama 3.1's "llama3" scaling arrives precomputed as rope_freqs.weight, read below.
    if (auto r = refuseRopeScaling(file, kArch, "llama3"); !r) return std::unexpected(r.error());
    auto config = readCommonConfig(file, kArch);
    if (!config) return std::unexpected(config.error());
    config->ropeStyle = RopeStyle::Pairwise;
    if (file.findTensor("rope_freqs.weight") != nullptr) {
        auto factors = readFreqFactors(file, "rope_freqs.weight", config->nRot / 2);
        if (!factors) return std::unexpected(factors.error());
        config->ropeFreqFactors = std::move(*factors);
    }
    return makeDecoder(file, std::move(*config), {.qkvBiases = true});
}

}  // namespace hearth

// Qwen 2 / 2.5 (general.architecture qwen2, also DeepSeek-R1 distills of Qwen) and Qwen 3 dense
// (qwen3): the Llama decoder with RoPE on the two halves of each head (NeoX style). Qwen 2 adds
// biases on Q, K and V; Qwen 3 has none and normalises each head of Q and K before RoPE.
// llama.cpp passes neither any RoPE frequency factors.
#include "engine/model/arch_registry.h"
#include "engine/model/decoder.h"
#include "engine/model/gguf.h"
#include "engine/model/hparams.h"

namespace hearth {
namespace {

Result<std::unique_ptr<Model>> loadQwen(const GgufFile& file, std::string_view arch, const DecoderOptions& options) {
    if (auto r = refuseRopeScaling(file, arch); !r) return std::unexpected(r.error());
    auto config = readCommonConfig(file, arch);
    if (!config) return std::unexpected(config.error());
    config->ropeStyle = RopeStyle::HalfSplit;
    return makeDecoder(file, std::move(*config), options);
}

}  // namespace

Result<std::unique_ptr<Model>> loadQwen2(const GgufFile& file, const ModelLoadOptions&) {
    return loadQwen(file, "qwen2", {.qkvBiases = true});
}

Result<std::unique_ptr<Model>> loadQwen3(const GgufFile& file, const ModelLoadOptions&) {
    return loadQwen(file, "qwen3", {.qkNorm = true});
}

}  // namespace hearth

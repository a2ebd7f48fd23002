// The decoder every architecture Hearth runs is built from: token embedding, then per layer a
// pre-norm attention block and a pre-norm gated feed-forward block on a residual stream, then
// the output head. What differs between families is a handful of options (DecoderOptions) and
// the hyperparameters in ModelConfig; an architecture file (arch_*.cpp) reads those from the
// GGUF metadata and calls makeDecoder — it holds no forward-pass code of its own.
//
// A layer's tensors, bound by name (blk.N.*), required unless marked:
//   attn_norm [nEmbd]; attn_q / attn_k / attn_v, or attn_qkv fused (rows Q, then K, then V);
//   attn_q.bias / attn_k.bias / attn_v.bias (optional, when DecoderOptions::qkvBiases);
//   attn_q_norm / attn_k_norm [headDim] (DecoderOptions::qkNorm); attn_output;
//   post_attention_norm / post_ffw_norm [nEmbd] (DecoderOptions::postNorms);
//   ffn_norm; ffn_gate + ffn_up, or ffn_up alone holding both (rows gate, then up: fusedGateUp);
//   ffn_down.
// Fused tensors are split into row ranges at bind time (a weight's rows are contiguous in the
// file), so the pass runs the same matmuls on the same bytes either way.
// Thread-safety: as Model (engine thread only).
#pragma once

#include <memory>

#include "engine/error.h"
#include "engine/model/model.h"

namespace hearth {

class GgufFile;

enum class FfnActivation {
    Silu,  // SwiGLU: silu(gate) * up (Llama, Qwen, Phi-3)
    Gelu,  // GeGLU: gelu_tanh(gate) * up (Gemma)
};

struct DecoderOptions {
    bool scaleEmbeddings = false;  // x = embedding * sqrt(nEmbd) (Gemma)
    bool qkvBiases = false;  // read attn_{q,k,v}.bias where present, added after the projections
    bool qkNorm = false;  // per-head RMSNorm of Q and K before RoPE (Gemma 3, Qwen 3)
    bool postNorms = false;  // RMSNorm of each block's output before the residual add (Gemma 2, 3)
    bool fusedGateUp = false;  // ffn_up [2 nFf, nEmbd] holds gate then up, no ffn_gate (Phi-3)
    FfnActivation activation = FfnActivation::Silu;
    float ropeAttnFactor = 1.0f;  // the rotated dimensions of Q and K times this after RoPE (LongRoPE's
        // magnitude correction, llama.cpp's attn_factor; Phi-3)
    float attentionScale = 0.0f;  // on q.k; 0: 1 / sqrt(headDim)
    float attentionSoftcap = 0.0f;  // cap * tanh(score / cap) before the softmax (Gemma 2); 0: none
    float finalSoftcap = 0.0f;  // cap * tanh(logit / cap) on the output (Gemma 2); 0: none
};

// The model for `file`, whose hyperparameters the architecture has read into config (local
// layers: config.slidingLayers, with config.ropeFreqBaseSwa and config.slidingWindow). Binds
// every tensor, checking names, shapes and types. Errors: InvalidFormat.
Result<std::unique_ptr<Model>> makeDecoder(const GgufFile& file, ModelConfig config, const DecoderOptions& options);

}  // namespace hearth

// Small decoder GGUFs in F32 with seeded random weights and a 512-piece SentencePiece vocabulary,
// written with Hearth's GGUF writer, in the tensor layout and keys of each family Hearth runs:
// llama, qwen2 (Q/K/V biases), qwen3 (QK norms), phi3 (fused QKV and gate/up, LongRoPE, partial
// RoPE) and gemma2 (post norms, soft-caps, alternating sliding windows, tied output). Every row
// length is a multiple of 256, so that llama.cpp's quantizer can turn a file into any weight
// type, K-quants included (the conformance suite quantizes and compares logits).
// The llama weights come first from one generator, in the same order for every family; what a
// family adds (biases, norms, factors) comes from generators of its own, so a file with a
// feature and one without it hold the same shared weights (the feature-off controls rely on it).
#pragma once

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "engine/model/gguf_writer.h"
#include "tests/support/tiny_llama.h"

namespace hearth::test {

struct SynthLlamaShape {
    int nLayers = 2, nEmbd = 256, nHeads = 4, nKvHeads = 2, nFf = 512, context = 512, nVocab = 512;
    int headDim = 0;  // attention.key_length; 0: nEmbd / nHeads (and no key written)
    int nRot = 0;  // rope.dimension_count; 0: headDim
    uint32_t seed = 7;
    std::string arch = "llama";  // llama, qwen2, qwen3, phi3 or gemma2: keys under arch.*
    bool qkvBias = false;  // biases ~ N(0, 0.5^2) on Q, K and V (large enough to change the logits)
    bool qkNorm = false;  // attn_q_norm / attn_k_norm [headDim] ~ 1 + N(0, 0.3^2) (Qwen 3)
    bool fused = false;  // attn_qkv and ffn_up holding gate then up (Phi-3)
    // Phi-3 LongRoPE: rope_factors_short / _long [nRot / 2] and the original context (0: none).
    std::vector<float> ropeShort, ropeLong;
    int originalContext = 0;
    float ropeAttnFactor = 0.0f;  // rope.scaling.attn_factor (0: not written)
    // Gemma 2: post norms, embedding scale, tied output; the keys are written as given
    // (negative: not written, so llama.cpp's defaults apply).
    bool gemma = false;
    int slidingWindow = -1;
    float attnSoftcap = -1.0f, finalSoftcap = -1.0f;
};

// <unk>, <s>, </s>, the 256 byte pieces, then "▁w<n>" words up to nVocab pieces.
inline TinyVocab synthSpmVocab(int nVocab) {
    TinyVocab v = tinySpmVocab({{"<unk>", 2}, {"<s>", 3}, {"</s>", 3}}, {});
    for (int i = 0; static_cast<int>(v.tokens.size()) < nVocab; ++i) {
        v.tokens.push_back("\xE2\x96\x81w" + std::to_string(i));
        v.types.push_back(1);
        v.scores.push_back(-static_cast<float>(i));
    }
    return v;
}

inline int synthHeadDim(const SynthLlamaShape& s) { return s.headDim > 0 ? s.headDim : s.nEmbd / s.nHeads; }

// 1 + N(0, scale^2) per element: norm weights that differ from plain ones.
inline std::vector<uint8_t> synthNormBytes(int64_t n, std::mt19937& rng, float scale) {
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> values(static_cast<size_t>(n));
    for (float& v : values) v = 1.0f + normal(rng);
    return f32Bytes(values);
}

// Weights ~ N(0, 1/cols) so that activations stay near unit size through the layers; the
// embedding (also the output projection's input scale) ~ N(0, 0.2^2) gives logits of a few units.
inline GgufWriter synthLlamaF32(const SynthLlamaShape& s = {}) {
    const TinyVocab vocab = synthSpmVocab(s.nVocab);
    GgufWriter w;
    setLlamaKeys(w, "synthetic-llama-f32", s, vocab, s.arch);
    const std::string& a = s.arch;
    const int headDim = synthHeadDim(s);
    w.set("general.file_type", uint32_t{0});
    w.set(a + ".rope.dimension_count", static_cast<uint32_t>(s.nRot > 0 ? s.nRot : headDim));
    if (s.headDim > 0) {
        w.set(a + ".attention.key_length", static_cast<uint32_t>(headDim));
        w.set(a + ".attention.value_length", static_cast<uint32_t>(headDim));
    }
    if (s.originalContext > 0)
        w.set(a + ".rope.scaling.original_context_length", static_cast<uint32_t>(s.originalContext));
    if (s.ropeAttnFactor > 0) w.set(a + ".rope.scaling.attn_factor", s.ropeAttnFactor);
    if (s.slidingWindow >= 0) w.set(a + ".attention.sliding_window", static_cast<uint32_t>(s.slidingWindow));
    if (s.attnSoftcap >= 0) w.set(a + ".attn_logit_softcapping", s.attnSoftcap);
    if (s.finalSoftcap >= 0) w.set(a + ".final_logit_softcapping", s.finalSoftcap);
    std::mt19937 rng(s.seed);
    std::mt19937 biasRng(s.seed + 1000);  // its own stream: the weights are the same with and without biases
    std::mt19937 normRng(s.seed + 2000);  // QK norms, likewise
    const int64_t qDim = int64_t{s.nHeads} * headDim, kvDim = int64_t{s.nKvHeads} * headDim;
    const auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, float scale) {
        w.addTensor(name, {cols, rows}, DType::F32, tinyTensorBytes(DType::F32, cols, rows, rng, scale));
    };
    // Several matrices drawn in turn from the generator, stored as one (their rows end to end).
    const auto fusedMatrix = [&](const std::string& name, int64_t cols, std::initializer_list<int64_t> rowCounts,
                                 std::initializer_list<float> scales) {
        std::vector<uint8_t> bytes;
        int64_t rows = 0;
        auto scale = scales.begin();
        for (int64_t n : rowCounts) {
            const std::vector<uint8_t> part = tinyTensorBytes(DType::F32, cols, n, rng, *scale++);
            bytes.insert(bytes.end(), part.begin(), part.end());
            rows += n;
        }
        w.addTensor(name, {cols, rows}, DType::F32, std::move(bytes));
    };
    matrix("token_embd.weight", s.nEmbd, s.nVocab, 0.2f);
    for (int il = 0; il < s.nLayers; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        const float inScale = 1.0f / std::sqrt(static_cast<float>(s.nEmbd));
        const float outScale = 1.0f / std::sqrt(static_cast<float>(qDim));
        w.addTensor(p + "attn_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
        w.addTensor(p + "ffn_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
        if (s.fused) {
            fusedMatrix(p + "attn_qkv.weight", s.nEmbd, {qDim, kvDim, kvDim}, {inScale, inScale, inScale});
        } else {
            matrix(p + "attn_q.weight", s.nEmbd, qDim, inScale);
            matrix(p + "attn_k.weight", s.nEmbd, kvDim, inScale);
            matrix(p + "attn_v.weight", s.nEmbd, kvDim, inScale);
        }
        if (s.qkvBias) {
            w.addTensor(p + "attn_q.bias", {qDim}, DType::F32, tinyTensorBytes(DType::F32, qDim, 1, biasRng, 0.5f));
            w.addTensor(p + "attn_k.bias", {kvDim}, DType::F32, tinyTensorBytes(DType::F32, kvDim, 1, biasRng, 0.5f));
            w.addTensor(p + "attn_v.bias", {kvDim}, DType::F32, tinyTensorBytes(DType::F32, kvDim, 1, biasRng, 0.5f));
        }
        if (s.qkNorm) {
            w.addTensor(p + "attn_q_norm.weight", {headDim}, DType::F32, synthNormBytes(headDim, normRng, 0.3f));
            w.addTensor(p + "attn_k_norm.weight", {headDim}, DType::F32, synthNormBytes(headDim, normRng, 0.3f));
        }
        matrix(p + "attn_output.weight", qDim, s.nEmbd, s.headDim > 0 ? outScale : inScale);
        if (s.fused) {
            fusedMatrix(p + "ffn_up.weight", s.nEmbd, {s.nFf, s.nFf}, {inScale, inScale});
        } else {
            matrix(p + "ffn_gate.weight", s.nEmbd, s.nFf, inScale);
            matrix(p + "ffn_up.weight", s.nEmbd, s.nFf, inScale);
        }
        matrix(p + "ffn_down.weight", s.nFf, s.nEmbd, 1.0f / std::sqrt(static_cast<float>(s.nFf)));
        if (s.gemma) {
            w.addTensor(p + "post_attention_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
            w.addTensor(p + "post_ffw_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
        }
    }
    w.addTensor("output_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
    if (!s.gemma) matrix("output.weight", s.nEmbd, s.nVocab, 0.2f);  // Gemma's output is token_embd
    if (!s.ropeShort.empty()) {
        w.addTensor("rope_factors_short.weight", {static_cast<int64_t>(s.ropeShort.size())}, DType::F32,
                    f32Bytes(s.ropeShort));
        w.addTensor("rope_factors_long.weight", {static_cast<int64_t>(s.ropeLong.size())}, DType::F32,
                    f32Bytes(s.ropeLong));
    }
    return w;
}

}  // namespace hearth::test

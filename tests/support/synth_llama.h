// A small Llama-shaped F32 GGUF with seeded random weights and a 512-piece SentencePiece
// vocabulary, written with Hearth's GGUF writer. Every row length is a multiple of 256, so that
// llama.cpp's quantizer can turn it into any weight type, K-quants included (the conformance
// suite quantizes it to every type Hearth reads and compares logits).
#pragma once

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "engine/model/gguf_writer.h"
#include "tests/support/tiny_llama.h"

namespace hearth::test {

struct SynthLlamaShape {
    int nLayers = 2, nEmbd = 256, nHeads = 4, nKvHeads = 2, nFf = 512, context = 512, nVocab = 512;
    uint32_t seed = 7;
    std::string arch = "llama";  // "qwen2": the same tensors and keys under qwen2.*, plus Q/K/V biases
    bool qkvBias = false;        // biases ~ N(0, 0.5^2) on Q, K and V (large enough to change the logits)
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

// Weights ~ N(0, 1/cols) so that activations stay near unit size through the layers; the
// embedding (also the output projection's input scale) ~ N(0, 0.2^2) gives logits of a few units.
inline GgufWriter synthLlamaF32(const SynthLlamaShape& s = {}) {
    const TinyVocab vocab = synthSpmVocab(s.nVocab);
    GgufWriter w;
    setLlamaKeys(w, "synthetic-llama-f32", s, vocab, s.arch);
    w.set("general.file_type", uint32_t{0});
    w.set(s.arch + ".rope.dimension_count", static_cast<uint32_t>(s.nEmbd / s.nHeads));
    std::mt19937 rng(s.seed);
    std::mt19937 biasRng(s.seed + 1000);  // its own stream: the weights are the same with and without biases
    const int64_t kvDim = int64_t{s.nEmbd} / s.nHeads * s.nKvHeads;
    const auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, float scale) {
        w.addTensor(name, {cols, rows}, DType::F32, tinyTensorBytes(DType::F32, cols, rows, rng, scale));
    };
    matrix("token_embd.weight", s.nEmbd, s.nVocab, 0.2f);
    for (int il = 0; il < s.nLayers; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        const float inScale = 1.0f / std::sqrt(static_cast<float>(s.nEmbd));
        w.addTensor(p + "attn_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
        w.addTensor(p + "ffn_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
        matrix(p + "attn_q.weight", s.nEmbd, s.nEmbd, inScale);
        matrix(p + "attn_k.weight", s.nEmbd, kvDim, inScale);
        matrix(p + "attn_v.weight", s.nEmbd, kvDim, inScale);
        if (s.qkvBias) {
            w.addTensor(p + "attn_q.bias", {s.nEmbd}, DType::F32, tinyTensorBytes(DType::F32, s.nEmbd, 1, biasRng, 0.5f));
            w.addTensor(p + "attn_k.bias", {kvDim}, DType::F32, tinyTensorBytes(DType::F32, kvDim, 1, biasRng, 0.5f));
            w.addTensor(p + "attn_v.bias", {kvDim}, DType::F32, tinyTensorBytes(DType::F32, kvDim, 1, biasRng, 0.5f));
        }
        matrix(p + "attn_output.weight", s.nEmbd, s.nEmbd, inScale);
        matrix(p + "ffn_gate.weight", s.nEmbd, s.nFf, inScale);
        matrix(p + "ffn_up.weight", s.nEmbd, s.nFf, inScale);
        matrix(p + "ffn_down.weight", s.nFf, s.nEmbd, 1.0f / std::sqrt(static_cast<float>(s.nFf)));
    }
    w.addTensor("output_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
    matrix("output.weight", s.nEmbd, s.nVocab, 0.2f);
    return w;
}

}  // namespace hearth::test

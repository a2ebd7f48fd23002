// Writes tiny random-weight Gemma 3 GGUF files with Hearth's own GGUF writer: Gemma's special
// pieces and byte pieces as the vocabulary, a head size different from nEmbd / nHeads, enough
// layers for one global layer (il % 6 == 5) among local ones, a window shorter than the prompts
// the tests use, and norm weights away from 1 so that a skipped norm shows.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "engine/model/gguf_writer.h"
#include "tests/support/tiny_llama.h"

namespace hearth::test {

struct TinyGemma3Shape {
    int nLayers = 7, nEmbd = 64, nHeads = 4, nKvHeads = 2, headDim = 32, nFf = 96, context = 256;
    int slidingWindow = 5;
    int slidingPattern = -1;  // -1: no key (the default, 6)
    DType weightType = DType::F32;  // F32 or Q8_0 (dimensions are multiples of 32)
    uint32_t seed = 3;
};

// n values 1 + N(0, 0.2): Gemma's norm weights as the converter writes them (1 already added).
inline std::vector<uint8_t> tinyNormWeights(int64_t n, std::mt19937& rng) {
    std::normal_distribution<float> normal(1.0f, 0.2f);
    std::vector<float> values(static_cast<size_t>(n));
    for (float& v : values) v = normal(rng);
    return f32Bytes(values);
}

inline GgufWriter tinyGemma3(const TinyGemma3Shape& s = {}) {
    // Gemma's order: 0 <pad>, 1 <eos>, 2 <bos>, 3 <unk>; then its turn markers; then bytes.
    const TinyVocab vocab = tinySpmVocab(
        {{"<pad>", 3}, {"<eos>", 3}, {"<bos>", 3}, {"<unk>", 2}, {"<start_of_turn>", 3}, {"<end_of_turn>", 3}},
        {"\xE2\x96\x81"
         "the",
         "\xE2\x96\x81"
         "cat",
         "user", "model", "\n", "\xE2\x96\x81"});
    const int nVocab = static_cast<int>(vocab.tokens.size());
    GgufWriter w;
    w.set("general.architecture", "gemma3");
    w.set("general.name", "tiny-gemma3-test");
    w.set("gemma3.block_count", static_cast<uint32_t>(s.nLayers));
    w.set("gemma3.context_length", static_cast<uint32_t>(s.context));
    w.set("gemma3.embedding_length", static_cast<uint32_t>(s.nEmbd));
    w.set("gemma3.feed_forward_length", static_cast<uint32_t>(s.nFf));
    w.set("gemma3.attention.head_count", static_cast<uint32_t>(s.nHeads));
    w.set("gemma3.attention.head_count_kv", static_cast<uint32_t>(s.nKvHeads));
    w.set("gemma3.attention.key_length", static_cast<uint32_t>(s.headDim));
    w.set("gemma3.attention.value_length", static_cast<uint32_t>(s.headDim));
    w.set("gemma3.attention.layer_norm_rms_epsilon", 1e-6f);
    w.set("gemma3.rope.freq_base", 1000000.0f);
    w.set("gemma3.attention.sliding_window", static_cast<uint32_t>(s.slidingWindow));
    if (s.slidingPattern >= 0)
        w.set("gemma3.attention.sliding_window_pattern", static_cast<uint32_t>(s.slidingPattern));
    w.set("tokenizer.ggml.model", "llama");
    w.set("tokenizer.ggml.tokens", vocab.tokens);
    w.set("tokenizer.ggml.scores", vocab.scores);
    w.set("tokenizer.ggml.token_type", vocab.types);
    w.set("tokenizer.ggml.bos_token_id", uint32_t{2});
    w.set("tokenizer.ggml.eos_token_id", uint32_t{1});
    w.set("tokenizer.ggml.unknown_token_id", uint32_t{3});
    w.set("tokenizer.ggml.padding_token_id", uint32_t{0});
    w.set("tokenizer.ggml.add_bos_token", true);
    w.set("tokenizer.ggml.add_space_prefix", false);
    std::mt19937 rng(s.seed);
    const int64_t qDim = int64_t{s.nHeads} * s.headDim, kvDim = int64_t{s.nKvHeads} * s.headDim;
    w.addTensor("token_embd.weight", {s.nEmbd, nVocab}, s.weightType,
                tinyTensorBytes(s.weightType, s.nEmbd, nVocab, rng, 0.2f));
    w.addTensor("output_norm.weight", {s.nEmbd}, DType::F32, tinyNormWeights(s.nEmbd, rng));
    for (int il = 0; il < s.nLayers; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        const auto add = [&](const char* n, int64_t cols, int64_t rows) {
            w.addTensor(p + n, {cols, rows}, s.weightType, tinyTensorBytes(s.weightType, cols, rows, rng, 0.2f));
        };
        const auto norm = [&](const char* n, int64_t size) {
            w.addTensor(p + n, {size}, DType::F32, tinyNormWeights(size, rng));
        };
        norm("attn_norm.weight", s.nEmbd);
        norm("attn_q_norm.weight", s.headDim);
        norm("attn_k_norm.weight", s.headDim);
        norm("post_attention_norm.weight", s.nEmbd);
        norm("ffn_norm.weight", s.nEmbd);
        norm("post_ffw_norm.weight", s.nEmbd);
        add("attn_q.weight", s.nEmbd, qDim);
        add("attn_k.weight", s.nEmbd, kvDim);
        add("attn_v.weight", s.nEmbd, kvDim);
        add("attn_output.weight", qDim, s.nEmbd);
        add("ffn_gate.weight", s.nEmbd, s.nFf);
        add("ffn_up.weight", s.nEmbd, s.nFf);
        add("ffn_down.weight", s.nFf, s.nEmbd);
    }
    return w;
}

}  // namespace hearth::test

// Writes tiny random-weight Llama GGUF files with Hearth's own GGUF writer: a SentencePiece
// vocabulary of byte pieces plus a few words, F32 or Q8_0 weights from a seeded generator.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "engine/model/gguf_writer.h"
#include "kernels/cpu/reference/quants.h"

namespace hearth::test {

struct TinyLlamaShape {
    int nLayers = 2, nEmbd = 64, nHeads = 4, nKvHeads = 2, nFf = 96, context = 256;
    DType weightType = DType::F32;  // F32 or Q8_0 (nEmbd and nFf multiples of 32)
    uint32_t seed = 1;
};

inline std::vector<uint8_t> tinyTensorBytes(DType type, int64_t nCols, int64_t nRows, std::mt19937& rng, float scale) {
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> values(static_cast<size_t>(nCols * nRows));
    for (float& v : values) v = normal(rng);
    std::vector<uint8_t> bytes(rowBytes(type, nCols) * static_cast<size_t>(nRows));
    for (int64_t r = 0; r < nRows; ++r)
        ref::quantizeRow(type, values.data() + r * nCols, bytes.data() + static_cast<size_t>(r) * rowBytes(type, nCols),
                         nCols);
    return bytes;
}

inline std::vector<uint8_t> f32Bytes(const std::vector<float>& values) {
    const auto* p = reinterpret_cast<const uint8_t*>(values.data());
    return std::vector<uint8_t>(p, p + values.size() * sizeof(float));
}

inline std::vector<uint8_t> onesF32(int64_t n) { return f32Bytes(std::vector<float>(static_cast<size_t>(n), 1.0f)); }

// A SentencePiece vocabulary: the given special pieces, the 256 byte pieces, then the words
// (NORMAL, scored in decreasing order so that earlier words merge first).
struct TinyVocab {
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    std::vector<float> scores;
};

inline TinyVocab tinySpmVocab(const std::vector<std::pair<std::string, int32_t>>& specials,
                              std::initializer_list<const char*> words) {
    TinyVocab v;
    for (const auto& [text, type] : specials) {
        v.tokens.push_back(text);
        v.types.push_back(type);
    }
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        v.tokens.emplace_back(name);
        v.types.push_back(6);
    }
    const size_t firstWord = v.tokens.size();
    for (const char* w : words) {
        v.tokens.emplace_back(w);
        v.types.push_back(1);
    }
    v.scores.assign(v.tokens.size(), 0.0f);
    for (size_t i = firstWord; i < v.tokens.size(); ++i) v.scores[i] = -static_cast<float>(i - firstWord);
    return v;
}

// The general.*, <arch>.* and SentencePiece-vocabulary keys of a test Llama of shape s (any
// struct with nLayers, context, nEmbd, nFf, nHeads, nKvHeads): <unk> 0, <s> 1, </s> 2. arch:
// general.architecture and the keys' prefix ("llama", or "qwen2" for the same pass with biases).
template <class Shape>
inline void setLlamaKeys(GgufWriter& w, const char* name, const Shape& s, const TinyVocab& vocab,
                         const std::string& arch = "llama") {
    w.set("general.architecture", arch);
    w.set("general.name", name);
    w.set(arch + ".block_count", static_cast<uint32_t>(s.nLayers));
    w.set(arch + ".context_length", static_cast<uint32_t>(s.context));
    w.set(arch + ".embedding_length", static_cast<uint32_t>(s.nEmbd));
    w.set(arch + ".feed_forward_length", static_cast<uint32_t>(s.nFf));
    w.set(arch + ".attention.head_count", static_cast<uint32_t>(s.nHeads));
    w.set(arch + ".attention.head_count_kv", static_cast<uint32_t>(s.nKvHeads));
    w.set(arch + ".attention.layer_norm_rms_epsilon", 1e-5f);
    w.set(arch + ".rope.freq_base", 10000.0f);
    w.set("tokenizer.ggml.model", "llama");
    w.set("tokenizer.ggml.tokens", vocab.tokens);
    w.set("tokenizer.ggml.scores", vocab.scores);
    w.set("tokenizer.ggml.token_type", vocab.types);
    w.set("tokenizer.ggml.bos_token_id", uint32_t{1});
    w.set("tokenizer.ggml.eos_token_id", uint32_t{2});
    w.set("tokenizer.ggml.unknown_token_id", uint32_t{0});
}

inline GgufWriter tinyLlama(const TinyLlamaShape& s = {}) {
    const TinyVocab vocab = tinySpmVocab({{"<unk>", 2}, {"<s>", 3}, {"</s>", 3}},
                                         {"\xE2\x96\x81"
                                          "the",
                                          "\xE2\x96\x81"
                                          "a",
                                          "\xE2\x96\x81"
                                          "cat",
                                          "at", "\xE2\x96\x81"});
    const int nVocab = static_cast<int>(vocab.tokens.size());
    GgufWriter w;
    setLlamaKeys(w, "tiny-llama-test", s, vocab);
    std::mt19937 rng(s.seed);
    const int64_t qDim = int64_t{s.nEmbd}, kvDim = int64_t{s.nEmbd} / s.nHeads * s.nKvHeads;
    w.addTensor("token_embd.weight", {s.nEmbd, nVocab}, s.weightType,
                tinyTensorBytes(s.weightType, s.nEmbd, nVocab, rng, 1.0f));
    w.addTensor("output_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
    for (int il = 0; il < s.nLayers; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        const auto add = [&](const char* n, int64_t cols, int64_t rows) {
            w.addTensor(p + n, {cols, rows}, s.weightType, tinyTensorBytes(s.weightType, cols, rows, rng, 0.2f));
        };
        w.addTensor(p + "attn_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
        w.addTensor(p + "ffn_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
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

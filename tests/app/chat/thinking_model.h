// A test model that thinks: a Llama-shaped GGUF with Qwen 3's chat template (the hybrid one, with
// enable_thinking) whose every reply is kThinkingReply, reasoning first, then </s>.
#pragma once

#include <string>
#include <vector>

#include "tests/support/tiny_llama.h"

namespace hearth::test {

// The parts of Qwen 3's template that ChatFormat::detect reads (tests/engine/tokenizer/test_chat_format.cpp).
inline const std::string kQwen3Template =
    "{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}"
    "{%- if '</think>' in content %}{%- endif %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}";

inline const char* const kThinkingReply = "<think>\nWeighing the options.\n</think>\n\nThe answer is 42.";
inline const char* const kThinkingReasoning = "Weighing the options.";
inline const char* const kThinkingAnswer = "The answer is 42.";

// One-hot embeddings and zero attention and feed-forward weights leave each position's hidden
// state its own token's, so the output head is a table of next tokens: any token outside the
// reply leads to its first piece, each piece to the next, the last to </s>. No sampling setting
// changes the reply (each step's winner leads the rest by sqrt(nEmbd) * 4 logits).
inline GgufWriter thinkingModel() {
    const std::vector<const char*> pieces = {"<think>",
                                             "\nWeighing",
                                             "\xE2\x96\x81the",
                                             "\xE2\x96\x81options.",
                                             "\n</think>",
                                             "\n\nThe",
                                             "\xE2\x96\x81"
                                             "answer",
                                             "\xE2\x96\x81is",
                                             "\xE2\x96\x81"
                                             "42."};
    TinyVocab vocab = tinySpmVocab({{"<unk>", 2}, {"<s>", 3}, {"</s>", 3}}, {});
    const int firstPiece = static_cast<int>(vocab.tokens.size());
    for (const char* p : pieces) {
        vocab.tokens.emplace_back(p);
        vocab.types.push_back(1);
        vocab.scores.push_back(-1000.0f);  // never chosen when the prompt is tokenized
    }
    const int nVocab = static_cast<int>(vocab.tokens.size());
    TinyLlamaShape s;
    s.nLayers = 1, s.nEmbd = 288, s.nHeads = 4, s.nKvHeads = 2, s.nFf = 32, s.context = 512;
    GgufWriter w;
    setLlamaKeys(w, "thinking-test", s, vocab);
    w.set("tokenizer.chat_template", kQwen3Template);
    const auto next = [&](int t) {
        if (t < firstPiece) return firstPiece;
        return t + 1 < nVocab ? t + 1 : 2;  // </s>
    };
    std::vector<float> embd(static_cast<size_t>(s.nEmbd) * nVocab, 0.0f), out(embd.size(), 0.0f);
    for (int t = 0; t < nVocab; ++t) {
        embd[static_cast<size_t>(t) * s.nEmbd + t] = 1.0f;
        out[static_cast<size_t>(next(t)) * s.nEmbd + t] = 4.0f;
    }
    w.addTensor("token_embd.weight", {s.nEmbd, nVocab}, DType::F32, f32Bytes(embd));
    w.addTensor("output.weight", {s.nEmbd, nVocab}, DType::F32, f32Bytes(out));
    w.addTensor("output_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
    const int64_t kvDim = int64_t{s.nEmbd} / s.nHeads * s.nKvHeads;
    const auto zeros = [&](const std::string& name, int64_t cols, int64_t rows) {
        w.addTensor(name, {cols, rows}, DType::F32,
                    std::vector<uint8_t>(static_cast<size_t>(cols * rows) * sizeof(float), 0));
    };
    w.addTensor("blk.0.attn_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
    w.addTensor("blk.0.ffn_norm.weight", {s.nEmbd}, DType::F32, onesF32(s.nEmbd));
    zeros("blk.0.attn_q.weight", s.nEmbd, s.nEmbd);
    zeros("blk.0.attn_k.weight", s.nEmbd, kvDim);
    zeros("blk.0.attn_v.weight", s.nEmbd, kvDim);
    zeros("blk.0.attn_output.weight", s.nEmbd, s.nEmbd);
    zeros("blk.0.ffn_gate.weight", s.nEmbd, s.nFf);
    zeros("blk.0.ffn_up.weight", s.nEmbd, s.nFf);
    zeros("blk.0.ffn_down.weight", s.nFf, s.nEmbd);
    return w;
}

}  // namespace hearth::test

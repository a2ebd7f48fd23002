// Writes the fuzz targets' starting inputs with Hearth's own GGUF writer (and, for kv_import
// and store, its engine and store encodings: seeds_kv_store.cpp), each at most 4 KB:
// make_seeds OUT_DIR replaces OUT_DIR with OUT_DIR/<target>/<seed>. A seed over the limit is an
// error, so the seeds stay small enough for libFuzzer to mutate quickly.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/model/gguf_writer.h"
#include "fuzz/seeds_kv_store.h"

namespace {

using hearth::DType;
using hearth::GgufWriter;
using Bytes = std::vector<uint8_t>;

constexpr size_t kMaxSeedBytes = 4096;

Bytes pattern(size_t n, uint8_t salt) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 37 + salt);
    return b;
}

Bytes f32s(size_t n, float value) {
    std::vector<float> v(n, value);
    const auto* p = reinterpret_cast<const uint8_t*>(v.data());
    return Bytes(p, p + n * sizeof(float));
}

// A whole Llama model small enough to be a seed: 1 layer, nEmbd 8, 2 heads (1 KV head), a
// vocabulary of 12 pieces. Model::load accepts it.
Bytes tinyLlama() {
    const int nEmbd = 8, nFf = 8, kvDim = 4;
    const std::vector<std::string> tokens = {"<unk>",
                                             "<s>",
                                             "</s>",
                                             "<0x0A>",
                                             "<0x20>",
                                             "\xE2\x96\x81",
                                             "a",
                                             "b",
                                             "\xE2\x96\x81"
                                             "a",
                                             "ab",
                                             "<|im_end|>",
                                             "c"};
    const std::vector<int32_t> types = {2, 3, 3, 6, 6, 1, 1, 1, 1, 1, 3, 1};
    GgufWriter w;
    w.set("general.architecture", "llama");
    w.set("llama.block_count", uint32_t{1});
    w.set("llama.context_length", uint32_t{64});
    w.set("llama.embedding_length", uint32_t{nEmbd});
    w.set("llama.feed_forward_length", uint32_t{nFf});
    w.set("llama.attention.head_count", uint32_t{2});
    w.set("llama.attention.head_count_kv", uint32_t{1});
    w.set("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    w.set("tokenizer.ggml.model", "llama");
    w.set("tokenizer.ggml.tokens", tokens);
    w.set("tokenizer.ggml.token_type", types);
    w.set("tokenizer.ggml.bos_token_id", uint32_t{1});
    const int64_t nVocab = static_cast<int64_t>(tokens.size());
    w.addTensor("token_embd.weight", {nEmbd, nVocab}, DType::F16, pattern(2 * nEmbd * nVocab, 1));
    w.addTensor("output_norm.weight", {nEmbd}, DType::F32, f32s(nEmbd, 1.0f));
    w.addTensor("blk.0.attn_norm.weight", {nEmbd}, DType::F32, f32s(nEmbd, 1.0f));
    w.addTensor("blk.0.ffn_norm.weight", {nEmbd}, DType::F32, f32s(nEmbd, 1.0f));
    const auto f16 = [&](const char* name, int64_t cols, int64_t rows) {
        w.addTensor(name, {cols, rows}, DType::F16, pattern(static_cast<size_t>(2 * cols * rows), 7));
    };
    f16("blk.0.attn_q.weight", nEmbd, nEmbd);
    f16("blk.0.attn_k.weight", nEmbd, kvDim);
    f16("blk.0.attn_v.weight", nEmbd, kvDim);
    f16("blk.0.attn_output.weight", nEmbd, nEmbd);
    f16("blk.0.ffn_gate.weight", nEmbd, nFf);
    f16("blk.0.ffn_up.weight", nEmbd, nFf);
    f16("blk.0.ffn_down.weight", nFf, nEmbd);
    return w.toBytes().bytes;
}

// A Gemma 3 model as small: 1 layer (a sliding-window one), head_dim 4.
Bytes tinyGemma3() {
    const int nEmbd = 8, nFf = 8, headDim = 4, qDim = 8, kvDim = 4;
    const std::vector<std::string> tokens = {
        "<pad>", "<eos>", "<bos>",        "<unk>", "<start_of_turn>", "<end_of_turn>", "\n",
        "a",     "b",     "\xE2\x96\x81", "ab",    "<0x0A>"};
    const std::vector<int32_t> types = {3, 3, 3, 2, 3, 3, 1, 1, 1, 1, 1, 6};
    GgufWriter w;
    w.set("general.architecture", "gemma3");
    w.set("gemma3.block_count", uint32_t{1});
    w.set("gemma3.context_length", uint32_t{64});
    w.set("gemma3.embedding_length", uint32_t{nEmbd});
    w.set("gemma3.feed_forward_length", uint32_t{nFf});
    w.set("gemma3.attention.head_count", uint32_t{2});
    w.set("gemma3.attention.head_count_kv", uint32_t{1});
    w.set("gemma3.attention.key_length", uint32_t{headDim});
    w.set("gemma3.attention.value_length", uint32_t{headDim});
    w.set("gemma3.attention.layer_norm_rms_epsilon", 1e-6f);
    w.set("gemma3.attention.sliding_window", uint32_t{4});
    w.set("gemma3.attention.sliding_window_pattern", uint32_t{2});
    w.set("tokenizer.ggml.model", "llama");
    w.set("tokenizer.ggml.tokens", tokens);
    w.set("tokenizer.ggml.token_type", types);
    w.set("tokenizer.ggml.add_space_prefix", false);
    const int64_t nVocab = static_cast<int64_t>(tokens.size());
    w.addTensor("token_embd.weight", {nEmbd, nVocab}, DType::F16, pattern(2 * nEmbd * nVocab, 1));
    w.addTensor("output_norm.weight", {nEmbd}, DType::F32, f32s(nEmbd, 0.5f));
    for (int il = 0; il < 1; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        const auto norm = [&](const char* n, int64_t size) {
            w.addTensor(p + n, {size}, DType::F32, f32s(size, 0.5f));
        };
        const auto f16 = [&](const char* n, int64_t cols, int64_t rows) {
            w.addTensor(p + n, {cols, rows}, DType::F16, pattern(static_cast<size_t>(2 * cols * rows), 9));
        };
        norm("attn_norm.weight", nEmbd);
        norm("attn_q_norm.weight", headDim);
        norm("attn_k_norm.weight", headDim);
        norm("post_attention_norm.weight", nEmbd);
        norm("ffn_norm.weight", nEmbd);
        norm("post_ffw_norm.weight", nEmbd);
        f16("attn_q.weight", nEmbd, qDim);
        f16("attn_k.weight", nEmbd, kvDim);
        f16("attn_v.weight", nEmbd, kvDim);
        f16("attn_output.weight", qDim, nEmbd);
        f16("ffn_gate.weight", nEmbd, nFf);
        f16("ffn_up.weight", nEmbd, nFf);
        f16("ffn_down.weight", nFf, nEmbd);
    }
    return w.toBytes().bytes;
}

// Every metadata value type, a nested array, a non-default alignment, and tensors of the
// block types the reader sizes (F32, F16, BF16, Q4_0, Q8_0, Q4_K).
Bytes everyType(uint32_t version) {
    GgufWriter w;
    w.setVersion(version);
    w.set("general.alignment", uint32_t{64});
    w.set("general.architecture", "llama");
    w.set("t.u8", uint8_t{200});
    w.set("t.i8", int8_t{-100});
    w.set("t.u16", uint16_t{60000});
    w.set("t.i16", int16_t{-30000});
    w.set("t.u32", uint32_t{4000000000u});
    w.set("t.i32", int32_t{-2000000000});
    w.set("t.u64", uint64_t{1} << 40);
    w.set("t.i64", -(int64_t{1} << 40));
    w.set("t.f32", 0.5f);
    w.set("t.f64", 0.25);
    w.set("t.bool", true);
    w.set("t.str", "text \xC3\xA9");
    w.set("t.nested", std::vector<std::vector<int32_t>>{{1, 2}, {}, {3}});
    w.set("t.strings", std::vector<std::string>{"a", "", "bc"});
    w.addTensor("f32", {4}, DType::F32, f32s(4, 2.0f));
    w.addTensor("f16", {8, 2}, DType::F16, pattern(32, 3));
    w.addTensor("bf16", {4}, DType::BF16, pattern(8, 4));
    w.addTensor("q4_0", {32}, DType::Q4_0, pattern(18, 5));
    w.addTensor("q8_0", {32, 2}, DType::Q8_0, pattern(68, 6));
    w.addTensor("q4_k", {256}, DType::Q4_K, pattern(144, 7));
    return w.toBytes().bytes;
}

Bytes withText(GgufWriter& w, const std::string& text) {
    Bytes bytes = w.toBytes().bytes;  // no tensors: the data section is where the text starts
    bytes.insert(bytes.end(), text.begin(), text.end());
    return bytes;
}

const std::string kText =
    "Hello world, the cat!\n\n<|im_start|>user\nab c  \t na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC 12345 "
    "<|im_end|></s>\xFF\xFE\xC3";

// A SentencePiece ("llama") vocabulary: specials, byte pieces for ASCII, a few words.
Bytes spmVocab() {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "\n\n"};
    std::vector<int32_t> types = {2, 3, 3, 3, 3, 4};
    for (int b = 0x09; b < 0x80; ++b) {
        if (b > 0x0A && b < 0x20) continue;
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        tokens.emplace_back(name);
        types.push_back(6);
    }
    for (const char* word : {"\xE2\x96\x81", "\xE2\x96\x81the",
                             "\xE2\x96\x81"
                             "cat",
                             "he", "at", "ll", "o"}) {
        tokens.emplace_back(word);
        types.push_back(1);
    }
    std::vector<float> scores(tokens.size());
    for (size_t i = 0; i < scores.size(); ++i) scores[i] = -static_cast<float>(i);
    GgufWriter w;
    w.set("tokenizer.ggml.model", "llama");
    w.set("tokenizer.ggml.tokens", tokens);
    w.set("tokenizer.ggml.scores", scores);
    w.set("tokenizer.ggml.token_type", types);
    w.set("tokenizer.ggml.bos_token_id", uint32_t{1});
    w.set("tokenizer.ggml.eos_token_id", uint32_t{2});
    w.set("tokenizer.ggml.unknown_token_id", uint32_t{0});
    w.set("tokenizer.ggml.add_space_prefix", true);
    return withText(w, kText);
}

// A byte-level BPE ("gpt2") vocabulary: the printable ASCII part of the GPT-2 byte alphabet,
// its space (U+0120) and newline (U+010A), merges, and control pieces.
Bytes bpeVocab(const char* pre) {
    std::vector<std::string> tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "\xC4\xA0", "\xC4\x8A"};
    std::vector<int32_t> types = {3, 3, 3, 1, 1};
    for (int b = 0x21; b < 0x7F; ++b) {
        tokens.emplace_back(1, static_cast<char>(b));
        types.push_back(1);
    }
    for (const char* merged : {"\xC4\xA0t", "he", "\xC4\xA0the", "at",
                               "\xC4\xA0"
                               "c",
                               "\xC4\xA0"
                               "cat"}) {
        tokens.emplace_back(merged);
        types.push_back(1);
    }
    GgufWriter w;
    w.set("tokenizer.ggml.model", "gpt2");
    w.set("tokenizer.ggml.pre", pre);
    w.set("tokenizer.ggml.tokens", tokens);
    w.set("tokenizer.ggml.token_type", types);
    w.set("tokenizer.ggml.merges",
          std::vector<std::string>{"\xC4\xA0 t", "h e", "\xC4\xA0t he", "a t", "\xC4\xA0 c",
                                   "\xC4\xA0"
                                   "c at"});
    w.set("tokenizer.ggml.eos_token_id", uint32_t{0});
    w.set("tokenizer.ggml.add_bos_token", false);
    return withText(w, kText);
}

// A chat-template input: the architecture byte (fuzz_chat_template.cpp), then the template.
Bytes templateInput(uint8_t arch, std::string_view tmpl) {
    Bytes b{arch};
    b.insert(b.end(), tmpl.begin(), tmpl.end());
    return b;
}

// SmolLM2-135M-Instruct's template (as stored in its GGUF), after the architecture byte.
const char* const kSmolTemplate =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

bool writeSeed(const std::filesystem::path& dir, const std::string& name, const Bytes& bytes) {
    if (bytes.size() > kMaxSeedBytes) {
        std::fprintf(stderr, "make_seeds: %s/%s is %zu bytes, over the %zu-byte limit\n", dir.filename().c_str(),
                     name.c_str(), bytes.size(), kMaxSeedBytes);
        return false;
    }
    std::filesystem::create_directories(dir);
    std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_seeds OUT_DIR\n");
        return 2;
    }
    const std::filesystem::path root = argv[1];
    GgufWriter empty;
    const std::vector<std::pair<std::string, std::pair<std::string, Bytes>>> seeds = {
        {"gguf", {"tiny_llama.gguf", tinyLlama()}},
        {"gguf", {"tiny_gemma3.gguf", tinyGemma3()}},
        {"gguf", {"every_type_v3.gguf", everyType(3)}},
        {"gguf", {"every_type_v2.gguf", everyType(2)}},
        {"gguf", {"empty.gguf", empty.toBytes().bytes}},
        {"tokenizer", {"spm.bin", spmVocab()}},
        {"tokenizer", {"bpe_smollm.bin", bpeVocab("smollm")}},
        {"tokenizer", {"bpe_gpt2.bin", bpeVocab("gpt-2")}},
        {"tokenizer", {"bpe_default.bin", bpeVocab("default")}},
        {"tokenizer", {"bpe_llama3.bin", bpeVocab("llama-bpe")}},
        {"tokenizer", {"bpe_qwen2.bin", bpeVocab("qwen2")}},
        {"tokenizer", {"bpe_qwen35.bin", bpeVocab("qwen35")}},
        {"chat_template", {"chatml.txt", templateInput(0, kSmolTemplate)}},
        {"chat_template",
         {"gemma.txt",
          templateInput(1,
                        "{{ bos_token }}{% for m in messages %}<start_of_turn>"
                        "{{ m['role'] }}\n{{ m['content'] | trim }}<end_of_turn>\n{% endfor %}")}},
        {"chat_template", {"gemma_no_template.txt", templateInput(1, "")}},
        {"chat_template",
         {"llama2.txt", templateInput(0, "{{ bos_token + '[INST] <<SYS>>\\n' + content + ' [/INST]' }}")}},
        {"chat_template", {"plain.txt", templateInput(3, "{{ messages }}")}},
    };
    std::filesystem::remove_all(root);  // only these seeds: nothing a fuzzer run left there
    bool ok = true;
    for (const auto& [target, seed] : seeds) ok = writeSeed(root / target, seed.first, seed.second) && ok;
    for (const auto& [target, list] : hearth::fuzz::kvAndStoreSeeds())
        for (const hearth::fuzz::Seed& seed : list) ok = writeSeed(root / target, seed.name, seed.bytes) && ok;
    return ok ? 0 : 1;
}

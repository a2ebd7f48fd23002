// Pre-tokenizers of byte-level BPE vocabularies: text -> the pieces BPE runs on, chosen by
// tokenizer.ggml.pre with llama.cpp's names and the settings llama.cpp ties to each name; every
// regex is implemented by hand over code points (no regex library has the Unicode classes here).
#pragma once

#include <string_view>
#include <vector>

#include "engine/error.h"

namespace hearth {

// One per regex list of llama.cpp's llama_vocab_pre_type that Hearth implements. A list is
// applied in order, each regex within the pieces the previous one made; text a regex does not
// match stays a piece of its own.
enum class PreTokenizerKind {
    // "[\p{P}\$\+<=>\^~\|]+", then Gpt2, then "\p{N}+", then "[0-9][0-9][0-9]": llama.cpp's split
    // when the name is "default" or absent. Punctuation is broken off before contractions, so
    // "We'd've" is We ' d ' ve.
    Default,
    Gpt2,  // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    SmolLM,  // "\p{N}" (every number code point alone), then Gpt2
    // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
    // \s*[\r\n]+|\s+(?!\S)|\s+   (case-insensitive contractions, digits in threes)
    Llama3,
    Qwen2,  // Llama3 with \p{N} for \p{N}{1,3}: every digit alone
    Qwen35,  // Qwen2 with [\p{L}\p{M}]+ for \p{L}+ and [^\s\p{L}\p{M}\p{N}] for [^\s\p{L}\p{N}]
};

// What a tokenizer.ggml.pre name sets, as llama.cpp's vocabulary loader sets it.
struct PreTokenizer {
    PreTokenizerKind kind = PreTokenizerKind::Default;
    // A pre-token that is itself a token of the vocabulary becomes that token without merges
    // (llama.cpp's ignore_merges; Hugging Face BPE's ignore_merges in Llama 3's tokenizer.json).
    bool ignoreMerges = false;
    bool addBos = false;  // BOS when tokenizer.ggml.add_bos_token is absent
};

// llama.cpp's names: "default" and "" (no key) -> Default; "gpt-2" -> Gpt2; "smollm" -> SmolLM;
// "llama-bpe" -> Llama3 with ignoreMerges and addBos; "qwen2" and "deepseek-r1-qwen" -> Qwen2
// (one pre-type in llama.cpp); "qwen35" -> Qwen35.
// Errors: Unsupported naming the pre-tokenizer and listing the supported names, for any other
// name (a wrong pre-tokenizer silently changes token ids). That includes "gpt2": llama.cpp's
// name is "gpt-2" and it refuses "gpt2".
Result<PreTokenizer> preTokenizerFromName(std::string_view name);

// Appends text's pieces, in order, as views into text; together they cover it exactly.
// Invalid UTF-8 bytes are kept (as code points of the "other" class) so that no byte is lost;
// llama.cpp writes U+FFFD for each instead, so ids differ from its ids only on invalid input.
void preTokenize(PreTokenizerKind kind, std::string_view text, std::vector<std::string_view>& out);

}  // namespace hearth

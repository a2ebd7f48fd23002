// Pre-tokenizers of byte-level BPE vocabularies: text -> the pieces BPE runs on, by the regex of
// tokenizer.ggml.pre, implemented by hand over code points (no regex library has the Unicode
// classes here).
#pragma once

#include <string_view>
#include <vector>

#include "engine/error.h"

namespace hearth {

enum class PreTokenizerKind {
    Gpt2,    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    SmolLM,  // every \p{N} code point on its own first, then Gpt2 on the rest
};

// "gpt2", "default" and "" (a file older than the key) -> Gpt2; "smollm" -> SmolLM.
// Errors: Unsupported for any other name (a wrong pre-tokenizer silently changes token ids).
Result<PreTokenizerKind> preTokenizerFromName(std::string_view name);

// Appends text's pieces, in order, as views into text; together they cover it exactly.
// Invalid UTF-8 bytes are kept (as pieces of the "other" class) so that no byte is lost.
void preTokenize(PreTokenizerKind kind, std::string_view text, std::vector<std::string_view>& out);

}  // namespace hearth

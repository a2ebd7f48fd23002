// The vocabulary as the GGUF's tokenizer.* keys describe it, read into plain values, so that
// tokenizers can also be built without a file (tests, tools). Keys: ../shared/GGUF.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/error.h"

namespace hearth {

class GgufFile;

// tokenizer.ggml.token_type values (llama.cpp's llama_token_type; 0 "undefined" reads as normal).
namespace token_type {
inline constexpr int32_t kNormal = 1;
inline constexpr int32_t kUnknown = 2;
inline constexpr int32_t kControl = 3;
inline constexpr int32_t kUserDefined = 4;
inline constexpr int32_t kUnused = 5;
inline constexpr int32_t kByte = 6;
}  // namespace token_type

struct VocabSpec {
    std::string model;  // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2"
    std::string pre;  // tokenizer.ggml.pre; "" when absent
    std::vector<std::string> tokens;  // raw piece text, as stored
    std::vector<float> scores;  // empty (all 0), or one per token
    std::vector<int32_t> tokenTypes;  // empty (all normal), or one per token, 1..6
    std::vector<std::string> merges;  // gpt2: "left right", in rank order
    // Special ids; -1 when the key is absent, negative, or out of range (4294967295 = none).
    int64_t bosId = -1, eosId = -1, eotId = -1, unknownId = -1;
    std::optional<bool> addBos;  // tokenizer.ggml.add_bos_token
    std::optional<bool> addSpacePrefix;  // tokenizer.ggml.add_space_prefix
    // Phi-3's special pieces swallow the whitespace after them (rstrip in its Hugging Face
    // tokenizer config, which GGUF does not carry). llama.cpp decides it by general.name
    // containing "phi-3" or "phi3"; Hearth also by general.architecture phi3.
    bool rightStripSpecials = false;
};

// Reads tokenizer.* from a GGUF. Errors: InvalidFormat naming the key (missing tokens, an
// array of the wrong type or length, a token type outside 0..6).
Result<VocabSpec> readVocabSpec(const GgufFile& file);

}  // namespace hearth

// Byte-level BPE vocabularies (tokenizer.ggml.model "gpt2": SmolLM2, Llama 3, Qwen): the GPT-2
// byte alphabet, merges by rank, and the pre-tokenizer tokenizer.ggml.pre names.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>

#include "engine/tokenizer/pretokenizer.h"
#include "engine/tokenizer/tokenizer.h"

namespace hearth {

class BpeTokenizer final : public Tokenizer {
public:
    // Errors: Unsupported (pre-tokenizer), InvalidFormat (a merge without a space).
    // Takes vocab.tokens over (see Tokenizer::initCommon).
    static Result<std::unique_ptr<Tokenizer>> create(VocabSpec& vocab);

    VocabKind kind() const override { return VocabKind::BytePairGpt2; }
    std::string tokenBytes(TokenId id, bool renderSpecial = false) const override;

private:
    BpeTokenizer() = default;
    Result<void> buildMerges(const std::vector<std::string>& merges);
    void appendTextTokens(std::string_view text, std::vector<TokenId>& out) const override;
    // BPE of one pre-token: its bytes as alphabet symbols, merged lowest rank first (or the
    // pre-token's own token, when the pre-tokenizer ignores merges and there is one).
    void appendWordTokens(std::string_view word, std::vector<TokenId>& out) const;

    struct Merge {
        int32_t rank;
        TokenId result;
    };
    static uint64_t pairKey(TokenId left, TokenId right) {
        return (uint64_t{static_cast<uint32_t>(left)} << 32) | static_cast<uint32_t>(right);
    }

    PreTokenizer pre_;
    std::array<TokenId, 256> byteTokens_{};  // id of each byte's one-symbol token, -1 if none
    std::unordered_map<uint64_t, Merge> merges_;  // pairKey(left, right) -> rank and result
};

}  // namespace hearth

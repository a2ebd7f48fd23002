// SentencePiece vocabularies (tokenizer.ggml.model "llama": Llama 2, TinyLlama, Mistral, Gemma):
// encoding through the SentencePiece library, decoding from the piece table.
#pragma once

#include <memory>

#include "engine/tokenizer/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace hearth {

class SpmTokenizer final : public Tokenizer {
public:
    // Errors: InvalidFormat (malformed byte pieces, a model SentencePiece refuses).
    // Takes vocab.tokens over (see Tokenizer::initCommon).
    static Result<std::unique_ptr<Tokenizer>> create(VocabSpec& vocab);
    ~SpmTokenizer() override;

    VocabKind kind() const override { return VocabKind::SentencePiece; }
    std::string tokenBytes(TokenId id, bool renderSpecial = false) const override;

private:
    SpmTokenizer();
    void appendTextTokens(std::string_view text, std::vector<TokenId>& out) const override;
    void appendBytes(std::string_view text, std::vector<TokenId>& out) const;

    std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
    std::vector<TokenId> byteTokens_;  // [256] id of <0xXX>, -1 when the vocabulary lacks it
};

}  // namespace hearth

// Text <-> token ids for a model's vocabulary, built from the GGUF metadata.
// "llama" vocabularies go through the SentencePiece library (a ModelProto built from the GGUF
// tokens/scores/types); "gpt2" vocabularies through Hearth's byte-level BPE.
// Thread-safety: immutable after construction; any thread may call the const methods.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/error.h"
#include "engine/tokenizer/piece_table.h"
#include "engine/tokenizer/vocab_spec.h"

namespace hearth {

class GgufFile;
class SpecialMatcher;

using TokenId = int32_t;

// Piece text -> id; the views point into the tokenizer's piece table, which never changes.
using PieceIndex = std::unordered_map<std::string_view, TokenId>;

// A piece of prompt text. Control tokens (<|im_start|>, <start_of_turn>, <s>, ...) are parsed
// out of a segment only when allowSpecial is true: the chat format's own text has it, what the
// user typed never does. User-defined pieces (token type 4, e.g. Gemma's "\n\n" and "<table>")
// are split out of every segment, as llama.cpp and SentencePiece do. Adjacent segments are
// joined before tokenization (after special tokens are split out), exactly as if they were one
// string.
struct TextSegment {
    std::string text;
    bool allowSpecial = false;
};

enum class VocabKind { SentencePiece, BytePairGpt2 };

class Tokenizer {
public:
    // Errors: InvalidFormat (missing/inconsistent tokenizer.* keys, malformed pieces),
    // Unsupported (unknown tokenizer.ggml.model or pre-tokenizer).
    static Result<std::unique_ptr<Tokenizer>> fromGguf(const GgufFile& file);
    // The same from plain values (tests, tools). Same errors.
    static Result<std::unique_ptr<Tokenizer>> fromVocab(VocabSpec vocab);
    virtual ~Tokenizer();

    virtual VocabKind kind() const = 0;
    int32_t nVocab() const { return static_cast<int32_t>(pieces_.size()); }

    // Token ids of the segments; BOS first when addBos (and the vocabulary has a BOS).
    // Text between two special tokens is tokenized on its own, as llama.cpp does (for
    // SentencePiece vocabularies it therefore gets its own dummy-prefix space).
    std::vector<TokenId> encode(std::span<const TextSegment> segments, bool addBos) const;
    // Convenience: one segment.
    std::vector<TokenId> encode(std::string_view text, bool addBos, bool allowSpecial) const;

    // The bytes a token stands for when printed (byte tokens as their byte, the SentencePiece
    // space mark and the GPT-2 byte alphabet undone). Control tokens give "" unless
    // renderSpecial, then their text. Not necessarily whole UTF-8 characters. A leading space
    // is kept (whether to drop the dummy prefix is the caller's choice). Out-of-range ids: "".
    virtual std::string tokenBytes(TokenId id, bool renderSpecial = false) const = 0;
    // All tokens' bytes concatenated (control tokens skipped).
    std::string decode(std::span<const TokenId> ids) const;

    // Whether BOS is added to plain text: tokenizer.ggml.add_bos_token, else llama.cpp's default
    // for the vocabulary type (true for SentencePiece, false for GPT-2 BPE).
    bool addBosByDefault() const { return addBos_; }
    TokenId bos() const { return bos_; }  // -1 when none
    TokenId eos() const { return eos_; }  // -1 when none
    // tokenizer.ggml.eot_token_id; when absent, the first control piece of "<|eot_id|>",
    // "<|im_end|>", "<end_of_turn>" in the vocabulary (as llama.cpp guesses it); -1 when none.
    TokenId eot() const { return eot_; }
    // End of generation: EOS, EOT, or a control piece a chat format ends a turn with
    // ("<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|endoftext|>") when the vocabulary has it.
    bool isEndOfGeneration(TokenId id) const;
    bool isControl(TokenId id) const;
    int32_t tokenType(TokenId id) const;  // token_type::k*; 0 for out-of-range ids
    // Id of a piece given by its exact text (e.g. "<|im_end|>"), -1 when absent. When the
    // vocabulary holds a text twice, the last id wins (as in llama.cpp).
    TokenId findPiece(std::string_view text) const;
    // Throws std::out_of_range for an invalid id, as before the pieces moved into one buffer.
    std::string pieceText(TokenId id) const {
        if (!validId(id)) throw std::out_of_range("Tokenizer::pieceText: invalid id");
        return std::string(pieces_[static_cast<size_t>(id)]);
    }

protected:
    Tokenizer();
    // Fills the members below from the vocabulary (taking vocab.tokens over); kind-specific
    // defaults come from the caller.
    Result<void> initCommon(VocabSpec& vocab, bool addBosDefault);
    bool validId(TokenId id) const { return id >= 0 && id < nVocab(); }
    // Appends the ids of plain text (no special tokens in it).
    virtual void appendTextTokens(std::string_view text, std::vector<TokenId>& out) const = 0;

    PieceTable pieces_;  // raw GGUF token text, and the text -> id index
    std::vector<int32_t> tokenTypes_;  // GGUF token_type (0 read as normal)
    std::vector<TokenId> endOfGeneration_;
    std::unique_ptr<SpecialMatcher> specials_;
    TokenId bos_ = -1, eos_ = -1, eot_ = -1;
    bool addBos_ = false;
};

// Buffers streamed token bytes so that no UTF-8 character is ever split across two pieces.
// Invalid sequences are passed on as U+FFFD (one per maximal ill-formed subpart) rather than
// held forever.
class Utf8Stream {
public:
    std::string push(std::string_view bytes);  // the complete characters available so far
    std::string flush();  // what is left (incomplete tail as U+FFFD)
private:
    std::string pending_;
};

}  // namespace hearth

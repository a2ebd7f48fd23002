// Tokenizer: what SentencePiece and BPE vocabularies share — the piece table, special ids, the
// end-of-generation set, special-token splitting of segments — and the choice between the two.
#include "engine/tokenizer/tokenizer.h"

#include <algorithm>
#include <array>
#include <limits>

#include "engine/str_cat.h"
#include "engine/tokenizer/bpe_tokenizer.h"
#include "engine/tokenizer/special_split.h"
#include "engine/tokenizer/spm_tokenizer.h"

namespace hearth {
namespace {

// Pieces that end generation whatever the model's EOS, as llama.cpp decides them (checked
// against the oracle: Gemma 3's "</s>" is USER_DEFINED in the file, and llama.cpp makes it a
// control token that ends generation and is no longer split out of plain text).
constexpr std::array<std::string_view, 13> kEndOfTurnPieces = {
    "<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|endoftext|>", "<|eom_id|>", "<|end_of_text|>",
    "<|end|>",    "<|return|>",    "<|call|>",   "<EOT>",         "_<EOT>",     "<end_of_utterance>",
    "</s>"};
// Candidates for EOT when tokenizer.ggml.eot_token_id is absent, in order of preference.
constexpr std::array<std::string_view, 3> kEotCandidates = {"<|eot_id|>", "<|im_end|>", "<end_of_turn>"};

Result<void> checkShape(const VocabSpec& vocab) {
    if (vocab.tokens.empty()) return fail(ErrorCode::InvalidFormat, "tokenizer.ggml.tokens: empty vocabulary");
    if (vocab.tokens.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
        return fail(ErrorCode::InvalidFormat, "tokenizer.ggml.tokens: too many tokens");
    if (!vocab.scores.empty() && vocab.scores.size() != vocab.tokens.size())
        return fail(
            ErrorCode::InvalidFormat,
            strCat("tokenizer.ggml.scores: ", vocab.scores.size(), " scores for ", vocab.tokens.size(), " tokens"));
    if (!vocab.tokenTypes.empty() && vocab.tokenTypes.size() != vocab.tokens.size())
        return fail(ErrorCode::InvalidFormat,
                    strCat("tokenizer.ggml.token_type: ", vocab.tokenTypes.size(), " types for ", vocab.tokens.size(),
                           " tokens"));
    for (size_t i = 0; i < vocab.tokenTypes.size(); ++i)
        if (vocab.tokenTypes[i] < 0 || vocab.tokenTypes[i] > token_type::kByte)
            return fail(ErrorCode::InvalidFormat,
                        strCat("tokenizer.ggml.token_type[", i, "]: unknown type ", vocab.tokenTypes[i]));
    return {};
}

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

Result<std::unique_ptr<Tokenizer>> Tokenizer::fromVocab(VocabSpec vocab) {
    if (vocab.model == "llama") return SpmTokenizer::create(vocab);
    if (vocab.model == "gpt2") return BpeTokenizer::create(vocab);
    return fail(ErrorCode::Unsupported,
                strCat("tokenizer.ggml.model \"", vocab.model, "\" is not supported (supported: \"llama\", \"gpt2\")"));
}

Result<void> Tokenizer::initCommon(VocabSpec& vocab, bool addBosDefault) {
    if (auto r = checkShape(vocab); !r) return r;
    pieces_ = PieceTable(vocab.tokens);
    vocab.tokens = {};  // the copies in the table are all that is kept
    tokenTypes_.assign(pieces_.size(), token_type::kNormal);
    for (size_t i = 0; i < vocab.tokenTypes.size(); ++i)
        if (vocab.tokenTypes[i] != 0) tokenTypes_[i] = vocab.tokenTypes[i];

    auto checked = [&](int64_t id) { return id >= 0 && id < nVocab() ? static_cast<TokenId>(id) : TokenId{-1}; };
    bos_ = checked(vocab.bosId);
    eos_ = checked(vocab.eosId);
    eot_ = checked(vocab.eotId);
    for (size_t i = 0; eot_ < 0 && i < kEotCandidates.size(); ++i)
        if (const TokenId id = findPiece(kEotCandidates[i]); id >= 0 && isControl(id)) eot_ = id;
    addBos_ = vocab.addBos.value_or(addBosDefault);

    for (TokenId id : {eos_, eot_})
        if (id >= 0) endOfGeneration_.push_back(id);
    for (std::string_view text : kEndOfTurnPieces)
        if (const TokenId id = findPiece(text); id >= 0) {
            tokenTypes_[static_cast<size_t>(id)] = token_type::kControl;  // a mislabelled control token
            endOfGeneration_.push_back(id);
        }
    std::sort(endOfGeneration_.begin(), endOfGeneration_.end());
    endOfGeneration_.erase(std::unique(endOfGeneration_.begin(), endOfGeneration_.end()), endOfGeneration_.end());

    // Phi-3: llama.cpp's choice of right-stripping pieces — every control, user-defined and
    // unknown piece, and "</s>", but not <unk>, <s> or <|endoftext|>.
    std::vector<bool> rightStrip;
    if (vocab.rightStripSpecials) {
        rightStrip.assign(pieces_.size(), false);
        for (size_t i = 0; i < pieces_.size(); ++i) {
            const int32_t t = tokenTypes_[i];
            rightStrip[i] = t == token_type::kControl || t == token_type::kUserDefined || t == token_type::kUnknown;
        }
        const auto set = [&](std::string_view text, bool value) {
            if (const TokenId id = findPiece(text); id >= 0) rightStrip[static_cast<size_t>(id)] = value;
        };
        set("</s>", true);
        for (std::string_view text : {"<unk>", "<s>", "<|endoftext|>"}) set(text, false);
    }
    specials_ = std::make_unique<SpecialMatcher>(pieces_, tokenTypes_, std::move(rightStrip));
    return {};
}

std::vector<TokenId> Tokenizer::encode(std::span<const TextSegment> segments, bool addBos) const {
    std::vector<TokenId> out;
    if (addBos && bos_ >= 0) out.push_back(bos_);
    for (const Fragment& fragment : specials_->split(segments)) {
        if (fragment.token >= 0) out.push_back(fragment.token);
        else appendTextTokens(fragment.text, out);
    }
    return out;
}

std::vector<TokenId> Tokenizer::encode(std::string_view text, bool addBos, bool allowSpecial) const {
    const TextSegment segment{std::string(text), allowSpecial};
    return encode(std::span<const TextSegment>(&segment, 1), addBos);
}

std::string Tokenizer::decode(std::span<const TokenId> ids) const {
    std::string out;
    for (TokenId id : ids) out += tokenBytes(id);
    return out;
}

bool Tokenizer::isEndOfGeneration(TokenId id) const {
    return std::binary_search(endOfGeneration_.begin(), endOfGeneration_.end(), id);
}

bool Tokenizer::isControl(TokenId id) const { return tokenType(id) == token_type::kControl; }

int32_t Tokenizer::tokenType(TokenId id) const { return validId(id) ? tokenTypes_[static_cast<size_t>(id)] : 0; }

TokenId Tokenizer::findPiece(std::string_view text) const { return pieces_.find(text); }

}  // namespace hearth

// SentencePiece vocabularies: the GGUF pieces become a SentencePiece ModelProto (BPE, byte
// fallback, identity normalizer; see sentencepiece_proto.h) that the library encodes with.
// Piece types are mapped so that SentencePiece gives llama.cpp's ids (llama.cpp 3f545bec is the
// reference of the tests in ../shared/testdata).
#include "engine/tokenizer/spm_tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <span>

#include "engine/str_cat.h"
#include "engine/tokenizer/sentencepiece_proto.h"

namespace hearth {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's escaped space

// "<0xXX>" -> XX; nullopt for anything else (e.g. the malformed "<0x-1>").
std::optional<uint8_t> parseBytePiece(std::string_view text) {
    if (text.size() != 6 || !text.starts_with("<0x") || text[5] != '>') return std::nullopt;
    int value = 0;
    for (char c : text.substr(3, 2)) {
        int digit = -1;
        if (c >= '0' && c <= '9') digit = c - '0';
        if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
        if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        if (digit < 0) return std::nullopt;
        value = value * 16 + digit;
    }
    return static_cast<uint8_t>(value);
}

// SentencePiece's own spelling of byte pieces (it looks them up by this exact text).
std::string canonicalBytePiece(uint8_t b) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    return std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
}

// A unique name that no input can produce: control pieces are never matched in text.
std::string placeholderName(size_t id) { return strCat("\x01hearth-placeholder-", id, "\x01"); }

// The ModelProto's view of the vocabulary. Views in pieces point into the tokenizer's piece
// table or into names, so a ProtoVocab is filled in place and never moved.
struct ProtoVocab {
    std::deque<std::string> names;  // proto texts that differ from the GGUF's (a deque: views stay valid)
    std::vector<SpmPiece> pieces;
    std::vector<TokenId> byteTokens = std::vector<TokenId>(256, -1);
    int32_t unkId = -1;
    bool byteFallback = true;
};

SpmPieceType protoType(int32_t ggufType) {
    switch (ggufType) {
    case token_type::kByte: return SpmPieceType::Byte;
    case token_type::kControl:
    case token_type::kUnknown: return SpmPieceType::Control;  // only one piece may be UNKNOWN
    case token_type::kUnused: return SpmPieceType::Unused;
    default:
        // USER_DEFINED are NORMAL here: they are split out of the text before SentencePiece sees
        // it, and llama.cpp's merges may still reach them by score like any piece.
        return SpmPieceType::Normal;
    }
}

// The unknown piece SentencePiece requires: the file's unknown id, else the first UNKNOWN token,
// else -1 (a placeholder is appended after the vocabulary; byte fallback never emits it).
int32_t chooseUnknown(const VocabSpec& vocab, std::span<const int32_t> types) {
    if (vocab.unknownId >= 0 && vocab.unknownId < static_cast<int64_t>(types.size()))
        return static_cast<int32_t>(vocab.unknownId);
    for (size_t i = 0; i < types.size(); ++i)
        if (types[i] == token_type::kUnknown) return static_cast<int32_t>(i);
    return -1;
}

// A GGUF piece SentencePiece would refuse or mis-file gets a placeholder name and becomes a
// control piece (never produced from text): an empty text; a text defined again later (llama.cpp's
// text->id map keeps the last id, and SentencePiece refuses duplicates); a control piece spelled
// like a byte piece.
void usePlaceholder(ProtoVocab& out, size_t i) {
    out.names.push_back(placeholderName(i));
    SpmPiece& piece = out.pieces[i];
    piece = SpmPiece{out.names.back(), 0.0f,
                     piece.type == SpmPieceType::Unknown ? SpmPieceType::Unknown : SpmPieceType::Control};
}

Result<void> mapPieces(const Tokenizer& tok, const PieceTable& texts, std::span<const int32_t> types,
                       const VocabSpec& vocab, ProtoVocab& out) {
    const size_t n = texts.size();
    out.pieces.assign(n, SpmPiece{});
    out.unkId = chooseUnknown(vocab, types);
    for (size_t i = 0; i < n; ++i) {
        SpmPiece& piece = out.pieces[i];
        piece = SpmPiece{texts[i], vocab.scores.empty() ? 0.0f : vocab.scores[i], protoType(types[i])};
        if (static_cast<int32_t>(i) == out.unkId) piece.type = SpmPieceType::Unknown;
        const auto byte = parseBytePiece(texts[i]);
        if (piece.type == SpmPieceType::Byte) {
            if (!byte)
                return fail(ErrorCode::InvalidFormat,
                            strCat("tokenizer.ggml.tokens[", i, "]: byte token is not <0xXX>"));
            if (const TokenId earlier = out.byteTokens[*byte]; earlier >= 0)
                usePlaceholder(out, static_cast<size_t>(earlier));
            out.names.push_back(canonicalBytePiece(*byte));
            piece.text = out.names.back();
            out.byteTokens[*byte] = static_cast<TokenId>(i);
            continue;
        }
        const bool reserved = piece.type == SpmPieceType::Control || piece.type == SpmPieceType::Unknown;
        if (texts[i].empty() || tok.findPiece(texts[i]) != static_cast<TokenId>(i) || (reserved && byte))
            usePlaceholder(out, i);
    }
    if (out.unkId < 0) {
        out.names.push_back(placeholderName(n));
        out.pieces.push_back(SpmPiece{out.names.back(), 0.0f, SpmPieceType::Unknown});
        out.unkId = static_cast<int32_t>(n);
    }
    // SentencePiece's byte fallback needs all 256 byte pieces; with fewer, none may be BYTE.
    out.byteFallback = std::count(out.byteTokens.begin(), out.byteTokens.end(), -1) == 0;
    for (SpmPiece& piece : out.pieces)
        if (!out.byteFallback && piece.type == SpmPieceType::Byte) piece.type = SpmPieceType::Control;
    return {};
}

}  // namespace

SpmTokenizer::SpmTokenizer() = default;
SpmTokenizer::~SpmTokenizer() = default;

Result<std::unique_ptr<Tokenizer>> SpmTokenizer::create(VocabSpec& vocab) {
    std::unique_ptr<SpmTokenizer> t(new SpmTokenizer());
    // llama.cpp adds BOS to SentencePiece vocabularies unless add_bos_token says otherwise.
    if (auto r = t->initCommon(vocab, true); !r) return std::unexpected(r.error());
    ProtoVocab proto;
    if (auto r = mapPieces(*t, t->pieces_, t->tokenTypes_, vocab, proto); !r) return std::unexpected(r.error());
    t->byteTokens_ = proto.byteTokens;

    SpmModelOptions options;
    options.unkId = proto.unkId;
    options.bosId = t->bos_;
    options.eosId = t->eos_;
    // tokenizer.ggml.add_space_prefix; llama.cpp's default for "llama" vocabularies is true.
    options.addDummyPrefix = vocab.addSpacePrefix.value_or(true);
    options.byteFallback = proto.byteFallback;
    t->processor_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
    const std::string model = buildSentencePieceModel(proto.pieces, options);
    proto.pieces = {};  // before SentencePiece builds its own tables: a lower peak
    proto.names = {};
    const auto status = t->processor_->LoadFromSerializedProto(model);
    if (!status.ok())
        return fail(ErrorCode::InvalidFormat, strCat("SentencePiece refused the vocabulary: ", status.ToString()));
    return std::unique_ptr<Tokenizer>(std::move(t));
}

void SpmTokenizer::appendTextTokens(std::string_view text, std::vector<TokenId>& out) const {
    std::vector<int> ids;
    if (!processor_->Encode(text, &ids).ok()) {
        appendBytes(text, out);  // not expected with a model that loaded; never lose the text
        return;
    }
    for (int id : ids)
        if (validId(id)) out.push_back(id);  // the appended placeholder <unk> is not a model token
}

void SpmTokenizer::appendBytes(std::string_view text, std::vector<TokenId>& out) const {
    for (char c : text)
        if (const TokenId id = byteTokens_[static_cast<uint8_t>(c)]; id >= 0) out.push_back(id);
}

std::string SpmTokenizer::tokenBytes(TokenId id, bool renderSpecial) const {
    if (!validId(id)) return {};
    const std::string text(pieces_[static_cast<size_t>(id)]);
    switch (tokenTypes_[static_cast<size_t>(id)]) {
    case token_type::kByte: {
        const auto byte = parseBytePiece(text);
        return byte ? std::string(1, static_cast<char>(*byte)) : std::string();
    }
    case token_type::kControl:
    case token_type::kUnknown:
    case token_type::kUnused: return renderSpecial ? text : std::string();
    case token_type::kUserDefined: return text;  // stored as typed (Gemma's "\n\n", "  "), not escaped
    default: break;
    }
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        if (text.compare(pos, kSpaceMark.size(), kSpaceMark) == 0) {
            out += ' ';
            pos += kSpaceMark.size();
        } else {
            out += text[pos++];
        }
    }
    return out;
}

}  // namespace hearth

// Protobuf wire format by hand (https://protobuf.dev/programming-guides/encoding/): varints,
// length-delimited strings and sub-messages, little-endian fixed32 floats. Field numbers are
// those of sentencepiece_model.proto (SentencePiece 0.1.97).
#include "engine/tokenizer/sentencepiece_proto.h"

#include <bit>
#include <cstring>

namespace hearth {
namespace {

enum WireType : uint32_t { kVarint = 0, kLengthDelimited = 2, kFixed32 = 5 };

// ModelProto
constexpr uint32_t kModelPieces = 1, kModelTrainerSpec = 2, kModelNormalizerSpec = 3;
// ModelProto.SentencePiece
constexpr uint32_t kPieceText = 1, kPieceScore = 2, kPieceType = 3;
// TrainerSpec
constexpr uint32_t kTrainerModelType = 3, kTrainerVocabSize = 4, kTrainerByteFallback = 35, kTrainerUnkId = 40,
                   kTrainerBosId = 41, kTrainerEosId = 42, kTrainerPadId = 43;
constexpr uint64_t kModelTypeBpe = 2;  // TrainerSpec.ModelType: UNIGRAM = 1 (the default), BPE = 2
// NormalizerSpec
constexpr uint32_t kNormName = 1, kNormAddDummyPrefix = 3, kNormRemoveExtraWhitespaces = 4, kNormEscapeWhitespaces = 5;

void putVarint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out += static_cast<char>((v & 0x7F) | 0x80);
        v >>= 7;
    }
    out += static_cast<char>(v);
}

void putTag(std::string& out, uint32_t field, WireType wire) { putVarint(out, (uint64_t{field} << 3) | wire); }

void putUInt(std::string& out, uint32_t field, uint64_t v) {
    putTag(out, field, kVarint);
    putVarint(out, v);
}

// int32 fields: negative values are sign-extended to 64 bits (ten bytes), as protobuf does.
void putInt32(std::string& out, uint32_t field, int32_t v) {
    putUInt(out, field, static_cast<uint64_t>(static_cast<int64_t>(v)));
}

void putBytes(std::string& out, uint32_t field, std::string_view bytes) {
    putTag(out, field, kLengthDelimited);
    putVarint(out, bytes.size());
    out.append(bytes);
}

void putFloat(std::string& out, uint32_t field, float f) {
    static_assert(std::endian::native == std::endian::little, "fixed32 is written as host bytes");
    putTag(out, field, kFixed32);
    char raw[4];
    std::memcpy(raw, &f, sizeof raw);
    out.append(raw, sizeof raw);
}

std::string pieceMessage(const SpmPiece& piece) {
    std::string m;
    putBytes(m, kPieceText, piece.text);
    putFloat(m, kPieceScore, piece.score);
    putUInt(m, kPieceType, static_cast<uint64_t>(piece.type));
    return m;
}

std::string trainerSpec(size_t nPieces, const SpmModelOptions& options) {
    std::string m;
    putUInt(m, kTrainerModelType, kModelTypeBpe);
    putInt32(m, kTrainerVocabSize, static_cast<int32_t>(nPieces));
    putUInt(m, kTrainerByteFallback, options.byteFallback ? 1 : 0);
    putInt32(m, kTrainerUnkId, options.unkId);
    putInt32(m, kTrainerBosId, options.bosId);
    putInt32(m, kTrainerEosId, options.eosId);
    putInt32(m, kTrainerPadId, -1);
    return m;
}

// No rule (empty precompiled_charsmap: no NFKC), whitespace runs kept, spaces escaped as U+2581.
std::string normalizerSpec(const SpmModelOptions& options) {
    std::string m;
    putBytes(m, kNormName, "identity");
    putUInt(m, kNormAddDummyPrefix, options.addDummyPrefix ? 1 : 0);
    putUInt(m, kNormRemoveExtraWhitespaces, 0);
    putUInt(m, kNormEscapeWhitespaces, 1);
    return m;
}

}  // namespace

std::string buildSentencePieceModel(std::span<const SpmPiece> pieces, const SpmModelOptions& options) {
    std::string out;
    out.reserve(pieces.size() * 24);
    for (const SpmPiece& piece : pieces) putBytes(out, kModelPieces, pieceMessage(piece));
    putBytes(out, kModelTrainerSpec, trainerSpec(pieces.size(), options));
    putBytes(out, kModelNormalizerSpec, normalizerSpec(options));
    return out;
}

}  // namespace hearth

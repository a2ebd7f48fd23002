// Writes a SentencePiece ModelProto (sentencepiece_model.proto) in protobuf wire format, so that
// a GGUF vocabulary can be loaded with SentencePieceProcessor::LoadFromSerializedProto without
// libprotobuf (which clashes with the copy inside libsentencepiece: ../shared/TOOLCHAIN.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace hearth {

// ModelProto.SentencePiece.Type
enum class SpmPieceType : int32_t { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

struct SpmPiece {
    std::string_view text;
    float score = 0.0f;
    SpmPieceType type = SpmPieceType::Normal;
};

struct SpmModelOptions {
    int32_t unkId = 0;  // trainer_spec ids (-1: none); informational for the processor
    int32_t bosId = -1;
    int32_t eosId = -1;
    bool addDummyPrefix = true;  // normalizer_spec.add_dummy_prefix
    // trainer_spec.byte_fallback; SentencePiece then requires all 256 byte pieces, and without
    // it refuses any byte piece.
    bool byteFallback = true;
};

// A BPE model with byte fallback (when options.byteFallback) and an identity normalizer that keeps whitespace runs and
// escapes spaces as U+2581: the settings under which SentencePiece gives llama.cpp's ids.
std::string buildSentencePieceModel(std::span<const SpmPiece> pieces, const SpmModelOptions& options);

}  // namespace hearth

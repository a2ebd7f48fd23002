// libFuzzer target: a tokenizer built from a GGUF vocabulary (SentencePiece or GPT-2 BPE), then
// tokenizing any bytes. Input: a GGUF image without tensors, then the text (every byte from the
// data section's offset on), so that mutating one never disturbs the other's length fields.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "engine/model/gguf.h"
#include "engine/tokenizer/tokenizer.h"

namespace {

// Encodes with and without special tokens, then decodes every id, streamed and at once.
void exercise(const hearth::Tokenizer& tokenizer, std::string_view text) {
    const std::vector<hearth::TokenId> plain = tokenizer.encode(text, true, false);
    const std::vector<hearth::TokenId> special = tokenizer.encode(text, false, true);
    hearth::Utf8Stream stream;
    volatile size_t sink = 0;
    for (const std::vector<hearth::TokenId>* ids : {&plain, &special}) {
        for (const hearth::TokenId id : *ids) {
            sink = sink + stream.push(tokenizer.tokenBytes(id, true)).size();
            sink = sink + tokenizer.isEndOfGeneration(id) + tokenizer.pieceText(id).size();
        }
        sink = sink + stream.flush().size() + tokenizer.decode(*ids).size();
    }
    // Half the text as the format's own (specials parsed), half as the user's.
    const size_t half = text.size() / 2;
    const hearth::TextSegment segments[] = {{std::string(text.substr(0, half)), true},
                                            {std::string(text.substr(half)), false}};
    sink = sink + tokenizer.encode(segments, tokenizer.addBosByDefault()).size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto file = hearth::GgufFile::fromBytes(std::span<const uint8_t>(data, size));
    if (!file || !(*file)->tensors().empty()) return 0;
    auto tokenizer = hearth::Tokenizer::fromGguf(**file);
    if (!tokenizer) return 0;
    const size_t textAt = static_cast<size_t>((*file)->dataOffset());
    exercise(**tokenizer, std::string_view(reinterpret_cast<const char*>(data) + textAt, size - textAt));
    return 0;
}

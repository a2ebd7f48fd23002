// Splits prompt segments into plain text and special-token fragments before tokenization.
// Control and unknown pieces are matched only in segments that allow special tokens; user-defined
// pieces in every segment (llama.cpp's tokenizer_st_partition does the same).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer.h"

namespace hearth {

struct Fragment {
    std::string text;  // plain text when token < 0
    TokenId token = -1;  // a special token matched in the text
};

class SpecialMatcher {
public:
    // rightStrip: ids after which whitespace is dropped (llama.cpp's LLAMA_TOKEN_ATTR_RSTRIP), or empty.
    SpecialMatcher(const PieceTable& pieces, std::span<const int32_t> tokenTypes, std::vector<bool> rightStrip = {});

    // Text fragments are never empty and never adjacent (text across segments is joined).
    // At each position the longest special piece starting there wins (leftmost-longest). After
    // a right-stripping piece, the whitespace that follows (across segments too: the text is
    // one string to llama.cpp) is dropped.
    std::vector<Fragment> split(std::span<const TextSegment> segments) const;

private:
    struct Table {
        PieceIndex byText;
        std::vector<size_t> lengthsDesc;  // distinct piece lengths, longest first
        std::array<bool, 256> firstByte{};  // bytes some piece starts with
        void add(std::string_view text, TokenId id);
        void finish();
        TokenId matchAt(std::string_view text, size_t pos, size_t& len) const;
    };
    Table always_;  // user-defined pieces
    Table special_;  // user-defined, control and unknown pieces
    std::vector<bool> rightStrip_;
};

}  // namespace hearth

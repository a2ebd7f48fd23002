// The vocabulary's piece texts in one buffer with an end offset per piece, and their text -> id
// index as one open-addressing table of ids: a few large allocations for Gemma's 262,144
// pieces instead of a string and a hash node per piece.
// Thread-safety: immutable after construction; any thread may read it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hearth {

class PieceTable {
public:
    PieceTable() = default;
    explicit PieceTable(const std::vector<std::string>& texts);

    size_t size() const { return ends_.size(); }
    std::string_view operator[](size_t i) const {
        const size_t begin = i == 0 ? 0 : ends_[i - 1];
        return std::string_view(bytes_.data() + begin, ends_[i] - begin);
    }
    // The id of a piece with exactly this text, -1 when none; when the vocabulary holds a text
    // twice, the last id (as in llama.cpp).
    int32_t find(std::string_view text) const;

private:
    size_t slotOf(std::string_view text) const;  // the slot holding text, or the empty one to use

    std::vector<char> bytes_;  // every piece's text, one after another (moves keep views valid)
    std::vector<size_t> ends_;  // piece i is bytes_[ends_[i - 1], ends_[i])
    std::vector<int32_t> slots_;  // a power of two, at most half full; -1 = empty
};

}  // namespace hearth

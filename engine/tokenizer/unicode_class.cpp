// Code point classification by binary search over the generated range table.
#include "engine/tokenizer/unicode_class.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <iterator>

namespace hearth {
namespace {

struct ClassRange {
    char32_t first;
    char32_t last;
    CharClass cls;
};

constexpr CharClass kLetter = CharClass::Letter;
constexpr CharClass kNumber = CharClass::Number;
constexpr CharClass kSpace = CharClass::Space;
constexpr CharClass kMark = CharClass::Mark;
constexpr CharClass kPunctuation = CharClass::Punctuation;

constexpr ClassRange kRanges[] = {
#include "engine/tokenizer/unicode_tables.inc"
};

// The binary search needs sorted ranges that do not overlap.
constexpr bool rangesAreOrdered() {
    for (size_t i = 0; i < std::size(kRanges); ++i) {
        if (kRanges[i].first > kRanges[i].last) return false;
        if (i > 0 && kRanges[i - 1].last >= kRanges[i].first) return false;
    }
    return true;
}
static_assert(rangesAreOrdered());

// ASCII is most of what is typed; a direct table avoids the search for it.
constexpr auto kAscii = [] {
    std::array<CharClass, 128> table{};
    for (const ClassRange& r : kRanges)
        for (char32_t cp = r.first; cp <= r.last && cp < 128; ++cp) table[cp] = r.cls;
    return table;
}();

}  // namespace

CharClass charClass(char32_t cp) {
    if (cp < 128) return kAscii[cp];
    const auto* it = std::upper_bound(std::begin(kRanges), std::end(kRanges), cp,
                                      [](char32_t value, const ClassRange& r) { return value < r.first; });
    if (it == std::begin(kRanges)) return CharClass::Other;
    --it;
    return cp <= it->last ? it->cls : CharClass::Other;
}

}  // namespace hearth

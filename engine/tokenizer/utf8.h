// UTF-8 helpers shared by the tokenizers (RFC 3629 validation, one code point at a time).
// Invalid input is never an error here: callers decide whether it becomes U+FFFD or raw bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace hearth::utf8 {

inline constexpr char32_t kReplacement = 0xFFFD;
inline constexpr std::string_view kReplacementUtf8 = "\xEF\xBF\xBD";

enum class SeqState { Complete, Incomplete, Invalid };

// What the bytes at s[pos] hold. Complete: a valid character of len bytes. Incomplete: the
// len bytes up to the end of s are a valid beginning of one. Invalid: the len bytes (>= 1) are
// the maximal ill-formed subpart (Unicode 15, 3.9 "U+FFFD substitution of maximal subparts").
struct SeqCheck {
    SeqState state;
    size_t len;
};
SeqCheck checkSequence(std::string_view s, size_t pos);

struct Decoded {
    char32_t cp;  // kReplacement when the bytes are not a valid character
    size_t len;  // bytes consumed, >= 1
};
// Decodes the character at s[pos] (pos < s.size()); an incomplete tail counts as invalid.
Decoded decodeAt(std::string_view s, size_t pos);

void append(std::string& out, char32_t cp);

}  // namespace hearth::utf8

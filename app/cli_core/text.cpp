// Text helpers (text.h).
#include "app/cli_core/text.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace hearth::cli::core {

namespace {

// Length of the well-formed UTF-8 sequence at s[i], 0 if none (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF).
size_t sequenceLength(const std::string& s, size_t i) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    const size_t left = s.size() - i;
    if (c < 0x80) return 1;
    const auto cont = [&](size_t k) { return (b(k) & 0xC0) == 0x80; };
    if (c >= 0xC2 && c <= 0xDF) return left >= 2 && cont(i + 1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (left < 3 || !cont(i + 1) || !cont(i + 2)) return 0;
        if (c == 0xE0 && b(i + 1) < 0xA0) return 0;
        if (c == 0xED && b(i + 1) > 0x9F) return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (left < 4 || !cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
        if (c == 0xF0 && b(i + 1) < 0x90) return 0;
        if (c == 0xF4 && b(i + 1) > 0x8F) return 0;
        return 4;
    }
    return 0;
}

}  // namespace

std::string validUtf8(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const size_t n = sequenceLength(text, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.append(text, i, n);
            i += n;
        }
    }
    return out;
}

std::string withoutControls(const std::string& raw) {
    const std::string text = validUtf8(raw);
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c == 0x7F) {
            out += ' ';
        } else if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
            out += ' ';  // U+0080..U+009F
            ++i;
        } else {
            out += text[i];
        }
    }
    return out;
}

std::string formatJsonDouble(double d) {
    if (!std::isfinite(d)) return "null";
    char plain[64];
    const auto p = std::to_chars(plain, plain + sizeof plain, d);
    std::string out(plain, p.ptr);
    if (out.find_first_of(".e") != std::string::npos) return out;
    // An integral value in positional form: Qt writes the shortest digits and pads with zeros
    // where to_chars writes the exact integer (1e20+ values: 279904831774576512 vs ...500).
    char sci[64];
    const auto s = std::to_chars(sci, sci + sizeof sci, d, std::chars_format::scientific);
    const std::string text(sci, s.ptr);
    const size_t e = text.find('e');
    std::string digits;
    bool negative = false;
    for (size_t i = 0; i < e; ++i) {
        if (text[i] == '-') negative = true;
        else if (text[i] != '.') digits += text[i];
    }
    const int exponent = std::atoi(text.c_str() + e + 1);
    while (static_cast<int>(digits.size()) < exponent + 1) digits += '0';
    return (negative ? "-" : "") + digits;
}

std::string fixed(double x, int decimals) {
    char buf[512];
    const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed, decimals);
    return r.ec == std::errc() ? std::string(buf, r.ptr) : std::string("?");
}

}  // namespace hearth::cli::core

// UTF-8 validation and decoding, and Utf8Stream (tokenizer.h): streamed token bytes are released
// only as whole characters, so a reply never shows half of a multi-byte character.
#include "engine/tokenizer/utf8.h"

#include "engine/tokenizer/tokenizer.h"

namespace hearth::utf8 {
namespace {

struct LeadInfo {
    size_t len;  // 0: not a lead byte
    uint8_t secondLo, secondHi;  // allowed range of the second byte (excludes overlongs,
        // surrogates and code points above U+10FFFF)
};

LeadInfo leadInfo(uint8_t b) {
    if (b < 0x80) return {1, 0, 0};
    if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
    if (b == 0xE0) return {3, 0xA0, 0xBF};
    if (b == 0xED) return {3, 0x80, 0x9F};
    if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
    if (b == 0xF0) return {4, 0x90, 0xBF};
    if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
    if (b == 0xF4) return {4, 0x80, 0x8F};
    return {0, 0, 0};
}

}  // namespace

SeqCheck checkSequence(std::string_view s, size_t pos) {
    const auto lead = static_cast<uint8_t>(s[pos]);
    const LeadInfo info = leadInfo(lead);
    if (info.len == 0) return {SeqState::Invalid, 1};
    for (size_t k = 1; k < info.len; ++k) {
        if (pos + k >= s.size()) return {SeqState::Incomplete, k};
        const auto b = static_cast<uint8_t>(s[pos + k]);
        const uint8_t lo = k == 1 ? info.secondLo : 0x80;
        const uint8_t hi = k == 1 ? info.secondHi : 0xBF;
        if (b < lo || b > hi) return {SeqState::Invalid, k};
    }
    return {SeqState::Complete, info.len};
}

Decoded decodeAt(std::string_view s, size_t pos) {
    const SeqCheck check = checkSequence(s, pos);
    if (check.state != SeqState::Complete) return {kReplacement, check.len};
    const auto b0 = static_cast<uint8_t>(s[pos]);
    if (check.len == 1) return {b0, 1};
    static constexpr uint8_t kLeadMask[5] = {0, 0, 0x1F, 0x0F, 0x07};
    char32_t cp = b0 & kLeadMask[check.len];
    for (size_t k = 1; k < check.len; ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[pos + k]) & 0x3F);
    return {cp, check.len};
}

void append(std::string& out, char32_t cp) {
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = kReplacement;
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

}  // namespace hearth::utf8

namespace hearth {

std::string Utf8Stream::push(std::string_view bytes) {
    pending_.append(bytes);
    std::string out;
    size_t pos = 0;
    while (pos < pending_.size()) {
        const utf8::SeqCheck check = utf8::checkSequence(pending_, pos);
        if (check.state == utf8::SeqState::Incomplete) break;  // wait for the next push
        if (check.state == utf8::SeqState::Invalid) out += utf8::kReplacementUtf8;
        else out.append(pending_, pos, check.len);
        pos += check.len;
    }
    pending_.erase(0, pos);
    return out;
}

std::string Utf8Stream::flush() {
    // What is left can only be the start of one character that never completed.
    std::string out = pending_.empty() ? std::string() : std::string(utf8::kReplacementUtf8);
    pending_.clear();
    return out;
}

}  // namespace hearth

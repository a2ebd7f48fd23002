// Leftmost-longest matching of special pieces in prompt text (see special_split.h).
#include "engine/tokenizer/special_split.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "engine/tokenizer/vocab_spec.h"

namespace hearth {

void SpecialMatcher::Table::add(std::string_view text, TokenId id) {
    if (text.empty()) return;
    byText[text] = id;  // a text given twice: the last id wins, as in the piece index
    firstByte[static_cast<uint8_t>(text[0])] = true;
    lengthsDesc.push_back(text.size());
}

void SpecialMatcher::Table::finish() {
    std::sort(lengthsDesc.begin(), lengthsDesc.end(), std::greater<>());
    lengthsDesc.erase(std::unique(lengthsDesc.begin(), lengthsDesc.end()), lengthsDesc.end());
}

TokenId SpecialMatcher::Table::matchAt(std::string_view text, size_t pos, size_t& len) const {
    if (!firstByte[static_cast<uint8_t>(text[pos])]) return -1;
    // Few distinct lengths (dozens even for Gemma's 6,000 control pieces): one hash lookup each.
    for (size_t n : lengthsDesc) {
        if (n > text.size() - pos) continue;
        const auto it = byText.find(text.substr(pos, n));
        if (it != byText.end()) {
            len = n;
            return it->second;
        }
    }
    return -1;
}

SpecialMatcher::SpecialMatcher(const PieceTable& pieces, std::span<const int32_t> tokenTypes,
                               std::vector<bool> rightStrip)
    : rightStrip_(std::move(rightStrip)) {
    for (size_t i = 0; i < pieces.size(); ++i) {
        const int32_t type = tokenTypes[i];
        const auto id = static_cast<TokenId>(i);
        if (type == token_type::kUserDefined) always_.add(pieces[i], id);
        if (type == token_type::kUserDefined || type == token_type::kControl || type == token_type::kUnknown)
            special_.add(pieces[i], id);
    }
    always_.finish();
    special_.finish();
}

std::vector<Fragment> SpecialMatcher::split(std::span<const TextSegment> segments) const {
    std::vector<Fragment> out;
    std::string pending;
    auto flushText = [&] {
        if (!pending.empty()) out.push_back(Fragment{std::move(pending), -1});
        pending.clear();
    };
    bool stripping = false;  // after a right-stripping piece, until the first non-space
    for (const TextSegment& segment : segments) {
        const Table& table = segment.allowSpecial ? special_ : always_;
        const std::string_view text = segment.text;
        size_t pos = 0;
        while (pos < text.size()) {
            size_t len = 0;
            const TokenId id = table.matchAt(text, pos, len);
            if (id < 0) {
                const auto c = static_cast<unsigned char>(text[pos++]);
                stripping = stripping && std::isspace(c) != 0;  // C isspace, as llama.cpp strips
                if (!stripping) pending += static_cast<char>(c);
                continue;
            }
            flushText();
            out.push_back(Fragment{{}, id});
            pos += len;
            stripping = static_cast<size_t>(id) < rightStrip_.size() && rightStrip_[static_cast<size_t>(id)];
        }
    }
    flushText();
    return out;
}

}  // namespace hearth

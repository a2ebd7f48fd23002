// Splitting a thinking model's reply into reasoning and answer. The trimming follows Qwen 3's
// template, which re-renders a reply as reasoning.strip('\n') and answer.lstrip('\n').
#include "engine/tokenizer/reasoning.h"

#include <algorithm>

namespace hearth {
namespace {

std::string_view stripLeadingNewlines(std::string_view s) {
    const size_t first = s.find_first_not_of('\n');
    return first == std::string_view::npos ? std::string_view() : s.substr(first);
}

std::string_view stripNewlines(std::string_view s) {
    s = stripLeadingNewlines(s);
    return s.substr(0, s.find_last_not_of('\n') + 1);
}

// The length of the longest proper prefix of marker that text ends with: text that may become the
// marker when the next token arrives.
size_t partialMarkerAtEnd(std::string_view text, std::string_view marker) {
    for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n)
        if (text.ends_with(marker.substr(0, n))) return n;
    return 0;
}

}  // namespace

ReasoningSplit splitReasoning(std::string_view reply, const ReasoningSpan& span) {
    if (span.open.empty() || span.close.empty()) return {{}, reply, false};
    std::string_view body = reply;
    if (!span.promptOpens) {
        const size_t first = reply.find_first_not_of(" \t\r\n");
        if (first == std::string_view::npos) return {{}, reply, false};
        const std::string_view rest = reply.substr(first);
        if (span.open.starts_with(rest) && rest.size() < span.open.size()) return {{}, {}, false};
        if (!rest.starts_with(span.open)) return {{}, reply, false};
        body = rest.substr(span.open.size());
    }
    const size_t close = body.find(span.close);
    if (close == std::string_view::npos) {
        const std::string_view thinking = body.substr(0, body.size() - partialMarkerAtEnd(body, span.close));
        return {stripNewlines(thinking), {}, true};
    }
    return {stripNewlines(body.substr(0, close)), stripLeadingNewlines(body.substr(close + span.close.size())), false};
}

}  // namespace hearth

// Reasoning spans of thinking models (Qwen 3, DeepSeek-R1): the markers a reply wraps its
// reasoning in, and splitting a reply - finished or still streaming - into reasoning and answer.
#pragma once

#include <string_view>

namespace hearth {

// How a thinking format's replies carry their reasoning.
struct ReasoningSpan {
    std::string_view open = "<think>";
    std::string_view close = "</think>";
    // The generation prompt ends with `open` (DeepSeek-R1's newer templates, Qwen 3's thinking-only
    // releases): the reply starts inside the span and holds only its closing marker.
    bool promptOpens = false;
};

// A reply split at its reasoning span; both views point into the reply.
struct ReasoningSplit {
    std::string_view reasoning;  // inside the span, without the markers and the line breaks next to them
    std::string_view answer;  // after the span, its leading line breaks dropped; the whole reply if it has no span
    bool open = false;  // the span is not closed (yet): a reply still streaming, or one cut off
};

// Splits reply at span. Without promptOpens, a span counts only where the reply opens with it
// (after whitespace), as the models write it; a reply that so far is only the beginning of the
// opening marker, or whose reasoning ends with the beginning of the closing marker, holds that
// text back, so a streaming view never shows a marker's first half as text. Pure; never fails.
ReasoningSplit splitReasoning(std::string_view reply, const ReasoningSpan& span);

}  // namespace hearth

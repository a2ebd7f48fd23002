// Stop-string matching over a held-back tail of the generated text.
#include "engine/stop/stop_matcher.h"

#include <algorithm>

namespace hearth {

StopMatcher::StopMatcher(std::vector<std::string> stops) {
    for (std::string& s : stops)
        if (!s.empty()) stops_.push_back(std::move(s));
}

// The start of the longest suffix of held_ that is a proper prefix of some stop string
// (held_.size() when there is none).
size_t StopMatcher::holdBackFrom() const {
    size_t from = held_.size();
    for (const std::string& stop : stops_) {
        const size_t longest = std::min(stop.size() - 1, held_.size());
        for (size_t n = longest; n > 0 && held_.size() - n < from; --n) {
            if (std::string_view(held_).substr(held_.size() - n) == std::string_view(stop).substr(0, n)) {
                from = held_.size() - n;
                break;
            }
        }
    }
    return from;
}

StopMatcher::Output StopMatcher::push(std::string_view text) {
    Output out;
    if (stopped_) return out;
    held_.append(text);
    // The earliest match wins: text after it is never shown, whichever stop string it is.
    size_t first = std::string::npos;
    for (const std::string& stop : stops_) first = std::min(first, held_.find(stop));
    if (first != std::string::npos) {
        out.text = held_.substr(0, first);
        out.stopped = stopped_ = true;
        held_.clear();
        return out;
    }
    // No match can start before holdBackFrom(): earlier text was never a stop string's prefix.
    const size_t from = holdBackFrom();
    out.text = held_.substr(0, from);
    held_.erase(0, from);
    return out;
}

std::string StopMatcher::flush() {
    std::string rest = stopped_ ? std::string() : std::move(held_);
    held_.clear();
    return rest;
}

}  // namespace hearth

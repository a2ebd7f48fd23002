// Longest suffix match, most recent occurrence first, scanning backwards over the sequence.
#include "engine/spec/ngram_drafter.h"

#include <algorithm>

namespace hearth {

NGramDrafter::NGramDrafter(int32_t minN, int32_t maxN) : minN_(std::max(1, minN)), maxN_(std::max(minN_, maxN)) {}

std::vector<int32_t> NGramDrafter::lookup(std::span<const int32_t> context, int32_t maxTokens) const {
    const auto size = static_cast<int64_t>(context.size());
    for (int64_t n = std::min<int64_t>(maxN_, size - 1); n >= minN_; --n) {
        const std::span<const int32_t> suffix = context.last(static_cast<size_t>(n));
        // Candidate starts: the match must end before the suffix starts being itself.
        for (int64_t start = size - n - 1; start >= 0; --start) {
            if (!std::equal(suffix.begin(), suffix.end(), context.begin() + start)) continue;
            const int64_t from = start + n;
            const int64_t count = std::min<int64_t>(maxTokens, size - from);
            return {context.begin() + from, context.begin() + from + count};
        }
    }
    return {};
}

Result<Draft> NGramDrafter::propose(std::span<const int32_t> context, int32_t maxTokens, const SpecSampler&) {
    Draft d;
    if (maxTokens > 0) d.tokens = lookup(context, maxTokens);
    return d;
}

}  // namespace hearth

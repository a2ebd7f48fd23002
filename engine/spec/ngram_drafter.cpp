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

std::vector<DraftCandidate> NGramDrafter::candidates(std::span<const int32_t> context, int32_t maxDepth,
                                                     int32_t maxCandidates, int32_t* matchLength) const {
    struct Hit {
        int64_t from;  // where the continuation starts
        int64_t n;  // the suffix length matched
        int64_t rank;  // 0: the most recent at this length
    };
    std::vector<Hit> hits;
    const auto size = static_cast<int64_t>(context.size());
    for (int64_t n = std::min<int64_t>(maxN_, size - 1); n >= minN_ && std::ssize(hits) < maxCandidates; --n) {
        const std::span<const int32_t> suffix = context.last(static_cast<size_t>(n));
        int64_t rank = 0;
        for (int64_t start = size - n - 1; start >= 0 && std::ssize(hits) < maxCandidates; --start) {
            if (!std::equal(suffix.begin(), suffix.end(), context.begin() + start)) continue;
            // A shorter match that a longer one already found adds nothing new.
            const int64_t from = start + n;
            if (std::any_of(hits.begin(), hits.end(), [&](const Hit& h) { return h.from == from; })) continue;
            hits.push_back({from, n, rank++});
        }
    }
    if (matchLength) *matchLength = hits.empty() ? 0 : static_cast<int32_t>(hits.front().n);
    std::vector<DraftCandidate> out;
    for (const Hit& h : hits) {
        int64_t sameFirst = 0;  // occurrences at this length that continue with the same token
        for (const Hit& o : hits)
            sameFirst += o.n == h.n && context[static_cast<size_t>(o.from)] == context[static_cast<size_t>(h.from)];
        DraftCandidate c;
        const int64_t count = std::min<int64_t>(maxDepth, size - h.from);
        c.tokens.assign(context.begin() + h.from, context.begin() + h.from + count);
        // Longer matches first, then more occurrences, then the most recent.
        c.score = static_cast<double>(h.n) * 1e6 + static_cast<double>(sameFirst) * 1e3 +
            1.0 / (1.0 + static_cast<double>(h.rank));
        if (!c.tokens.empty()) out.push_back(std::move(c));
    }
    return out;
}

Result<DraftTree> NGramDrafter::proposeTree(std::span<const int32_t> context, int32_t maxNodes, int32_t maxDepth,
                                            const SpecSampler&) {
    if (maxNodes <= 0 || maxDepth <= 0) return DraftTree{};
    const std::vector<DraftCandidate> c = candidates(context, maxDepth, 4 * maxNodes);
    return DraftTree::merge(c, maxNodes, maxDepth);
}

}  // namespace hearth

// Alternating the two sources' ranked continuations; the one whose suffix match is longer
// leads, since a longer match predicts its continuation better (SuffixDecoding's observation,
// and the n-gram drafter's own order).
#include "engine/spec/mixed_drafter.h"

#include <algorithm>

namespace hearth {

MixedDrafter::MixedDrafter(int32_t ngramMin, int32_t ngramMax, const SuffixIndex* history)
    : ngram_(ngramMin, ngramMax) {
    if (history) history_.emplace(*history, HistoryDraftConfig{.minMatch = std::max(1, ngramMin)});
}

std::vector<DraftCandidate> MixedDrafter::candidates(std::span<const int32_t> context, int32_t maxDepth,
                                                     int32_t maxCandidates) const {
    std::vector<DraftCandidate> out;
    if (maxDepth <= 0 || maxCandidates <= 0) return out;
    int32_t contextMatch = 0, historyMatch = 0;
    std::vector<DraftCandidate> fromContext = ngram_.candidates(context, maxDepth, maxCandidates, &contextMatch);
    std::vector<DraftCandidate> fromHistory;
    if (history_) fromHistory = history_->ranked(context, maxDepth, maxCandidates, &historyMatch);
    // The n-gram drafter never looks at more than ngramMax tokens: a longer history match leads.
    std::vector<DraftCandidate>& first = historyMatch > contextMatch ? fromHistory : fromContext;
    std::vector<DraftCandidate>& second = historyMatch > contextMatch ? fromContext : fromHistory;
    for (size_t i = 0; i < std::max(first.size(), second.size()) && std::ssize(out) < maxCandidates; ++i) {
        if (i < first.size()) out.push_back(std::move(first[i]));
        if (i < second.size() && std::ssize(out) < maxCandidates) out.push_back(std::move(second[i]));
    }
    for (size_t i = 0; i < out.size(); ++i) out[i].score = static_cast<double>(out.size() - i);
    return out;
}

Result<Draft> MixedDrafter::propose(std::span<const int32_t> context, int32_t maxTokens, const SpecSampler&) {
    Draft d;
    if (maxTokens <= 0) return d;
    std::vector<DraftCandidate> c = candidates(context, maxTokens, 1);
    if (!c.empty()) d.tokens = std::move(c.front().tokens);
    return d;
}

Result<DraftTree> MixedDrafter::proposeTree(std::span<const int32_t> context, int32_t maxNodes, int32_t maxDepth,
                                            const SpecSampler&) {
    if (maxNodes <= 0 || maxDepth <= 0) return DraftTree{};
    return DraftTree::merge(candidates(context, maxDepth, 4 * maxNodes), maxNodes, maxDepth);
}

}  // namespace hearth

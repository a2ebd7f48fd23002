// The best continuation of the index's lookup, cut where its estimated probability drops below
// minProb (SuffixDecoding's threshold on a draft's score, arXiv 2411.04975 §4).
#include "engine/spec/history_drafter.h"

namespace hearth {

HistoryDrafter::HistoryDrafter(const SuffixIndex& index, HistoryDraftConfig config) : index_(index), config_(config) {}

SuffixLookup HistoryDrafter::candidates(std::span<const int32_t> context, int32_t maxTokens,
                                        int32_t maxContinuations) const {
    SuffixLookupOptions o;
    o.maxDepth = maxTokens;
    o.minMatch = config_.minMatch;
    o.maxContinuations = maxContinuations > 0 ? maxContinuations : config_.maxContinuations;
    o.maxNodes = 4 * maxTokens + 16;
    o.minProb = config_.minProb;
    return index_.lookup(context, o);
}

Result<Draft> HistoryDrafter::propose(std::span<const int32_t> context, int32_t maxTokens, const SpecSampler&) {
    Draft d;
    if (maxTokens <= 0) return d;
    const SuffixLookup found = candidates(context, maxTokens);
    if (found.continuations.empty()) return d;
    const SuffixContinuation& best = found.continuations.front();
    for (size_t i = 0; i < best.tokens.size() && best.prob[i] >= config_.minProb; ++i)
        d.tokens.push_back(best.tokens[i]);
    return d;
}

std::vector<DraftCandidate> HistoryDrafter::ranked(std::span<const int32_t> context, int32_t maxDepth,
                                                   int32_t maxContinuations, int32_t* matchLength) const {
    const SuffixLookup found = candidates(context, maxDepth, maxContinuations);
    if (matchLength) *matchLength = found.matchLength;
    std::vector<DraftCandidate> out;
    for (const SuffixContinuation& c : found.continuations) {
        DraftCandidate d;
        for (size_t i = 0; i < c.tokens.size() && c.prob[i] >= config_.minProb; ++i) {
            d.tokens.push_back(c.tokens[i]);
            d.score = c.prob[i];
        }
        if (!d.tokens.empty()) out.push_back(std::move(d));
    }
    return out;
}

Result<DraftTree> HistoryDrafter::proposeTree(std::span<const int32_t> context, int32_t maxNodes, int32_t maxDepth,
                                              const SpecSampler&) {
    if (maxNodes <= 0 || maxDepth <= 0) return DraftTree{};
    return DraftTree::merge(ranked(context, maxDepth, maxNodes), maxNodes, maxDepth);
}

}  // namespace hearth

// MixedDrafter: the window's "Default" drafter (SpecDrafter::Auto). The n-gram drafter's
// continuations (the sequence's own tokens) and the history drafter's (the engine's index of
// earlier conversations, and the context again with probability estimates) are taken in turns,
// the source with the longer match first, and merged into one tree (DraftTree::merge); as a
// chain, the first of them. Without an index it is the n-gram drafter.
// Thread-safety: engine thread only.
#pragma once

#include <optional>

#include "engine/spec/history_drafter.h"
#include "engine/spec/ngram_drafter.h"

namespace hearth {

class MixedDrafter final : public Drafter {
public:
    // history may be null (n-gram only); it must outlive the drafter.
    MixedDrafter(int32_t ngramMin, int32_t ngramMax, const SuffixIndex* history);
    Result<Draft> propose(std::span<const int32_t> context, int32_t maxTokens, const SpecSampler& sampler) override;
    Result<DraftTree> proposeTree(std::span<const int32_t> context, int32_t maxNodes, int32_t maxDepth,
                                  const SpecSampler& sampler) override;
    // Both sources' continuations in the order the tree takes them, scores falling (at most
    // maxCandidates, each up to maxDepth tokens).
    std::vector<DraftCandidate> candidates(std::span<const int32_t> context, int32_t maxDepth,
                                           int32_t maxCandidates) const;

private:
    NGramDrafter ngram_;
    std::optional<HistoryDrafter> history_;
};

}  // namespace hearth

// HistoryDrafter: drafts from the user's history, SuffixDecoding-style (arXiv 2411.04975): the
// longest suffix of the context found in the engine's SuffixIndex (earlier conversations on this
// tokenizer) or in the context itself, and the likeliest continuation that followed it; as a
// tree (proposeTree), the ranked distinct continuations merged (DraftTree::merge).
// Thread-safety: engine thread only (the index is added to on that thread between steps).
#pragma once

#include "engine/spec/drafter.h"
#include "engine/spec/suffix_index.h"

namespace hearth {

struct HistoryDraftConfig {
    int32_t minMatch = 2;  // tokens of the context's suffix that must match
    // A drafted token whose estimated probability (the product of the conditional frequencies
    // up to it) falls below this ends the draft.
    double minProb = 0.1;
    int32_t maxContinuations = 4;  // candidates() returns at most this many (unless told)
};

class HistoryDrafter final : public Drafter {
public:
    // index must outlive the drafter.
    HistoryDrafter(const SuffixIndex& index, HistoryDraftConfig config);
    Result<Draft> propose(std::span<const int32_t> context, int32_t maxTokens, const SpecSampler& sampler) override;
    // The continuations, each cut where its probability falls below minProb, merged best first
    // with score = the estimated probability of the whole continuation, so that a node's score
    // is the summed probability of the continuations through it.
    Result<DraftTree> proposeTree(std::span<const int32_t> context, int32_t maxNodes, int32_t maxDepth,
                                  const SpecSampler& sampler) override;
    // proposeTree's candidates before the merge: each continuation cut below minProb, scored by
    // the probability of the whole; matchLength (when given) receives the lookup's.
    std::vector<DraftCandidate> ranked(std::span<const int32_t> context, int32_t maxDepth, int32_t maxContinuations,
                                       int32_t* matchLength = nullptr) const;
    // Ranked distinct continuations of at most maxTokens tokens.
    SuffixLookup candidates(std::span<const int32_t> context, int32_t maxTokens, int32_t maxContinuations = 0) const;

private:
    const SuffixIndex& index_;
    HistoryDraftConfig config_;
};

}  // namespace hearth

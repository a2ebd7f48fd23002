// NGramDrafter: prompt lookup decoding. The last n tokens (n from maxN down to minN) are
// looked up in the earlier tokens of the same sequence; the tokens that followed their most
// recent earlier occurrence are the draft. No model; strong when a reply quotes or edits.
// As a tree: the distinct continuations of every earlier occurrence of the longest suffixes
// that have one, longer matches first, then by how many occurrences continue with the same
// token, then the most recent, merged (DraftTree::merge).
#pragma once

#include "engine/spec/drafter.h"

namespace hearth {

class NGramDrafter final : public Drafter {
public:
    NGramDrafter(int32_t minN, int32_t maxN);
    Result<Draft> propose(std::span<const int32_t> context, int32_t maxTokens, const SpecSampler& sampler) override;
    Result<DraftTree> proposeTree(std::span<const int32_t> context, int32_t maxNodes, int32_t maxDepth,
                                  const SpecSampler& sampler) override;
    // The ranked continuations proposeTree merges (at most maxCandidates, each up to maxDepth);
    // matchLength (when given) receives the longest suffix matched (0: none).
    std::vector<DraftCandidate> candidates(std::span<const int32_t> context, int32_t maxDepth, int32_t maxCandidates,
                                           int32_t* matchLength = nullptr) const;
    // The draft alone, for the policy's repetition check.
    std::vector<int32_t> lookup(std::span<const int32_t> context, int32_t maxTokens) const;

private:
    int32_t minN_, maxN_;
};

}  // namespace hearth

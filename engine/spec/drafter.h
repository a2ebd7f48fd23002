// Drafter: proposes the tokens that may follow a sequence, cheaply, for the target model to
// verify in one forward pass. Implementations: NGramDrafter (the sequence's own tokens) and
// DraftModelDrafter (a smaller model with the same vocabulary). A draft is a chain (Draft) or
// a token tree (DraftTree: several candidate continuations sharing their common prefixes).
// Thread-safety: engine thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/error.h"
#include "engine/spec/spec_sampler.h"

namespace hearth {

struct Draft {
    std::vector<int32_t> tokens;
    // q[i]: the distribution tokens[i] was drawn from (the sampler chain over the draft's
    // logits); empty when the drafter is deterministic (a point mass on tokens[i]).
    std::vector<std::vector<TokenProb>> q;
};

// A candidate continuation of the context, as a drafter that proposes several ranks them.
struct DraftCandidate {
    std::vector<int32_t> tokens;
    double score = 0;  // higher: more likely (a count, a frequency, a probability)
};

// A token tree of drafts. Node i is tokens[i]; parents[i] is the node it follows (an earlier
// node, so parents come before their children), or -1: it follows the last committed token.
// Siblings have distinct tokens. Verified in one forward pass, each node seeing the committed
// sequence and its own ancestors only, at position (committed length + depth(i)).
struct DraftTree {
    std::vector<int32_t> tokens;
    std::vector<int32_t> parents;
    // score[i]: the summed scores of the candidates through node i (DraftTree::merge), or the
    // drafter's own estimate. Among siblings, the first came from the best-ranked candidate.
    std::vector<double> score;
    // q[i]: the distribution tokens[i] was drawn from; empty when the drafter is
    // deterministic. Sampled tree verification needs the siblings' shared q per parent.
    std::vector<std::vector<TokenProb>> q;

    size_t size() const { return tokens.size(); }
    bool empty() const { return tokens.empty(); }
    // 1 for a child of the committed token.
    int32_t depth(size_t i) const;
    int32_t maxDepth() const;
    // True when every node has a parent index in [-1, i) and siblings' tokens are distinct.
    bool valid() const;
    // True when no node has two children (the tree is a chain).
    bool isChain() const;
    // The nodes from the root's child down to node (inclusive), in order.
    std::vector<int32_t> pathTo(int32_t node) const;
    // The child of parent (-1: the committed token) with token, or -1.
    int32_t child(int32_t parent, int32_t token) const;
    // A chain as a tree, and back (the tree's first-child path when it branches).
    static DraftTree fromChain(const Draft& d);
    Draft firstPath() const;
    // Candidates merged into one tree, best score first, sharing common prefixes: each adds the
    // nodes its prefix does not already have, truncated at maxDepth and while the tree has
    // fewer than maxNodes nodes. A node's score sums those of the candidates through it.
    static DraftTree merge(std::span<const DraftCandidate> candidates, int32_t maxNodes, int32_t maxDepth);
};

class Drafter {
public:
    virtual ~Drafter() = default;
    // Up to maxTokens tokens to follow context (the prompt and the output so far). sampler
    // holds context as its history and the request's sampling parameters; a drafter that
    // samples uses a copy with its own seed. An empty draft means "nothing worth verifying".
    virtual Result<Draft> propose(std::span<const int32_t> context, int32_t maxTokens, const SpecSampler& sampler) = 0;
    // Several continuations as a tree of at most maxNodes nodes and maxDepth levels. The
    // default is the chain propose() gives.
    virtual Result<DraftTree> proposeTree(std::span<const int32_t> context, int32_t maxNodes, int32_t maxDepth,
                                          const SpecSampler& sampler) {
        auto d = propose(context, std::min(maxNodes, maxDepth), sampler);
        if (!d) return std::unexpected(d.error());
        return DraftTree::fromChain(*d);
    }
    // Forward passes this drafter ran since construction.
    virtual int32_t nForwards() const { return 0; }
};

}  // namespace hearth

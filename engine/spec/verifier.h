// The verifier: given the target's logits for the last context token and each drafted token
// (k + 1 rows from one forward pass), decides which drafted tokens the target keeps and the
// one token that follows them. Greedy: exact match with the target's greedy choice. Sampling:
// Leviathan et al. (arXiv 2211.17192) rejection sampling — keep a drafted token with
// probability min(1, p/q); at the first rejection draw from norm(max(p - q, 0)); when every
// one is kept, a bonus token from the last row. The output is distributed exactly as the
// target's own sampling.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/spec/drafter.h"
#include "engine/spec/spec_sampler.h"

namespace hearth {

struct VerifyOutcome {
    std::vector<int32_t> tokens;  // the kept drafted tokens, then one more (correction or bonus)
    int32_t nAccepted = 0;  // drafted tokens kept
    bool bonus = false;  // every drafted token was kept (a tree: the path reached a leaf)
    // A tree: the kept nodes, root to node; and for each of tokens the logit row it was chosen
    // from (0: the token before the drafts, 1 + i: node i). Empty for a chain (rows 0, 1, ...).
    std::vector<int32_t> nodes = {};
    std::vector<int32_t> rows = {};
};

// A verify step's rows: [n, nVocab] logits; or, with nFirst > 0, each row's nFirst first logits
// ([n, nFirst], Backend::topKRows), where a row whose first entry has id -1 (a NaN or an infinity
// in it) reads its logits instead.
struct TargetRows {
    std::span<const float> logits;
    int32_t nVocab = 0;
    std::span<const TokenLogit> first = {};
    int32_t nFirst = 0;

    TargetRow row(size_t i) const {
        const auto at = i * static_cast<size_t>(nFirst);
        if (nFirst > 0 && first[at].id >= 0) return TargetRow::first(first.subspan(at, static_cast<size_t>(nFirst)));
        return logits.subspan(i * static_cast<size_t>(nVocab), static_cast<size_t>(nVocab));
    }
};

// rows: draft.tokens.size() + 1 of them. sampler's history is the context; the output tokens
// are pushed onto it. Precondition: draft.q is empty or has one entry per drafted token.
VerifyOutcome verifyDraft(const TargetRows& rows, const Draft& draft, SpecSampler& sampler);

// Tree verification. rows: tree.size() + 1 of them: the token before the drafts, then each
// node. Greedy: from the root, while the target's greedy token at the current node is one of its
// children, keep it; the longest such path, then the target's token at its end. Sampled:
// SpecInfer's multi-step speculative sampling (Miao et al., arXiv 2305.09781, section 4.2): at
// each node its children are tried in order, child c kept with probability min(1, p(c) / q_c(c));
// a refusal replaces p by norm(max(p - q_c, 0)); when all are refused the next token is drawn from
// what p has become. q_c: tree.q[c], or a point mass on c's token when the drafter is
// deterministic. The output is distributed as the target's own sampling.
VerifyOutcome verifyTree(const TargetRows& rows, const DraftTree& tree, SpecSampler& sampler);

// A token from norm(max(p - q, 0)); q empty: a point mass on `drafted`. Falls back to p when
// the residual is empty (only reachable through rounding).
int32_t drawResidual(std::span<const TokenProb> p, std::span<const TokenProb> q, int32_t drafted, SpecSampler& sampler);

}  // namespace hearth

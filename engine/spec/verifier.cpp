// Row by row: the penalty history grows with each kept token, so each row's p is the one
// plain decoding would have used at that position.
#include "engine/spec/verifier.h"

#include <algorithm>

namespace hearth {

int32_t drawResidual(std::span<const TokenProb> p, std::span<const TokenProb> q, int32_t drafted,
                     SpecSampler& sampler) {
    std::vector<TokenProb> residual;
    residual.reserve(p.size());
    double sum = 0.0;
    for (const TokenProb& t : p) {
        const double qt = q.empty() ? (t.id == drafted ? 1.0 : 0.0) : probabilityOf(q, t.id);
        const double r = std::max(t.p - qt, 0.0);
        if (r > 0.0) residual.push_back({t.id, r});
        sum += r;
    }
    if (residual.empty()) return sampler.draw(p);
    for (TokenProb& t : residual) t.p /= sum;
    return sampler.draw(residual);
}

namespace {

// One row of sampled verification: true when drafted is kept, else out gets the replacement.
bool acceptSampled(TargetRow row, const Draft& draft, size_t i, SpecSampler& sampler, int32_t& out) {
    const std::vector<TokenProb> p = sampler.distribution(row);
    const int32_t d = draft.tokens[i];
    const double pd = probabilityOf(p, d);
    const double qd = draft.q.empty() ? 1.0 : probabilityOf(draft.q[i], d);
    // qd == 0 cannot happen for a token drawn from q; treat it as "p wins" when p has it.
    const double ratio = qd > 0.0 ? pd / qd : (pd > 0.0 ? 1.0 : 0.0);
    if (sampler.uniform() < std::min(1.0, ratio)) return true;
    out = drawResidual(p, draft.q.empty() ? std::span<const TokenProb>() : std::span<const TokenProb>(draft.q[i]), d,
                       sampler);
    return false;
}

}  // namespace

VerifyOutcome verifyDraft(const TargetRows& rows, const Draft& draft, SpecSampler& sampler) {
    VerifyOutcome o;
    const auto row = [&](size_t i) { return rows.row(i); };
    for (size_t i = 0; i < draft.tokens.size(); ++i) {
        int32_t replacement = -1;
        const bool kept = sampler.greedy() ? sampler.greedyToken(row(i)) == draft.tokens[i]
                                           : acceptSampled(row(i), draft, i, sampler, replacement);
        if (!kept) {
            if (sampler.greedy()) replacement = sampler.greedyToken(row(i));
            sampler.push(replacement);
            o.tokens.push_back(replacement);
            return o;
        }
        sampler.push(draft.tokens[i]);
        o.tokens.push_back(draft.tokens[i]);
        ++o.nAccepted;
    }
    const size_t last = draft.tokens.size();
    const int32_t next =
        sampler.greedy() ? sampler.greedyToken(row(last)) : sampler.draw(sampler.distribution(row(last)));
    sampler.push(next);
    o.tokens.push_back(next);
    o.bonus = !draft.tokens.empty();
    return o;
}

namespace {

// norm(max(p - q, 0)) (q empty: a point mass on drafted); p unchanged when nothing is left
// (only reachable through rounding).
void subtractResidual(std::vector<TokenProb>& p, std::span<const TokenProb> q, int32_t drafted) {
    std::vector<TokenProb> residual;
    residual.reserve(p.size());
    double sum = 0.0;
    for (const TokenProb& t : p) {
        const double qt = q.empty() ? (t.id == drafted ? 1.0 : 0.0) : probabilityOf(q, t.id);
        const double r = std::max(t.p - qt, 0.0);
        if (r > 0.0) residual.push_back({t.id, r});
        sum += r;
    }
    if (residual.empty()) return;
    for (TokenProb& t : residual) t.p /= sum;
    p = std::move(residual);
}

}  // namespace

VerifyOutcome verifyTree(const TargetRows& rows, const DraftTree& tree, SpecSampler& sampler) {
    VerifyOutcome o;
    const auto row = [&](int32_t i) { return rows.row(static_cast<size_t>(i)); };
    int32_t at = -1;  // the node whose row decides next (-1: the token before the drafts)
    for (;;) {
        const int32_t r = at + 1;
        int32_t next = -1, token = -1;
        bool hasChild = false;
        if (sampler.greedy()) {
            token = sampler.greedyToken(row(r));
            next = tree.child(at, token);
            for (size_t i = 0; i < tree.size() && !hasChild; ++i) hasChild = tree.parents[i] == at;
        } else {
            std::vector<TokenProb> p = sampler.distribution(row(r));
            for (size_t i = 0; i < tree.size() && next < 0; ++i) {
                if (tree.parents[i] != at) continue;
                hasChild = true;
                const int32_t d = tree.tokens[i];
                const std::span<const TokenProb> q =
                    tree.q.empty() ? std::span<const TokenProb>() : std::span<const TokenProb>(tree.q[i]);
                const double pd = probabilityOf(p, d), qd = q.empty() ? 1.0 : probabilityOf(q, d);
                const double ratio = qd > 0.0 ? pd / qd : (pd > 0.0 ? 1.0 : 0.0);
                if (sampler.uniform() < std::min(1.0, ratio)) next = static_cast<int32_t>(i), token = d;
                else subtractResidual(p, q, d);
            }
            if (next < 0) token = sampler.draw(p);
        }
        sampler.push(token);
        o.tokens.push_back(token);
        o.rows.push_back(r);
        if (next < 0) {
            o.bonus = !tree.empty() && !hasChild;
            return o;
        }
        o.nodes.push_back(next);
        ++o.nAccepted;
        at = next;
    }
}

}  // namespace hearth

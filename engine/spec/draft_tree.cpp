// DraftTree: depth, checks, paths and the merge of ranked candidates into one tree.
#include <algorithm>
#include <numeric>

#include "engine/spec/drafter.h"

namespace hearth {

int32_t DraftTree::depth(size_t i) const {
    int32_t d = 0;
    for (auto n = static_cast<int32_t>(i); n >= 0; n = parents[static_cast<size_t>(n)]) ++d;
    return d;
}

int32_t DraftTree::maxDepth() const {
    std::vector<int32_t> d(size());
    int32_t best = 0;
    for (size_t i = 0; i < size(); ++i) {
        d[i] = parents[i] < 0 ? 1 : d[static_cast<size_t>(parents[i])] + 1;
        best = std::max(best, d[i]);
    }
    return best;
}

bool DraftTree::valid() const {
    if (parents.size() != tokens.size()) return false;
    if (!score.empty() && score.size() != tokens.size()) return false;
    if (!q.empty() && q.size() != tokens.size()) return false;
    for (size_t i = 0; i < size(); ++i) {
        if (parents[i] < -1 || parents[i] >= static_cast<int32_t>(i)) return false;
        for (size_t j = 0; j < i; ++j)
            if (parents[j] == parents[i] && tokens[j] == tokens[i]) return false;
    }
    return true;
}

bool DraftTree::isChain() const {
    for (size_t i = 0; i < size(); ++i)
        if (parents[i] != static_cast<int32_t>(i) - 1) return false;
    return true;
}

std::vector<int32_t> DraftTree::pathTo(int32_t node) const {
    std::vector<int32_t> path;
    for (int32_t n = node; n >= 0; n = parents[static_cast<size_t>(n)]) path.push_back(n);
    std::reverse(path.begin(), path.end());
    return path;
}

int32_t DraftTree::child(int32_t parent, int32_t token) const {
    for (size_t i = 0; i < size(); ++i)
        if (parents[i] == parent && tokens[i] == token) return static_cast<int32_t>(i);
    return -1;
}

DraftTree DraftTree::fromChain(const Draft& d) {
    DraftTree t;
    t.tokens = d.tokens;
    t.parents.resize(d.tokens.size());
    std::iota(t.parents.begin(), t.parents.end(), -1);
    t.score.assign(d.tokens.size(), 1.0);
    t.q = d.q;
    return t;
}

Draft DraftTree::firstPath() const {
    Draft d;
    int32_t at = -1;
    for (size_t i = 0; i < size(); ++i) {
        if (parents[i] != at) continue;
        d.tokens.push_back(tokens[i]);
        if (!q.empty()) d.q.push_back(q[i]);
        at = static_cast<int32_t>(i);
    }
    return d;
}

DraftTree DraftTree::merge(std::span<const DraftCandidate> candidates, int32_t maxNodes, int32_t maxDepth) {
    std::vector<size_t> order(candidates.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return candidates[a].score > candidates[b].score; });
    DraftTree t;
    for (const size_t c : order) {
        const DraftCandidate& cand = candidates[c];
        int32_t at = -1;
        const auto n = std::min<size_t>(cand.tokens.size(), static_cast<size_t>(std::max(0, maxDepth)));
        for (size_t k = 0; k < n; ++k) {
            int32_t next = t.child(at, cand.tokens[k]);
            if (next < 0) {
                if (std::ssize(t.tokens) >= maxNodes) break;
                t.tokens.push_back(cand.tokens[k]);
                t.parents.push_back(at);
                t.score.push_back(0.0);
                next = static_cast<int32_t>(t.tokens.size() - 1);
            }
            t.score[static_cast<size_t>(next)] += cand.score;
            at = next;
        }
    }
    return t;
}

}  // namespace hearth

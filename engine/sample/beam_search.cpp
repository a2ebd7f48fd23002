// Beam selection: each live beam offers its nBeams + |endTokens| best extensions (enough: a
// lower one ranks below nBeams non-ending extensions of the same beam, so the walk stops
// before it), all offers are ranked together and walked best first. With an `ends` predicate
// (stop strings) any token may end: a beam offers as many of its best as hold nBeams that don't.
#include "engine/sample/beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hearth {
namespace {

bool isEnd(std::span<const int32_t> endTokens, int32_t token) {
    return std::find(endTokens.begin(), endTokens.end(), token) != endTokens.end();
}

bool better(const BeamCandidate& a, const BeamCandidate& b) {
    if (a.logProb != b.logProb) return a.logProb > b.logProb;
    if (a.parent != b.parent) return a.parent < b.parent;
    return a.token < b.token;
}

}  // namespace

void logSoftmax(std::span<const float> logits, std::vector<double>& out) {
    out.resize(logits.size());
    double maxLogit = -std::numeric_limits<double>::infinity();
    for (float l : logits) maxLogit = std::max(maxLogit, static_cast<double>(l));
    double sum = 0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - maxLogit);
    const double logSum = maxLogit + std::log(sum);
    for (size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<double>(logits[i]) - logSum;
}

double beamScore(double logProb, size_t length, float alpha) {
    if (alpha == 0.0f || length == 0) return logProb;
    return logProb / std::pow(static_cast<double>(length), static_cast<double>(alpha));
}

const char* beamEndName(BeamEnd e) {
    switch (e) {
    case BeamEnd::Eos: return "eos";
    case BeamEnd::Length: return "length";
    case BeamEnd::Stop: return "stop";
    case BeamEnd::Timeout: return "timeout";
    case BeamEnd::Context: return "context";
    }
    return "length";
}

namespace {

// Sorts the best k of order (every token id) by lp, best first (ties: lower id).
void sortBest(std::vector<int32_t>& order, const std::vector<double>& lp, size_t k) {
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [&](int32_t x, int32_t y) {
                          return lp[static_cast<size_t>(x)] > lp[static_cast<size_t>(y)] ||
                              (lp[static_cast<size_t>(x)] == lp[static_cast<size_t>(y)] && x < y);
                      });
}

// How many of beam b's best extensions it must offer: enough to hold nBeams that do not end
// (by an end token or `ends`), doubling the sorted prefix until it does.
size_t offerCount(std::vector<int32_t>& order, const std::vector<double>& lp, int32_t b, int32_t nBeams,
                  std::span<const int32_t> endTokens, const BeamEndsFn& ends) {
    size_t k = std::min(order.size(), static_cast<size_t>(nBeams) + endTokens.size());
    sortBest(order, lp, k);
    if (!ends) return k;
    for (size_t sorted = k;; k = std::min(order.size(), 2 * k)) {
        if (k > sorted) sortBest(order, lp, sorted = k);
        int32_t open = 0;
        for (size_t i = 0; i < k && open < nBeams; ++i)
            if (!isEnd(endTokens, order[i]) && !ends(b, order[i])) ++open;
        if (open >= nBeams || k == order.size()) return k;
    }
}

}  // namespace

BeamChoice chooseBeams(std::span<const double> beamLogProbs, std::span<const std::vector<double>> tokenLogProbs,
                       int32_t nBeams, std::span<const int32_t> endTokens, bool last, const BeamEndsFn& ends) {
    std::vector<BeamCandidate> offers;
    std::vector<int32_t> order;
    const BeamEndsFn none;
    const BeamEndsFn& offerEnds = last ? none : ends;  // with `last` every extension ends anyway
    for (size_t b = 0; b < tokenLogProbs.size(); ++b) {
        const std::vector<double>& lp = tokenLogProbs[b];
        order.resize(lp.size());
        for (size_t t = 0; t < lp.size(); ++t) order[t] = static_cast<int32_t>(t);
        const size_t k = offerCount(order, lp, static_cast<int32_t>(b), nBeams, endTokens, offerEnds);
        for (size_t i = 0; i < k; ++i)
            offers.push_back({static_cast<int32_t>(b), order[i], beamLogProbs[b] + lp[static_cast<size_t>(order[i])]});
    }
    std::sort(offers.begin(), offers.end(), better);
    BeamChoice choice;
    for (const BeamCandidate& c : offers) {
        if (std::ssize(choice.live) >= nBeams || (last && std::ssize(choice.ended) >= nBeams)) break;
        if (c.logProb == -std::numeric_limits<double>::infinity()) break;  // banned: never chosen
        if (last || isEnd(endTokens, c.token) || (ends && ends(c.parent, c.token))) choice.ended.push_back(c);
        else choice.live.push_back(c);
    }
    return choice;
}

}  // namespace hearth

// The chain's stages in Sampler::sample's order, ending in probabilities instead of a draw.
#include "engine/spec/spec_sampler.h"

#include <algorithm>
#include <cmath>

namespace hearth {

SpecSampler::SpecSampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

int32_t SpecSampler::greedyToken(TargetRow row) {
    if (!row.firstLogits.empty())
        return argmax(std::span<const TokenLogit>(biasFirstLogits(row.firstLogits, params_, history_, cands_)));
    if (params_.logitBias.empty() && !penaltiesActive(params_)) return argmax(row.logits);
    return argmax(std::span<const TokenLogit>(biasedCandidates(row.logits, params_, history_, cands_)));
}

std::vector<TokenProb> SpecSampler::distribution(TargetRow row) {
    std::span<TokenLogit> c;
    if (row.firstLogits.empty()) {
        c = topKCandidates(row.logits, params_, history_, cands_);
    } else {
        c = biasFirstLogits(row.firstLogits, params_, history_, cands_);
        c = c.first(sampleTopK(c, params_.topK));
    }
    c = c.first(sampleTypicalP(c, params_.typicalP));
    c = c.first(sampleTopP(c, params_.topP));
    c = c.first(sampleMinP(c, params_.minP));
    applyTemperature(c, params_.temperature);
    double maxLogit = -INFINITY;
    for (const TokenLogit& t : c) maxLogit = std::max(maxLogit, static_cast<double>(t.logit));
    std::vector<TokenProb> dist;
    dist.reserve(c.size());
    double sum = 0.0;
    for (const TokenLogit& t : c) {
        const double e = std::isfinite(t.logit) ? std::exp(static_cast<double>(t.logit) - maxLogit) : 0.0;
        if (e > 0.0) dist.push_back({t.id, e});
        sum += e;
    }
    for (TokenProb& t : dist) t.p /= sum;
    return dist;
}

int32_t SpecSampler::draw(std::span<const TokenProb> dist) {
    const double u = uniform();
    double cumulative = 0.0;
    for (const TokenProb& t : dist) {
        cumulative += t.p;
        if (u < cumulative) return t.id;
    }
    return dist.empty() ? 0 : dist.back().id;  // rounding left the sum just under 1
}

double probabilityOf(std::span<const TokenProb> dist, int32_t id) {
    for (const TokenProb& t : dist)
        if (t.id == id) return t.p;
    return 0.0;
}

}  // namespace hearth

// Sampler stages (one function each) and the chain that runs them in DESIGN.md's order.
#include "engine/str_cat.h"
#include "engine/sample/sampler.h"

#include <algorithm>
#include <cmath>

namespace hearth {
namespace {

bool before(const TokenLogit& a, const TokenLogit& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Softmax probabilities of sorted candidates (the first has the largest logit).
std::vector<double> probabilities(std::span<const TokenLogit> cands) {
    std::vector<double> p(cands.size());
    double sum = 0.0;
    for (size_t i = 0; i < cands.size(); ++i) sum += p[i] = std::exp(double(cands[i].logit) - cands[0].logit);
    for (double& x : p) x /= sum;
    return p;
}

}  // namespace

Result<void> validate(const SamplingParams& p) {
    if (!(p.temperature >= 0.0f && p.temperature <= 100.0f))
        return fail(ErrorCode::InvalidArgument, strCat("temperature ", p.temperature, " is out of range (0..100)"));
    if (p.topK < 0) return fail(ErrorCode::InvalidArgument, strCat("top-k ", p.topK, " must be >= 0"));
    if (!(p.topP > 0.0f && p.topP <= 1.0f))
        return fail(ErrorCode::InvalidArgument, strCat("top-p ", p.topP, " is out of range (0..1]"));
    if (!(p.minP >= 0.0f && p.minP <= 1.0f))
        return fail(ErrorCode::InvalidArgument, strCat("min-p ", p.minP, " is out of range [0..1]"));
    return {};
}

size_t sampleTopK(std::span<TokenLogit> cands, int32_t k) {
    const size_t n = (k <= 0 || static_cast<size_t>(k) >= cands.size()) ? cands.size() : static_cast<size_t>(k);
    std::partial_sort(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(n), cands.end(), before);
    return n;
}

size_t sampleTopP(std::span<TokenLogit> cands, float p) {
    if (p >= 1.0f || cands.empty()) return cands.size();
    const std::vector<double> probs = probabilities(cands);
    double cumulative = 0.0;
    for (size_t i = 0; i < cands.size(); ++i) {
        cumulative += probs[i];
        if (cumulative >= p) return i + 1;  // keep the smallest prefix reaching p
    }
    return cands.size();
}

size_t sampleMinP(std::span<TokenLogit> cands, float minP) {
    if (minP <= 0.0f || cands.empty()) return cands.size();
    // p_i >= minP * p_max  <=>  logit_i >= logit_max + ln(minP)
    const float threshold = cands[0].logit + std::log(minP);
    size_t n = 1;
    while (n < cands.size() && cands[n].logit >= threshold) ++n;
    return n;
}

void applyTemperature(std::span<TokenLogit> cands, float temperature) {
    for (TokenLogit& c : cands) c.logit /= temperature;
}

int32_t argmax(std::span<const float> logits) {
    size_t best = 0;
    for (size_t i = 1; i < logits.size(); ++i)
        if (logits[i] > logits[best]) best = i;  // strict: the lower id wins a tie
    return static_cast<int32_t>(best);
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {}

int32_t Sampler::sample(std::span<const float> logits) {
    if (params_.temperature <= 0.0f) return argmax(logits);
    cands_.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) cands_[i] = {static_cast<int32_t>(i), logits[i]};
    std::span<TokenLogit> c(cands_);
    c = c.first(sampleTopK(c, params_.topK));
    if (params_.topK <= 0) std::sort(c.begin(), c.end(), before);
    c = c.first(sampleTopP(c, params_.topP));
    c = c.first(sampleMinP(c, params_.minP));
    applyTemperature(c, params_.temperature);
    const std::vector<double> probs = probabilities(c);
    std::discrete_distribution<size_t> pick(probs.begin(), probs.end());
    return c[pick(rng_)].id;
}

}  // namespace hearth

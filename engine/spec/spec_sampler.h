// The sampler chain of engine/sample/sampler.h as probabilities, for speculative decoding:
// the verifier needs the target's distribution p and the draft's q after the same stages
// (bias, penalties over the same history, top-k, typical-p, top-p, min-p, temperature).
// Thread-safety: a value owned by one request on the engine thread.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "engine/sample/sampler.h"

namespace hearth {

struct TokenProb {
    int32_t id;
    double p;
};

class SpecSampler {
public:
    // params must pass validate(); the generator is seeded with params.seed.
    explicit SpecSampler(const SamplingParams& params);
    void reseed(uint64_t seed) { rng_.seed(seed); }
    const SamplingParams& params() const { return params_; }
    bool greedy() const { return params_.temperature <= 0.0f; }

    // Tokens so far (prompt, then output), for the penalty window.
    void push(int32_t token) { history_.push_back(token); }
    void observe(std::span<const int32_t> tokens) { history_.insert(history_.end(), tokens.begin(), tokens.end()); }
    void truncate(size_t n) { history_.resize(n); }
    size_t historySize() const { return history_.size(); }

    // Greedy: the token Sampler::sample would choose with temperature 0 after this history.
    int32_t greedyToken(std::span<const float> logits);
    // Sampling: the chain's distribution (tokens with p > 0), in the chain's order.
    std::vector<TokenProb> distribution(std::span<const float> logits);
    double uniform() { return uniform01(rng_); }
    // Inverse CDF at a fresh uniform draw.
    int32_t draw(std::span<const TokenProb> dist);

private:
    std::span<TokenLogit> biasedCandidates(std::span<const float> logits);

    SamplingParams params_;
    std::mt19937_64 rng_;
    std::vector<TokenLogit> cands_;
    std::vector<int32_t> history_;
};

// p(id) in dist, 0 when absent.
double probabilityOf(std::span<const TokenProb> dist, int32_t id);

}  // namespace hearth

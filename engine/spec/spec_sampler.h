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

// A row of the target's logits: all of them, or (Backend::topKRows) the row's first ones in
// before()'s order, at least SpecSampler::candidatesNeeded() of them.
struct TargetRow {
    TargetRow(std::span<const float> all) : logits(all) {}  // NOLINT: a row of logits is a row
    TargetRow(const std::vector<float>& all) : logits(all) {}  // NOLINT
    static TargetRow first(std::span<const TokenLogit> entries) {
        TargetRow r(std::span<const float>{});
        r.firstLogits = entries;
        return r;
    }
    std::span<const float> logits;
    std::span<const TokenLogit> firstLogits;
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
    int32_t greedyToken(TargetRow row);
    // Sampling: the chain's distribution (tokens with p > 0), in the chain's order.
    std::vector<TokenProb> distribution(TargetRow row);
    // How many first logits a row needs (hearth::candidatesNeeded over this history, allowing for
    // nMore tokens pushed before the last row is read); 0: whole rows.
    int32_t candidatesNeeded(int32_t nVocab, int32_t maxCandidates, int32_t nMore) const {
        return hearth::candidatesNeeded(params_, history_, nVocab, maxCandidates, nMore);
    }
    double uniform() { return uniform01(rng_); }
    // Inverse CDF at a fresh uniform draw.
    int32_t draw(std::span<const TokenProb> dist);

private:
    SamplingParams params_;
    std::mt19937_64 rng_;
    std::vector<TokenLogit> cands_;
    std::vector<int32_t> history_;
};

// p(id) in dist, 0 when absent.
double probabilityOf(std::span<const TokenProb> dist, int32_t id);

}  // namespace hearth

// Choosing the next token from logits: a chain of small stages over (token, logit) candidates
// — top-k, top-p, min-p, temperature — then a seeded draw, or greedy argmax when temperature
// is 0. (Penalties, logit bias and typical-p arrive with the full sampler, issue 4.)
// Thread-safety: a Sampler belongs to one sequence on the engine thread.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "engine/error.h"

namespace hearth {

struct SamplingParams {
    float temperature = 0.8f;  // 0 = greedy
    int32_t topK = 40;         // 0 = off
    float topP = 0.95f;        // 1 = off
    float minP = 0.05f;        // 0 = off
    uint64_t seed = 0;
};

// Range checks with messages a user can act on.
Result<void> validate(const SamplingParams& params);

struct TokenLogit {
    int32_t id;
    float logit;
};

// The stages, each over candidates; each may shrink or reorder the span's contents and returns
// the new count. Candidates are sorted by logit, descending (ties: lower id first) after topK.
size_t sampleTopK(std::span<TokenLogit> cands, int32_t k);
size_t sampleTopP(std::span<TokenLogit> cands, float p);      // needs sorted candidates
size_t sampleMinP(std::span<TokenLogit> cands, float minP);   // needs sorted candidates
void applyTemperature(std::span<TokenLogit> cands, float temperature);

// Greedy: the highest logit; the lower id wins a tie.
int32_t argmax(std::span<const float> logits);

class Sampler {
public:
    explicit Sampler(const SamplingParams& params);
    int32_t sample(std::span<const float> logits);

private:
    SamplingParams params_;
    std::mt19937_64 rng_;
    std::vector<TokenLogit> cands_;
};

}  // namespace hearth

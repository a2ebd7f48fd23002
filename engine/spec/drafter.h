// Drafter: proposes the tokens that may follow a sequence, cheaply, for the target model to
// verify in one forward pass. Implementations: NGramDrafter (the sequence's own tokens) and
// DraftModelDrafter (a smaller model with the same vocabulary).
// Thread-safety: engine thread only.
#pragma once

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

class Drafter {
public:
    virtual ~Drafter() = default;
    // Up to maxTokens tokens to follow context (the prompt and the output so far). sampler
    // holds context as its history and the request's sampling parameters; a drafter that
    // samples uses a copy with its own seed. An empty draft means "nothing worth verifying".
    virtual Result<Draft> propose(std::span<const int32_t> context, int32_t maxTokens, const SpecSampler& sampler) = 0;
    // Forward passes this drafter ran since construction.
    virtual int32_t nForwards() const { return 0; }
};

}  // namespace hearth

// Beam search as plain data: log-softmax, hypothesis scores (summed log-probability, optionally
// length-normalised) and the choice of the next beams from the live beams' log-probabilities.
// No model here: engine/runner/beam_runner runs the sequences (sharing prefix blocks).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace hearth {

struct BeamSearchParams {
    int32_t nBeams = 4;
    int32_t maxTokens = 64;         // generated tokens, the end token included
    // score = logProb / length^lengthNormAlpha (length: generated tokens); 0 ranks by the sum.
    float lengthNormAlpha = 0.0f;
    std::vector<int32_t> endTokens;  // a hypothesis ends with one of these (EOS, EOT)
};

struct BeamHypothesis {
    std::vector<int32_t> tokens;  // generated ids, the end token included when ended
    double logProb = 0;           // Σ log p(token | prefix) over tokens
    double score = 0;             // beamScore(logProb, tokens.size(), alpha)
    bool ended = false;           // by an end token (else by maxTokens)
};

// log(softmax(logits)) in double; -inf logits give -inf.
void logSoftmax(std::span<const float> logits, std::vector<double>& out);
double beamScore(double logProb, size_t length, float alpha);

// One extension of a live beam by a token.
struct BeamCandidate {
    int32_t parent = 0;  // index of the live beam it extends
    int32_t token = 0;
    double logProb = 0;  // the parent's logProb + log p(token)
    bool operator==(const BeamCandidate&) const = default;
};
struct BeamChoice {
    std::vector<BeamCandidate> live;   // the next live beams, best first (at most nBeams)
    std::vector<BeamCandidate> ended;  // hypotheses finished by this step, best first
};

// Ranks every extension of every live beam by logProb (ties: lower parent, then lower token)
// and walks them best first: an end token (or any token when `last`, the maxTokens-th)
// finishes a hypothesis, any other becomes a live beam, until nBeams live beams are found
// (with `last`, the nBeams best extensions all finish). beamLogProbs[b]: live beam b's logProb;
// tokenLogProbs[b]: its next-token log-probabilities.
BeamChoice chooseBeams(std::span<const double> beamLogProbs, std::span<const std::vector<double>> tokenLogProbs,
                       int32_t nBeams, std::span<const int32_t> endTokens, bool last);

}  // namespace hearth

// Beam search as plain data: log-softmax, hypothesis scores (summed log-probability, optionally
// length-normalised) and the choice of the next beams from the live beams' log-probabilities.
// No model here: engine/runner/beam_runner runs the sequences (sharing prefix blocks).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/sample/sampler.h"

namespace hearth {

struct BeamSearchParams {
    int32_t nBeams = 4;
    int32_t maxTokens = 64;  // generated tokens, the end token included
    // score = logProb / length^lengthNormAlpha (length: generated tokens); 0 ranks by the sum.
    float lengthNormAlpha = 0.0f;
    std::vector<int32_t> endTokens;  // a hypothesis ends with one of these (EOS, EOT)
    // Applied to each beam's logits before its log-softmax, as Hugging Face's beam search
    // applies its logits processors: logit bias, then the repetition/presence/frequency
    // penalties over the last repeatLastN tokens of prompt + beam (sampler.h's stages).
    std::vector<LogitBias> logitBias;
    float repeatPenalty = 1.0f, presencePenalty = 0.0f, frequencyPenalty = 0.0f;
    int32_t repeatLastN = 64;
    // Stop strings: a hypothesis whose decoded text contains one ends there (reason Stop), its
    // text cut before the stop string. Needs decode (generated ids -> text); decode also fills
    // every hypothesis's text.
    std::vector<std::string> stop;
    std::function<std::string(std::span<const int32_t>)> decode;
    int64_t timeoutMs = 0;  // > 0: after this long, the best hypotheses so far (reason Timeout)
    // maxTokens is the room the context leaves: hypotheses cut there end with reason Context
    // (as do live beams when the KV cache, the context's memory, cannot hold the next step).
    bool maxTokensIsContext = false;
};

// Why a hypothesis ended.
enum class BeamEnd { Eos, Length, Stop, Timeout, Context };
const char* beamEndName(BeamEnd e);  // "eos", "length", "stop", "timeout", "context"

struct BeamHypothesis {
    std::vector<int32_t> tokens;  // generated ids, the end token included when ended
    double logProb = 0;  // Σ log p(token | prefix) over tokens
    double score = 0;  // beamScore(logProb, tokens.size(), alpha)
    bool ended = false;  // by an end token (else by maxTokens, a stop string, ...)
    BeamEnd end = BeamEnd::Length;
    std::string text;  // with params.decode: the generated text (no end token, no stop string)
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
    std::vector<BeamCandidate> live;  // the next live beams, best first (at most nBeams)
    std::vector<BeamCandidate> ended;  // hypotheses finished by this step, best first
};

// Ranks every extension of every live beam by logProb (ties: lower parent, then lower token)
// and walks them best first: an end token (or any token when `last`, the maxTokens-th)
// finishes a hypothesis, any other becomes a live beam, until nBeams live beams are found
// (with `last`, the nBeams best extensions all finish). beamLogProbs[b]: live beam b's logProb;
// tokenLogProbs[b]: its next-token log-probabilities. `ends(parent, token)`, when given, also
// finishes an extension (a stop string).
using BeamEndsFn = std::function<bool(int32_t parent, int32_t token)>;
BeamChoice chooseBeams(std::span<const double> beamLogProbs, std::span<const std::vector<double>> tokenLogProbs,
                       int32_t nBeams, std::span<const int32_t> endTokens, bool last, const BeamEndsFn& ends = {});

}  // namespace hearth

// Choosing the next token from logits: a chain of small stages over (token, logit) candidates
// in DESIGN.md's order — logit bias, repetition/presence/frequency penalties over the last N
// tokens, top-k, typical-p, top-p, min-p, temperature — then a seeded draw, or greedy argmax
// when temperature is 0.
// Thread-safety: a Sampler belongs to one sequence on the engine thread; stages are pure.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "engine/error.h"

namespace hearth {

struct LogitBias {
    int32_t id;
    float bias;  // added to the token's logit; -infinity bans the token
};

struct SamplingParams {
    std::vector<LogitBias> logitBias{};
    float repeatPenalty = 1.0f;  // 1 = off; > 1 discourages repeats
    int32_t repeatLastN = 64;  // tokens the penalties look back over; 0 = off, -1 = all
    float presencePenalty = 0.0f;  // subtracted once from each token present in the window
    float frequencyPenalty = 0.0f;  // subtracted once per occurrence in the window
    int32_t topK = 40;  // 0 = off
    float typicalP = 1.0f;  // 1 = off
    float topP = 0.95f;  // 1 = off
    float minP = 0.05f;  // 0 = off
    float temperature = 0.8f;  // 0 = greedy
    uint64_t seed = 0;
};

// Range checks with messages a user can act on. nVocab > 0 also checks logit-bias ids.
Result<void> validate(const SamplingParams& params, int32_t nVocab = 0);

struct TokenLogit {
    int32_t id;
    float logit;
};

// The stages, each over candidates. Stages that return a count shrink the candidates to the
// span's first `count` entries. Candidates are sorted by logit, descending (ties: lower id
// first) from sampleTopK on; the later stages keep that order.
void applyLogitBias(std::span<TokenLogit> cands, std::span<const LogitBias> biases);
// llama.cpp semantics: a token seen in `window` has a positive logit divided by
// `repeat`, a negative one multiplied by it; then count * frequency + presence is subtracted.
void applyPenalties(std::span<TokenLogit> cands, std::span<const int32_t> window, float repeat, float presence,
                    float frequency);
// Whether params ask for any penalty, and the last repeatLastN tokens of history they look at.
bool penaltiesActive(const SamplingParams& params);
std::span<const int32_t> penaltyWindow(std::span<const int32_t> history, int32_t repeatLastN);
size_t sampleTopK(std::span<TokenLogit> cands, int32_t k);  // k <= 0: sorts them all
size_t sampleTypicalP(std::span<TokenLogit> cands, float p);  // needs sorted candidates
size_t sampleTopP(std::span<TokenLogit> cands, float p);  // needs sorted candidates
size_t sampleMinP(std::span<TokenLogit> cands, float minP);  // needs sorted candidates
void applyTemperature(std::span<TokenLogit> cands, float temperature);
// Inverse CDF of softmax(logits) at u in [0, 1): the first index whose cumulative
// probability exceeds u. Computed in doubles, independent of the standard library.
size_t drawIndex(std::span<const TokenLogit> cands, double u);
// A uniform double in [0, 1) from the top 53 bits of one 64-bit output.
double uniform01(std::mt19937_64& rng);

// The candidates sampleTopK(params.topK) leaves of the logits after applyLogitBias and
// applyPenalties (over penaltyWindow(history)), sorted: the same ids and logits, bit for bit.
// Where top-k is on and below the vocabulary and no logit is NaN, the k best are selected straight
// from the logits (a candidate for each of 262,144 ids and a partial sort cost Gemma 3 380 µs a
// token); otherwise the whole chain runs over a candidate per id. storage holds the result.
std::span<TokenLogit> topKCandidates(std::span<const float> logits, const SamplingParams& params,
                                     std::span<const int32_t> history, std::vector<TokenLogit>& storage);

// How many of a row's first raw logits in before()'s order (Backend::topKRows) the chain's choice
// depends on: the greedy choice or the top-k's, plus one for each id a bias or a penalty over
// penaltyWindow(history) touches, where those only lower a logit (no positive bias, no penalty
// below 1), plus nMore where penalties are on (the tokens a speculative step's later rows add to
// the history); 0 where the choice needs the whole row (top-k off, a raising bias or penalty,
// more than maxCandidates, or not fewer than the nVocab ids).
int32_t candidatesNeeded(const SamplingParams& params, std::span<const int32_t> history, int32_t nVocab,
                         int32_t maxCandidates, int32_t nMore = 0);
// Those first logits after applyLogitBias and applyPenalties over penaltyWindow(history): their
// argmax is the chain's greedy choice, their sampleTopK(params.topK) topKCandidates', bit for bit.
// storage holds the result.
std::span<TokenLogit> biasFirstLogits(std::span<const TokenLogit> first, const SamplingParams& params,
                                      std::span<const int32_t> history, std::vector<TokenLogit>& storage);
// A candidate for every id of logits, in id order, after the same two stages (storage holds them).
std::span<TokenLogit> biasedCandidates(std::span<const float> logits, const SamplingParams& params,
                                       std::span<const int32_t> history, std::vector<TokenLogit>& storage);

// Greedy: the highest logit; the lower id wins a tie.
int32_t argmax(std::span<const float> logits);
int32_t argmax(std::span<const TokenLogit> cands);

class Sampler {
public:
    // params must pass validate(); the generator is seeded with params.seed.
    explicit Sampler(const SamplingParams& params);
    // Tokens before the generated ones (the prompt), for the penalty window.
    void observe(std::span<const int32_t> tokens);
    // Chooses the next token and appends it to the penalty window.
    int32_t sample(std::span<const float> logits);
    // Whether sample() is the plain argmax of the logits (greedy, no bias, no penalty), so that
    // the greedy id computed where the logits are (ForwardItem::ids) is its choice; accept()
    // then records that id as sample() would have.
    bool plainArgmax() const;
    void accept(int32_t token) { append(token); }
    // How many of a row's first raw logits sample() depends on (hearth::candidatesNeeded over
    // this sampler's history); 0: the whole row.
    int32_t candidatesNeeded(int32_t nVocab, int32_t maxCandidates) const;
    // Chooses the next token from top (at least candidatesNeeded() raw logits of a row that has
    // no NaN or infinity, in before()'s order) and appends it: sample()'s choice from that row,
    // bit for bit, with the same draw.
    int32_t sampleTop(std::span<const TokenLogit> top);

private:
    void append(int32_t token);
    // The sampled stages after top-k, then the draw.
    int32_t draw(std::span<TokenLogit> c);

    SamplingParams params_;
    std::mt19937_64 rng_;
    std::vector<TokenLogit> cands_;
    std::vector<TokenLogit> biased_;  // the biased ids of a greedy choice (argmaxWithBias)
    std::vector<int32_t> history_;  // the last tokens, at least repeatLastN of them when known
};

}  // namespace hearth

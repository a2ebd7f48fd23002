// SpecPolicy: how many tokens to draft next. The length follows measured acceptance (longer
// while every draft is kept, back to just past the last kept token after a rejection).
// Speculation switches itself off when its measured tokens/s falls below plain decoding's
// (plain: the fastest of its recent steps, as other load only ever slows a step down),
// and back on when the text turns repetitive: while off, the n-gram lookup's guess for each
// next token is checked against the token decoded, and enough hits in a row of steps mean
// the reply repeats what came before.
// Thread-safety: engine thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

namespace hearth {

struct SpecPolicyConfig {
    int32_t maxDraft = 8;
    bool allowSwitchOff = true;
    int32_t window = 4;  // spec steps compared with plain decoding before deciding
    int32_t plainProbeEvery = 32;  // a plain step this often keeps its speed measured
    int32_t repeatWindow = 12;  // off: steps of n-gram guesses looked at
    int32_t repeatHits = 6;  // off: guesses right among them to switch back on
    // Trees: at most this many drafted nodes per step (0: chains only). The extra nodes beyond
    // the chain (the width) start at 0 (linear, with a probe now and then), double while the
    // tokens that branches add are worth more than the rows they cost, and halve otherwise;
    // without allowSwitchOff the width stays at its largest. Starting linear: where extra rows
    // cost a large share of a step (a model whose weights sit in the cache) the first trees
    // lost more than the probe's later widening won (bench-spec, SmolLM2, README).
    int32_t maxTreeNodes = 0;
    int32_t treeWindow = 8;  // tree steps judged together
    int32_t treeProbeEvery = 16;  // linear steps between probes while the width is 0
};

class SpecPolicy {
public:
    explicit SpecPolicy(SpecPolicyConfig config);
    // Tokens to draft in the next step; 0: decode plainly (off, or a probe of plain speed).
    int32_t draftLength() const;
    bool active() const { return active_; }
    // A step that ran: nDrafted tokens drafted (0: plain), nAccepted kept, nOutput tokens
    // produced, ms its wall time (drafting included).
    void recordStep(int32_t nDrafted, int32_t nAccepted, int32_t nOutput, double ms) {
        recordStep(nDrafted, nAccepted, nOutput, ms, nAccepted == nDrafted);
    }
    // The same for a tree: allKept when the kept path reached a leaf (the length grows then).
    void recordStep(int32_t nDrafted, int32_t nAccepted, int32_t nOutput, double ms, bool allKept);
    // Drafted nodes for the next step: draftLength() for a chain, more for a tree (at most
    // maxTreeNodes); 0 with draftLength().
    int32_t treeNodes() const;
    // A verify step's tree: nNodes drafted beyond nFirstPath on its first path; gain: tokens kept
    // on other branches beyond what the first path alone would have kept.
    void recordTree(int32_t nNodes, int32_t nFirstPath, int32_t gain);
    int32_t treeWidth() const { return width_; }
    // The measured cost of one more row in a step, ms (a least-squares line of step time over
    // rows, from the recent steps); 0 until the rows varied.
    double rowMs() const;
    // While off: whether the n-gram guess for the token just decoded was right (no guess: false).
    void recordGuess(bool hit);
    int32_t nSwitchedOff() const { return nOff_; }
    int32_t nSwitchedOn() const { return nOn_; }
    double plainMsPerToken() const;
    double specMsPerToken() const { return specTokens_ > 0 ? specMs_ / specTokens_ : 0.0; }

private:
    void judge();
    void switchOn();

    SpecPolicyConfig config_;
    bool active_ = true;
    int32_t length_ = 4;
    int32_t stepsSinceProbe_ = 0;
    int32_t nPlain_ = 0;  // plain steps measured
    std::deque<double> plainMs_;  // the last few plain steps' times
    int32_t specSteps_ = 0;  // spec steps in the current window
    double specMs_ = 0.0, specTokens_ = 0.0;
    std::deque<bool> guesses_;
    int32_t width_ = 0;  // extra tree nodes beyond the chain
    int32_t linearSinceProbe_ = 0;
    int32_t treeSteps_ = 0;  // in the current tree window
    double treeGain_ = 0, treeExtraRows_ = 0;
    std::deque<std::pair<int32_t, double>> rowTimes_;  // the last steps' (rows, ms)
    int32_t nOff_ = 0, nOn_ = 0;
};

}  // namespace hearth

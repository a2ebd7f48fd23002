// Beam search over forked KV sequences: one forward of the prompt, then per step one token
// per live beam. A beam's children fork its sequence before it is released, so blocks stay
// shared for as long as any beam continues them.
#include "engine/runner/beam_runner.h"

#include <algorithm>

#include "engine/str_cat.h"

namespace hearth {
namespace {

struct Beam {
    KvSequence kv;
    std::vector<int32_t> tokens;  // generated so far
    double logProb = 0;
    std::vector<float> logits;    // of the next token
};

class BeamRun {
public:
    BeamRun(Model& model, Backend& backend, KvCache& cache, const BeamSearchParams& params)
        : model_(model), backend_(backend), cache_(cache), params_(params) {}
    ~BeamRun() {
        for (Beam& b : live_) cache_.release(b.kv);
        for (Beam& b : next_) cache_.release(b.kv);
    }

    Result<void> start(std::span<const int32_t> prompt) {
        Beam& root = live_.emplace_back();
        return forward(root, prompt);
    }

    // One token more for every live beam; `last` finishes them all.
    Result<void> step(bool last) {
        std::vector<double> beamLogProbs;
        std::vector<std::vector<double>> tokenLogProbs(live_.size());
        for (size_t b = 0; b < live_.size(); ++b) {
            beamLogProbs.push_back(live_[b].logProb);
            logSoftmax(live_[b].logits, tokenLogProbs[b]);
        }
        const BeamChoice choice = chooseBeams(beamLogProbs, tokenLogProbs, params_.nBeams, params_.endTokens, last);
        for (const BeamCandidate& c : choice.ended) addHypothesis(c);
        for (const BeamCandidate& c : choice.live) {
            const Beam& parent = live_[static_cast<size_t>(c.parent)];
            Beam& child = next_.emplace_back();
            child.kv = cache_.fork(parent.kv);
            child.tokens = parent.tokens;
            child.tokens.push_back(c.token);
            child.logProb = c.logProb;
            const int32_t token = c.token;
            if (auto r = forward(child, std::span<const int32_t>(&token, 1)); !r) return r;
        }
        peakBlocks_ = std::max(peakBlocks_, cache_.pool().nUsed());
        for (Beam& b : live_) cache_.release(b.kv);
        live_ = std::move(next_);
        next_.clear();
        for (const Beam& b : live_) blocksPerBeam_ = std::max(blocksPerBeam_, static_cast<int32_t>(b.kv.blockTable.size()));
        return {};
    }

    // Nothing live, or (ranking by the plain sum, which only falls as beams grow) a finished
    // hypothesis no live beam can overtake.
    bool done() const {
        if (live_.empty()) return true;
        if (params_.lengthNormAlpha != 0.0f || hypotheses_.empty()) return false;
        double bestLive = live_.front().logProb;
        for (const Beam& b : live_) bestLive = std::max(bestLive, b.logProb);
        double bestEnded = hypotheses_.front().logProb;
        for (const BeamHypothesis& h : hypotheses_) bestEnded = std::max(bestEnded, h.logProb);
        return bestEnded >= bestLive;
    }

    Result<BeamSearchResult> finish() {
        if (hypotheses_.empty()) return fail(ErrorCode::InvalidArgument, "beam search: every token is banned");
        std::stable_sort(hypotheses_.begin(), hypotheses_.end(), [](const BeamHypothesis& a, const BeamHypothesis& b) {
            return a.score > b.score;
        });
        return BeamSearchResult{std::move(hypotheses_), nForwardTokens_, peakBlocks_, blocksPerBeam_};
    }

private:
    Result<void> forward(Beam& beam, std::span<const int32_t> tokens) {
        if (auto r = cache_.reserve(beam.kv, beam.kv.nTokens + static_cast<int32_t>(tokens.size())); !r)
            return fail(r.error().code, strCat("beam search with ", params_.nBeams, " beams: ", r.error().message));
        beam.logits.resize(static_cast<size_t>(model_.config().nVocab));
        nForwardTokens_ += static_cast<int32_t>(tokens.size());
        return model_.forward(backend_, cache_, beam.kv, tokens, beam.logits);
    }

    void addHypothesis(const BeamCandidate& c) {
        BeamHypothesis h;
        h.tokens = live_[static_cast<size_t>(c.parent)].tokens;
        h.tokens.push_back(c.token);
        h.logProb = c.logProb;
        h.score = beamScore(h.logProb, h.tokens.size(), params_.lengthNormAlpha);
        h.ended = std::find(params_.endTokens.begin(), params_.endTokens.end(), c.token) != params_.endTokens.end();
        hypotheses_.push_back(std::move(h));
    }

    Model& model_;
    Backend& backend_;
    KvCache& cache_;
    const BeamSearchParams& params_;
    std::vector<Beam> live_, next_;
    std::vector<BeamHypothesis> hypotheses_;
    int32_t nForwardTokens_ = 0, peakBlocks_ = 0, blocksPerBeam_ = 0;
};

}  // namespace

Result<BeamSearchResult> runBeamSearch(Model& model, Backend& backend, KvCache& cache, std::span<const int32_t> prompt,
                                       const BeamSearchParams& params) {
    if (prompt.empty()) return fail(ErrorCode::InvalidArgument, "beam search: the prompt is empty");
    if (params.nBeams < 1 || params.maxTokens < 1)
        return fail(ErrorCode::InvalidArgument, strCat("beam search needs at least 1 beam and 1 token (got ", params.nBeams,
                                                       " beams, ", params.maxTokens, " tokens)"));
    BeamRun run(model, backend, cache, params);
    if (auto r = run.start(prompt); !r) return std::unexpected(r.error());
    for (int32_t i = 0; i < params.maxTokens && !run.done(); ++i)
        if (auto r = run.step(i + 1 == params.maxTokens); !r) return std::unexpected(r.error());
    return run.finish();
}

}  // namespace hearth

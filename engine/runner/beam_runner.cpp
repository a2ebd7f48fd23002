// Beam search over forked KV sequences: one forward of the prompt, then per step one batched
// Model::forward (it reserves and advances the beams' sequences, which this search owns)
// carrying every live beam's next token. A beam's children fork its
// sequence (the last one takes it over), so blocks stay shared for as long as any beam
// continues them.
#include "engine/runner/beam_runner.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "engine/str_cat.h"

namespace hearth {
namespace {

struct Beam {
    KvSequence kv;
    std::vector<int32_t> tokens;  // generated so far
    double logProb = 0;
    std::vector<float> logits;  // of the next token
};

bool penaltiesOn(const BeamSearchParams& p) {
    return p.repeatLastN != 0 && (p.repeatPenalty != 1.0f || p.presencePenalty != 0.0f || p.frequencyPenalty != 0.0f);
}

// The text of tokens cut before the first stop string it contains, or nullopt without one.
std::optional<std::string> cutAtStop(const BeamSearchParams& p, std::span<const int32_t> tokens) {
    if (p.stop.empty() || !p.decode) return std::nullopt;
    std::string text = p.decode(tokens);
    size_t cut = std::string::npos;
    for (const std::string& s : p.stop)
        if (!s.empty()) cut = std::min(cut, text.find(s));
    if (cut == std::string::npos) return std::nullopt;
    text.resize(cut);
    return text;
}

class BeamRun {
public:
    BeamRun(Model& model, Backend& backend, KvCache& cache, std::span<const int32_t> prompt,
            const BeamSearchParams& params)
        : model_(model), backend_(backend), cache_(cache), prompt_(prompt), params_(params) {}
    ~BeamRun() {
        for (Beam& b : live_) cache_.release(b.kv);
        for (Beam& b : next_) cache_.release(b.kv);
    }

    Result<void> start() {
        live_.emplace_back();
        auto r = forwardAll(live_, prompt_);
        peakBlocks_ = cache_.pool().nUsed();
        return r;
    }

    // One token more for every live beam; `last` finishes them all.
    Result<void> step(bool last) {
        std::vector<double> beamLogProbs;
        std::vector<std::vector<double>> tokenLogProbs(live_.size());
        for (size_t b = 0; b < live_.size(); ++b) {
            beamLogProbs.push_back(live_[b].logProb);
            processLogits(live_[b]);
            logSoftmax(live_[b].logits, tokenLogProbs[b]);
        }
        BeamEndsFn ends;
        if (!params_.stop.empty() && params_.decode)
            ends = [this](int32_t parent, int32_t token) {
                return cutAtStop(params_, extended(parent, token)).has_value();
            };
        const BeamChoice choice =
            chooseBeams(beamLogProbs, tokenLogProbs, params_.nBeams, params_.endTokens, last, ends);
        for (const BeamCandidate& c : choice.ended) addHypothesis(c, last);
        spawn(choice.live);
        if (auto r = forwardAll(next_, {}); !r) return r;
        peakBlocks_ = std::max(peakBlocks_, cache_.pool().nUsed());
        for (Beam& b : live_) cache_.release(b.kv);
        live_ = std::move(next_);
        next_.clear();
        for (const Beam& b : live_)
            blocksPerBeam_ = std::max(blocksPerBeam_, static_cast<int32_t>(b.kv.blockTable.size()));
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

    // The time limit passed (Timeout), or the KV cache, the context's memory, cannot hold the
    // next step's beams (Context): every live beam becomes a hypothesis as it stands.
    void endLive(BeamEnd why) {
        for (Beam& b : live_) {
            BeamHypothesis h;
            h.tokens = b.tokens;
            h.logProb = b.logProb;
            h.score = beamScore(b.logProb, b.tokens.size(), params_.lengthNormAlpha);
            h.end = why;
            if (params_.decode) h.text = params_.decode(h.tokens);
            hypotheses_.push_back(std::move(h));
        }
    }

    bool anyTokens() const { return !live_.empty() && !live_.front().tokens.empty(); }

    Result<BeamSearchResult> finish() {
        if (hypotheses_.empty()) return fail(ErrorCode::InvalidArgument, "beam search: every token is banned");
        std::stable_sort(hypotheses_.begin(), hypotheses_.end(),
                         [](const BeamHypothesis& a, const BeamHypothesis& b) { return a.score > b.score; });
        return BeamSearchResult{std::move(hypotheses_), nForwardTokens_, peakBlocks_, blocksPerBeam_, nForwardCalls_};
    }

private:
    std::vector<int32_t> extended(int32_t parent, int32_t token) const {
        std::vector<int32_t> t = live_[static_cast<size_t>(parent)].tokens;
        t.push_back(token);
        return t;
    }

    // The next beams: each forks its parent's sequence, except a parent's last child, which
    // takes it over (no copy-on-write of the partly filled block for a beam with one child).
    // A parent without children releases its blocks now, before the next beams need theirs.
    void spawn(std::span<const BeamCandidate> live) {
        std::vector<size_t> lastChild(live_.size(), live.size());
        for (size_t i = 0; i < live.size(); ++i) lastChild[static_cast<size_t>(live[i].parent)] = i;
        for (size_t i = 0; i < live.size(); ++i) {
            Beam& parent = live_[static_cast<size_t>(live[i].parent)];
            Beam& child = next_.emplace_back();
            child.kv = lastChild[static_cast<size_t>(live[i].parent)] == i ? std::exchange(parent.kv, KvSequence{})
                                                                           : cache_.fork(parent.kv);
            child.tokens = extended(live[i].parent, live[i].token);
            child.logProb = live[i].logProb;
        }
        for (size_t p = 0; p < live_.size(); ++p)
            if (lastChild[p] == live.size()) cache_.release(live_[p].kv);
    }

    // Logit bias and penalties (over the last repeatLastN tokens of prompt + beam), in place.
    void processLogits(Beam& beam) {
        const bool penalties = penaltiesOn(params_);
        if (params_.logitBias.empty() && !penalties) return;
        std::vector<TokenLogit> cands(beam.logits.size());
        for (size_t i = 0; i < cands.size(); ++i) cands[i] = {static_cast<int32_t>(i), beam.logits[i]};
        applyLogitBias(cands, params_.logitBias);
        if (penalties) {
            std::vector<int32_t> history(prompt_.begin(), prompt_.end());
            history.insert(history.end(), beam.tokens.begin(), beam.tokens.end());
            applyPenalties(cands, penaltyWindow(history, params_.repeatLastN), params_.repeatPenalty,
                           params_.presencePenalty, params_.frequencyPenalty);
        }
        for (const TokenLogit& c : cands) beam.logits[static_cast<size_t>(c.id)] = c.logit;
    }

    // One batched forward: `tokens` for a single beam (the prompt), else each beam's last token.
    Result<void> forwardAll(std::vector<Beam>& beams, std::span<const int32_t> tokens) {
        if (beams.empty()) return {};
        const size_t nVocab = static_cast<size_t>(model_.config().nVocab);
        std::vector<ForwardItem> items;
        for (Beam& b : beams) {
            b.logits.resize(nVocab);
            const std::span<const int32_t> t = tokens.empty() ? std::span<const int32_t>(&b.tokens.back(), 1) : tokens;
            items.push_back({&b.kv, t, b.logits});
            nForwardTokens_ += static_cast<int32_t>(t.size());
        }
        ++nForwardCalls_;
        if (auto r = model_.forward(backend_, cache_, items); !r)
            return fail(r.error().code, strCat("beam search with ", params_.nBeams, " beams: ", r.error().message));
        return {};
    }

    void addHypothesis(const BeamCandidate& c, bool last) {
        BeamHypothesis h;
        h.tokens = extended(c.parent, c.token);
        h.logProb = c.logProb;
        h.score = beamScore(h.logProb, h.tokens.size(), params_.lengthNormAlpha);
        h.ended = std::find(params_.endTokens.begin(), params_.endTokens.end(), c.token) != params_.endTokens.end();
        std::optional<std::string> cut = h.ended ? std::nullopt : cutAtStop(params_, h.tokens);
        if (h.ended) h.end = BeamEnd::Eos;
        else if (cut) h.end = BeamEnd::Stop;
        else if (last) h.end = params_.maxTokensIsContext ? BeamEnd::Context : BeamEnd::Length;
        if (cut) h.text = std::move(*cut);
        else if (params_.decode)
            h.text = params_.decode(std::span(h.tokens).first(h.tokens.size() - (h.ended ? 1 : 0)));
        hypotheses_.push_back(std::move(h));
    }

    Model& model_;
    Backend& backend_;
    KvCache& cache_;
    std::span<const int32_t> prompt_;
    const BeamSearchParams& params_;
    std::vector<Beam> live_, next_;
    std::vector<BeamHypothesis> hypotheses_;
    int32_t nForwardTokens_ = 0, peakBlocks_ = 0, blocksPerBeam_ = 0, nForwardCalls_ = 0;
};

bool pastLimit(std::chrono::steady_clock::time_point t0, int64_t timeoutMs) {
    return timeoutMs > 0 && std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(timeoutMs);
}

}  // namespace

Result<BeamSearchResult> runBeamSearch(Model& model, Backend& backend, KvCache& cache, std::span<const int32_t> prompt,
                                       const BeamSearchParams& params) {
    const auto t0 = std::chrono::steady_clock::now();
    if (prompt.empty()) return fail(ErrorCode::InvalidArgument, "beam search: the prompt is empty");
    if (params.nBeams < 1 || params.maxTokens < 1)
        return fail(ErrorCode::InvalidArgument,
                    strCat("beam search needs at least 1 beam and 1 token (got ", params.nBeams, " beams, ",
                           params.maxTokens, " tokens)"));
    BeamRun run(model, backend, cache, prompt, params);
    if (auto r = run.start(); !r) return std::unexpected(r.error());
    for (int32_t i = 0; i < params.maxTokens && !run.done(); ++i) {
        if (auto r = run.step(i + 1 == params.maxTokens); !r) {
            // Out of KV after the first token: the context is full; the beams so far are the result.
            if (r.error().code != ErrorCode::OutOfMemory || !run.anyTokens()) return std::unexpected(r.error());
            run.endLive(BeamEnd::Context);
            break;
        }
        if (!run.done() && pastLimit(t0, params.timeoutMs)) {
            run.endLive(BeamEnd::Timeout);
            break;
        }
    }
    return run.finish();
}

}  // namespace hearth

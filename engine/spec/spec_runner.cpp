// The step loop of speculative decoding and the session that outlives one request.
#include "engine/spec/spec_runner.h"

#include <algorithm>
#include <chrono>

#include "engine/spec/draft_model_drafter.h"
#include "engine/spec/verifier.h"
#include "engine/str_cat.h"

namespace hearth {
namespace {

constexpr int32_t kPrefillChunk = 256;
constexpr int32_t kMaxDraftLimit = 32;

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// One request's state: the KV sequence, its tokens (prompt then output) and the counters.
class SpecRun {
public:
    SpecRun(Model& model, Backend& backend, KvCache& cache, const SpecRunInput& input, SpecSampler& sampler,
            SpecSession& session)
        : model_(model), backend_(backend), cache_(cache), input_(input), sampler_(sampler), session_(session),
          nVocab_(model.config().nVocab), tokens_(input.prompt.begin(), input.prompt.end()) {}
    ~SpecRun() {
        cache_.publish(seq_, tokens_);
        cache_.release(seq_);
    }
    Result<void> prefill();
    Result<bool> step(const SpecTokenSink& sink);  // false: generation ended
    SpecStats stats;

private:
    bool emit(std::span<const int32_t> out, const SpecTokenSink& sink);
    int32_t draftRoom() const;

    Model& model_;
    Backend& backend_;
    KvCache& cache_;
    const SpecRunInput& input_;
    SpecSampler& sampler_;
    SpecSession& session_;
    int32_t nVocab_;
    KvSequence seq_;
    std::vector<int32_t> tokens_;  // KV holds all but the last
    std::vector<float> rows_;
    int32_t nOutput_ = 0;
};

// All but the last prompt token: the first step computes it with the first draft, so even
// the first output token is speculated.
Result<void> SpecRun::prefill() {
    const std::span<const int32_t> prefix = input_.prompt.first(input_.prompt.size() - 1);
    auto plan = cache_.plan(seq_, static_cast<int32_t>(prefix.size()), prefix);
    if (!plan) return std::unexpected(plan.error());
    if (auto r = cache_.commit(seq_, *plan); !r) return r;
    while (seq_.nTokens < std::ssize(prefix)) {
        const auto n = std::min<int64_t>(kPrefillChunk, std::ssize(prefix) - seq_.nTokens);
        const auto chunk = prefix.subspan(static_cast<size_t>(seq_.nTokens), static_cast<size_t>(n));
        if (auto r = model_.forward(backend_, cache_, seq_, chunk, {}); !r) return r;
    }
    return {};
}

bool SpecRun::emit(std::span<const int32_t> out, const SpecTokenSink& sink) {
    for (int32_t t : out) {
        tokens_.push_back(t);
        ++nOutput_;
        if (!sink(t) || nOutput_ >= input_.maxTokens || std::ssize(tokens_) >= input_.contextLength) return false;
    }
    return true;
}

// Drafted tokens that still fit: before maxTokens (one token always follows them) and the context.
int32_t SpecRun::draftRoom() const {
    const auto ctxRoom = static_cast<int32_t>(input_.contextLength - std::ssize(tokens_) - 1);
    return std::max(0, std::min({input_.maxTokens - nOutput_ - 1, ctxRoom, kMaxDraftLimit}));
}

Result<bool> SpecRun::step(const SpecTokenSink& sink) {
    const auto t0 = std::chrono::steady_clock::now();
    SpecPolicy& policy = session_.policy;
    const int32_t k = std::min(policy.draftLength(), draftRoom());
    Draft draft;
    if (k > 0) {
        auto d = session_.drafter->propose(tokens_, k, sampler_);
        if (!d) return std::unexpected(d.error());
        draft = std::move(*d);
    }
    const std::vector<int32_t> guess = policy.active() ? std::vector<int32_t>() : session_.guesser.lookup(tokens_, 1);
    const auto nDraft = static_cast<int32_t>(draft.tokens.size());
    std::vector<int32_t> batch{tokens_.back()};
    batch.insert(batch.end(), draft.tokens.begin(), draft.tokens.end());
    const int32_t kept = seq_.nTokens;  // positions before the last token
    rows_.resize(static_cast<size_t>(nDraft + 1) * static_cast<size_t>(nVocab_));
    if (auto r = model_.forward(backend_, cache_, seq_, batch, rows_); !r) return std::unexpected(r.error());
    ++stats.targetForwards;
    const VerifyOutcome o = session_.verify(rows_, nVocab_, draft, sampler_);
    cache_.rollback(seq_, kept + 1 + o.nAccepted);  // the last token and the kept drafts stay
    stats.drafted += nDraft;
    stats.accepted += o.nAccepted;
    stats.rejected += nDraft - o.nAccepted;
    stats.rollbacks += nDraft > 0 && !o.bonus ? 1 : 0;
    stats.bonus += o.bonus ? 1 : 0;
    policy.recordStep(nDraft, o.nAccepted, static_cast<int32_t>(o.tokens.size()), msSince(t0));
    if (!policy.active() || nDraft == 0) policy.recordGuess(!guess.empty() && guess[0] == o.tokens[0]);
    return emit(o.tokens, sink);
}

}  // namespace

Result<std::unique_ptr<SpecSession>> SpecSession::create(const SpecOptions& options, const Tokenizer& targetVocab,
                                                         int32_t targetNVocab, Backend& backend, int32_t contextLength) {
    if (options.maxDraft < 1 || options.maxDraft > kMaxDraftLimit)
        return fail(ErrorCode::InvalidArgument, strCat("the maximum draft length must be 1..", kMaxDraftLimit));
    if (options.ngramMin < 1 || options.ngramMax < options.ngramMin)
        return fail(ErrorCode::InvalidArgument, "n-gram lengths must satisfy 1 <= min <= max");
    std::unique_ptr<Drafter> drafter;
    if (options.drafter == SpecDrafter::DraftModel) {
        auto d = DraftModelDrafter::load(options.draftModelPath, targetVocab, targetNVocab, backend, contextLength);
        if (!d) return std::unexpected(d.error());
        drafter = std::move(*d);
    } else {
        drafter = std::make_unique<NGramDrafter>(options.ngramMin, options.ngramMax);
    }
    SpecPolicyConfig policy;
    policy.maxDraft = options.maxDraft;
    policy.allowSwitchOff = options.allowSwitchOff;
    return std::unique_ptr<SpecSession>(new SpecSession{options, std::move(drafter), SpecPolicy(policy),
                                                        NGramDrafter(options.ngramMin, options.ngramMax), verifyDraft});
}

Result<SpecStats> runSpeculative(Model& model, Backend& backend, KvCache& cache, const SpecRunInput& input,
                                 SpecSampler& sampler, SpecSession& session, const SpecTokenSink& sink) {
    if (input.prompt.empty() || std::ssize(input.prompt) >= input.contextLength)
        return fail(ErrorCode::InvalidArgument, "the prompt must be non-empty and shorter than the context");
    const auto t0 = std::chrono::steady_clock::now();
    SpecRun run(model, backend, cache, input, sampler, session);
    if (auto r = run.prefill(); !r) return std::unexpected(r.error());
    run.stats.prefillMs = msSince(t0);
    const int32_t draftForwards0 = session.drafter->nForwards(), on0 = session.policy.nSwitchedOn(),
                  off0 = session.policy.nSwitchedOff();
    bool going = input.maxTokens > 0;
    while (going) {
        auto r = run.step(sink);
        if (!r) return std::unexpected(r.error());
        going = *r;
    }
    SpecStats s = run.stats;
    s.draftForwards = session.drafter->nForwards() - draftForwards0;
    s.switchedOn = session.policy.nSwitchedOn() - on0;
    s.switchedOff = session.policy.nSwitchedOff() - off0;
    s.activeAtEnd = session.policy.active();
    s.plainMsPerToken = session.policy.plainMsPerToken();
    s.specMsPerToken = session.policy.specMsPerToken();
    return s;
}

}  // namespace hearth

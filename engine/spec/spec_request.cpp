// Drafting room (maxTokens, context, the scheduler's budget), verification of the planned
// drafts, and the policy's bookkeeping for one request.
#include "engine/spec/spec_request.h"

#include <algorithm>

namespace hearth {

SpecRequest::SpecRequest(std::unique_ptr<SpecSession> session, const SamplingParams& sampling,
                         std::span<const int32_t> prompt, int32_t maxTokens, int32_t contextLength)
    : session_(std::move(session)),
      sampler_(sampling),
      maxTokens_(maxTokens),
      contextLength_(contextLength),
      promptSize_(static_cast<int32_t>(prompt.size())),
      draftForwards0_(session_->drafter->nForwards()),
      switchedOn0_(session_->policy.nSwitchedOn()),
      switchedOff0_(session_->policy.nSwitchedOff()) {
    sampler_.observe(prompt);  // the penalties look back over the prompt too
}

Result<std::vector<int32_t>> SpecRequest::propose(std::span<const int32_t> context, int32_t room) {
    pending_ = {};
    // One token always follows the drafts: they end before maxTokens and the context's end.
    const auto nGenerated = static_cast<int32_t>(std::ssize(context) - promptSize_);
    const auto ctxRoom = static_cast<int32_t>(contextLength_ - std::ssize(context) - 1);
    const int32_t k = std::min({session_->policy.draftLength(), maxTokens_ - nGenerated - 1, ctxRoom, room});
    if (k <= 0) return std::vector<int32_t>{};
    auto d = session_->drafter->propose(context, k, sampler_);
    if (!d) return std::unexpected(d.error());
    pending_ = std::move(*d);
    if (std::ssize(pending_.tokens) > k) pending_.tokens.resize(static_cast<size_t>(k));
    if (pending_.q.size() > pending_.tokens.size()) pending_.q.resize(pending_.tokens.size());
    return pending_.tokens;
}

VerifyOutcome SpecRequest::verify(std::span<const float> rows, int32_t nVocab, int32_t nDrafts,
                                  std::span<const int32_t> context, bool prefill, double stepMs) {
    SpecPolicy& policy = session_->policy;
    const std::vector<int32_t> guess = policy.active() ? std::vector<int32_t>() : session_->guesser.lookup(context, 1);
    Draft draft = std::move(pending_);
    pending_ = {};
    nDrafts = std::clamp(nDrafts, 0, static_cast<int32_t>(draft.tokens.size()));
    draft.tokens.resize(static_cast<size_t>(nDrafts));
    if (!draft.q.empty()) draft.q.resize(static_cast<size_t>(nDrafts));
    const VerifyOutcome o = session_->verify(rows, nVocab, draft, sampler_);
    ++stats_.targetForwards;
    stats_.drafted += nDrafts;
    stats_.accepted += o.nAccepted;
    stats_.rejected += nDrafts - o.nAccepted;
    stats_.rollbacks += nDrafts > 0 && !o.bonus ? 1 : 0;
    stats_.bonus += o.bonus ? 1 : 0;
    const SpecOptions& options = session_->options;
    if (options.stepCostMs > 0) stepMs = options.stepCostMs + options.rowCostMs * (1 + nDrafts);
    if (!prefill) policy.recordStep(nDrafts, o.nAccepted, static_cast<int32_t>(o.tokens.size()), stepMs);
    if (!policy.active() || nDrafts == 0) policy.recordGuess(!guess.empty() && guess[0] == o.tokens[0]);
    return o;
}

SpecStats SpecRequest::stats() const {
    SpecStats s = stats_;
    const SpecSession& session = *session_;
    s.draftForwards = session.drafter->nForwards() - draftForwards0_;
    s.switchedOn = session.policy.nSwitchedOn() - switchedOn0_;
    s.switchedOff = session.policy.nSwitchedOff() - switchedOff0_;
    s.activeAtEnd = session.policy.active();
    s.plainMsPerToken = session.policy.plainMsPerToken();
    s.specMsPerToken = session.policy.specMsPerToken();
    return s;
}

}  // namespace hearth

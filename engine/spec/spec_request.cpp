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

Result<DraftTree> SpecRequest::propose(std::span<const int32_t> context, int32_t room) {
    pending_ = {};
    // One token always follows the drafts: they end before maxTokens and the context's end.
    const auto nGenerated = static_cast<int32_t>(std::ssize(context) - promptSize_);
    const auto ctxRoom = static_cast<int32_t>(contextLength_ - std::ssize(context) - 1);
    const int32_t k = std::min({session_->policy.draftLength(), maxTokens_ - nGenerated - 1, ctxRoom, room});
    if (k <= 0) return DraftTree{};
    if (treeMode()) {
        // Every node takes a KV slot past the context: the slots too stay inside it.
        const int32_t nodes = std::min({session_->policy.treeNodes(), ctxRoom, room});
        auto t = session_->drafter->proposeTree(context, std::max(nodes, k), k, sampler_);
        if (!t) return std::unexpected(t.error());
        pending_ = std::move(*t);
    } else {
        auto d = session_->drafter->propose(context, k, sampler_);
        if (!d) return std::unexpected(d.error());
        if (std::ssize(d->tokens) > k) d->tokens.resize(static_cast<size_t>(k));
        if (d->q.size() > d->tokens.size()) d->q.resize(d->tokens.size());
        pending_ = DraftTree::fromChain(*d);
    }
    if (!pending_.valid()) pending_ = {};  // a drafter's bug must not reach the forward pass
    return pending_;
}

bool SpecRequest::treeMode() const {
    return treesAllowed_ && session_->options.tree && session_->options.maxTreeNodes > 0;
}

VerifyOutcome SpecRequest::verify(const TargetRows& rows, int32_t nDrafts, std::span<const int32_t> context,
                                  bool prefill, double stepMs) {
    SpecPolicy& policy = session_->policy;
    // While off, the policy watches whether a draft would have been right: the n-gram lookup,
    // or the drafter itself when it is an index lookup too (history: earlier conversations can
    // switch speculation back on); never a draft model's forward pass.
    std::vector<int32_t> guess;
    if (!policy.active()) {
        const SpecDrafter kind = session_->options.drafter;
        if (kind == SpecDrafter::History || kind == SpecDrafter::Auto) {
            if (auto d = session_->drafter->propose(context, 1, sampler_)) guess = std::move(d->tokens);
        } else {
            guess = session_->guesser.lookup(context, 1);
        }
    }
    DraftTree tree = std::move(pending_);
    pending_ = {};
    nDrafts = std::clamp(nDrafts, 0, static_cast<int32_t>(tree.size()));
    const auto n = static_cast<size_t>(nDrafts);  // the scheduler may cut the tail: still a tree
    tree.tokens.resize(n), tree.parents.resize(n);
    if (!tree.score.empty()) tree.score.resize(n);
    if (!tree.q.empty()) tree.q.resize(n);
    const Draft first = tree.firstPath();
    const auto nFirst = static_cast<int32_t>(first.tokens.size());
    const bool chain = tree.isChain();
    const VerifyOutcome o =
        chain ? session_->verify(rows, first, sampler_) : session_->verifyTree(rows, tree, sampler_);
    ++stats_.targetForwards;
    stats_.drafted += nDrafts;
    stats_.accepted += o.nAccepted;
    stats_.rejected += nDrafts - o.nAccepted;
    stats_.rollbacks += nDrafts > 0 && !o.bonus ? 1 : 0;
    stats_.bonus += o.bonus ? 1 : 0;
    int32_t gain = 0;
    if (!chain) {
        // The first path alone keeps the accepted nodes as long as they are its nodes 0, 1, ...
        int32_t onFirst = 0;
        int32_t at = -1;
        for (const int32_t node : o.nodes) {
            if (tree.child(at, tree.tokens[static_cast<size_t>(node)]) != node ||
                first.tokens.size() <= size_t(onFirst) ||
                first.tokens[static_cast<size_t>(onFirst)] != tree.tokens[static_cast<size_t>(node)])
                break;
            ++onFirst;
            at = node;
        }
        gain = o.nAccepted - onFirst;
        ++stats_.treeSteps;
        stats_.treeGain += gain;
    }
    const SpecOptions& options = session_->options;
    if (options.stepCostMs > 0) stepMs = options.stepCostMs + options.rowCostMs * (1 + nDrafts);
    if (!prefill) {
        policy.recordStep(nDrafts, o.nAccepted, static_cast<int32_t>(o.tokens.size()), stepMs, o.bonus);
        if (treeMode() && nDrafts > 0) policy.recordTree(nDrafts, chain ? nDrafts : nFirst, gain);
    }
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

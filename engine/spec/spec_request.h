// SpecRequest: one request's speculative decoding inside the engine's steps. While the
// scheduler plans the request's sampling chunk it proposes drafts (the policy's length, within
// maxTokens and the context); after the runner, the verifier decides over that chunk's logit
// rows which drafts are kept and the token after them. It also keeps the request's counters.
// Thread-safety: engine thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/error.h"
#include "engine/spec/spec_options.h"
#include "engine/spec/spec_sampler.h"
#include "engine/spec/spec_session.h"

namespace hearth {

class SpecRequest {
public:
    // session: taken from a SpecSessionPool for the request's options; prompt: the request's.
    SpecRequest(std::unique_ptr<SpecSession> session, const SamplingParams& sampling, std::span<const int32_t> prompt,
                int32_t maxTokens, int32_t contextLength);

    // Tokens to verify after context (prompt and output so far), at most room: a chain, or a
    // tree when the options ask for one, the policy finds it pays and trees are allowed. None
    // while the policy decodes plainly. Errors: those of the drafter.
    Result<DraftTree> propose(std::span<const int32_t> context, int32_t room);
    // Whether the backend verifies trees (ForwardItem::parents); chains otherwise.
    void allowTrees(bool allow) { treesAllowed_ = allow; }
    // The chunk ran: rows holds nDrafts + 1 rows, for the token before the drafts and each of the
    // first nDrafts proposed tokens (nodes). Returns the kept drafts then one more token (with a
    // tree: the kept nodes and the row of each token too).
    // prefill: the chunk also computed prompt tokens (its time does not measure decoding);
    // stepMs: the step's wall time, for the policy.
    VerifyOutcome verify(const TargetRows& rows, int32_t nDrafts, std::span<const int32_t> context, bool prefill,
                         double stepMs);
    // How many first logits each row of a step verifying nDrafts drafts needs (TargetRows::first,
    // SpecSampler::candidatesNeeded); 0: whole rows.
    int32_t candidatesNeeded(int32_t nVocab, int32_t maxCandidates, int32_t nDrafts) const {
        return sampler_.candidatesNeeded(nVocab, maxCandidates, nDrafts);
    }

    // Counters since the request started.
    SpecStats stats() const;
    // The session goes back to the pool when the request ends.
    std::unique_ptr<SpecSession> release() { return std::move(session_); }

private:
    bool treeMode() const;

    std::unique_ptr<SpecSession> session_;
    SpecSampler sampler_;
    int32_t maxTokens_, contextLength_, promptSize_;
    DraftTree pending_;  // the last proposal
    bool treesAllowed_ = true;
    SpecStats stats_;
    int32_t draftForwards0_, switchedOn0_, switchedOff0_;
};

}  // namespace hearth

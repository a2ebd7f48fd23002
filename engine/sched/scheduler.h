// Scheduler: admits sequences and plans each step as plain data — prefill chunks within a
// token budget plus one decode token per running sequence, and the drafted tokens of
// speculative decoding after sampling ones — and reserves their KV blocks.
// It never touches tensors: the runner computes a StepPlan and hands back a StepResult.
// It is the one owner of its sequences' step state: only schedule() reserves (drafts'
// positions included) and only complete() advances; the runner and the model execute the
// plan and check it (checkPlanned), and a restored KV tail is parked only by parkRestored().
// Thread-safety: engine thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "engine/error.h"
#include "engine/kv/kv_cache.h"

namespace hearth {

using SeqId = uint64_t;

struct SchedulerConfig {
    // Prefill tokens planned per step, over all sequences. Decode tokens (one per running
    // sequence whose prompt is done) come on top, so a long prompt delays the others' next
    // token by at most one chunk.
    int32_t tokenBudget = 256;
    int32_t maxRunning = 16;  // sequences holding KV blocks at once
};

// Positions [start, start + tokens.size()) of one sequence, to compute this step.
struct PlannedChunk {
    SeqId seq = 0;
    int32_t start = 0;
    std::vector<int32_t> tokens;
    bool sample = false;  // the last token's logits choose the sequence's next token
    // With sample: how many of the last tokens' logits the runner returns ([logitRows, nVocab]);
    // 1 for ordinary decode, k + 1 for a speculative verify of k drafted tokens.
    int32_t logitRows = 1;
    bool operator==(const PlannedChunk&) const = default;
    // Drafted tokens at the end of tokens (speculative decoding): not yet part of the sequence.
    int32_t nDrafts() const { return sample ? logitRows - 1 : 0; }
    // Tree verification: empty when the drafts are a chain; otherwise per drafted token the
    // index of the drafted token it follows, or -1: the token before the drafts (DraftTree).
    std::vector<int32_t> draftParents = {};
    // ForwardItem::parents of the chunk's tokens (empty for a chain).
    std::vector<int32_t> itemParents() const;
};

struct StepPlan {
    std::vector<PlannedChunk> chunks;  // oldest admitted first; at most one per sequence
    std::vector<SeqId> admitted;  // first admitted (not re-admitted) this step
    std::vector<SeqId> preempted;  // blocks released; back to waiting, recomputed later
    std::vector<SeqId> cancelled;  // removed by cancel()
    std::vector<SeqId> failed;  // cannot fit in the KV cache even alone; removed
};

struct SampledToken {
    SeqId seq = 0;
    int32_t token = 0;
    // Speculative decoding: the leading drafted tokens of the chunk the verifier kept (at most
    // its nDrafts()); they come before token. The rest of the drafts' positions are rolled back.
    std::vector<int32_t> accepted = {};
    // With a tree of drafts: the indices of the accepted drafted tokens (a root-to-node path);
    // their K/V moves to the positions right after the token before the drafts.
    std::vector<int32_t> acceptedNodes = {};
};
struct StepResult {
    std::vector<SampledToken> sampled;  // one per chunk with sample = true that ran
};

// Speculative decoding: called while planning a chunk that samples, with the sequence's tokens
// (prompt and output) and the most drafted tokens that fit the budget; returns the tokens to
// verify after it (fewer or none is fine). They are computed in the same chunk.
// A chain (parents empty) or a tree (parents as PlannedChunk::draftParents) of drafted tokens.
struct PlannedDrafts {
    PlannedDrafts(std::vector<int32_t> t = {}, std::vector<int32_t> p = {})  // NOLINT: a chain converts
        : tokens(std::move(t)), parents(std::move(p)) {}
    std::vector<int32_t> tokens;
    std::vector<int32_t> parents;
};
using DraftSource = std::function<PlannedDrafts(SeqId seq, std::span<const int32_t> context, int32_t maxTokens)>;

class Scheduler {
public:
    // The cache must outlive the scheduler; the scheduler owns the sequences' block tables.
    Scheduler(KvCache& cache, SchedulerConfig config);
    ~Scheduler();

    // Queues a sequence (FIFO). Precondition: prompt not empty.
    SeqId add(std::vector<int32_t> prompt);
    // Removes the sequence at the next schedule() (listed in StepPlan::cancelled).
    void cancel(SeqId seq);
    // Plans the next step and commits its KV reservations. Sequences are preempted (newest
    // first) when blocks run out; a sequence that does not fit alone is failed. With drafts, a
    // sampling chunk carries the drafted tokens it returns (logitRows = 1 + their number); they
    // get what the prompts left of the token budget (oldest sequence first) and KV only from
    // free blocks, never by preempting.
    StepPlan schedule(const DraftSource& drafts = {});
    // The step-state rule, for one chunk of the last plan: its sequence holds chunk.start
    // computed positions and exactly the blocks schedule() left it, which cover the chunk's
    // positions (KvCache::reserved). A runner checks it before its pass (a chunk whose
    // reservation is missing fails alone, unreserved) and after it (a runner or model that
    // reserved or advanced on its own fails the chunk). Errors: InvalidArgument, saying which.
    Result<void> checkPlanned(const PlannedChunk& chunk) const;
    // Records what ran, the only place a sequence advances: each chunk's positions now hold
    // K/V (full blocks are published for prefix sharing), drafted positions past the accepted
    // ones are rolled back (blocks freed; with a tree, the accepted path's K/V first moves to
    // the positions right after the token before the drafts), and accepted and sampled tokens
    // are appended.
    // Unknown (finished) sequences are skipped, and so is a chunk whose sequence does not hold
    // chunk.start positions (checkPlanned failed; the caller finishes the sequence).
    void complete(const StepPlan& plan, const StepResult& result);
    // Removes a sequence now. keepForReuse: its KV stays as the "parked" sequence that the
    // next admitted sequence continues when it shares a longer prefix with it than the cached
    // blocks do (a chat that goes on without re-reading); otherwise its blocks are released.
    void finish(SeqId seq, bool keepForReuse);
    // The parked sequence (nullptr when none).
    const KvSequence* parkedKv() const { return parked_ ? &parked_->kv : nullptr; }
    std::span<const int32_t> parkedTokens() const {
        return parked_ ? std::span<const int32_t>(parked_->tokens) : std::span<const int32_t>();
    }
    // KV restored from disk (engine/snapshot) for positions [0, tokens.size()), offered as the
    // parked sequence. When the parked sequence already holds all of tokens (the chat never left
    // the engine) and, with a sliding window, the window it would go on with from their end, it
    // stays, restore is not called, and the result is false. Otherwise restore()
    // builds the sequence (in this scheduler's cache), which replaces and releases the parked
    // one: true; restore's error leaves the parked sequence as it was.
    Result<bool> parkRestored(std::span<const int32_t> tokens, const std::function<Result<KvSequence>()>& restore);

    bool contains(SeqId seq) const { return seqs_.contains(seq); }
    bool idle() const { return running_.empty() && waiting_.empty(); }
    int32_t nRunning() const { return static_cast<int32_t>(running_.size()); }
    int32_t nWaiting() const { return static_cast<int32_t>(waiting_.size()); }
    // Preconditions: contains(seq).
    KvSequence& kvSequence(SeqId seq) { return seqs_.at(seq).kv; }
    const std::vector<int32_t>& tokens(SeqId seq) const { return seqs_.at(seq).tokens; }
    int32_t prefixHitTokens(SeqId seq) const { return seqs_.at(seq).prefixHit; }  // at first admission
    int32_t nPreemptions(SeqId seq) const { return seqs_.at(seq).nPreemptions; }
    int64_t nPreemptionsTotal() const { return nPreemptionsTotal_; }  // since construction

private:
    struct Seq {
        std::vector<int32_t> tokens;  // prompt + generated; K/V of [0, kv.nTokens) computed
        KvSequence kv;
        bool cancelled = false;
        bool admittedOnce = false;
        int32_t prefixHit = 0;
        int32_t nPreemptions = 0;
        size_t nPlannedBlocks = 0;  // kv.blockTable's size when the last plan was made
    };
    struct Parked {
        std::vector<int32_t> tokens;  // ids of kv's positions
        KvSequence kv;
    };

    void dropCancelled(StepPlan& plan);
    void planRunning(StepPlan& plan, int32_t& budget);
    void admitWaiting(StepPlan& plan, int32_t& budget);
    bool admit(SeqId id, StepPlan& plan, int32_t& budget);
    int32_t addDrafts(PlannedChunk& chunk, int32_t room, const DraftSource& drafts);
    bool reserveOrPreempt(SeqId id, int32_t nTokens, StepPlan& plan);
    void preempt(SeqId id, StepPlan& plan);
    void fail(SeqId id, StepPlan& plan);
    void releaseParked();
    void adoptOrReleaseParked(Seq& s);
    int32_t cachedHit(const Seq& s) const;
    PlannedChunk chunkOf(SeqId id, int32_t n) const;
    void remove(SeqId id);

    KvCache& cache_;
    SchedulerConfig config_;
    std::map<SeqId, Seq> seqs_;
    std::vector<SeqId> running_;  // admission order
    std::deque<SeqId> waiting_;
    std::optional<Parked> parked_;
    SeqId nextId_ = 1;
    int64_t nPreemptionsTotal_ = 0;
};

}  // namespace hearth

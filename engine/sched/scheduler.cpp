// Step planning: running sequences first (oldest first), then admission of waiting ones
// within what is left of the token budget; KV is reserved as the plan is made, so the runner
// never fails half-way for lack of blocks. Preemption frees the newest sequence's blocks
// (its full blocks stay cached, so recomputing it often reuses them). Speculative drafts ride
// on a sampling chunk and are rolled back by complete() past what the verifier kept.
#include "engine/sched/scheduler.h"

#include <algorithm>

#include "engine/kv/kv_rows.h"
#include "engine/str_cat.h"

namespace hearth {

Scheduler::Scheduler(KvCache& cache, SchedulerConfig config) : cache_(cache), config_(config) {
    config_.tokenBudget = std::max(config_.tokenBudget, 1);
    config_.maxRunning = std::max(config_.maxRunning, 1);
}

Scheduler::~Scheduler() {
    for (auto& [id, s] : seqs_) cache_.release(s.kv);
    releaseParked();
}

SeqId Scheduler::add(std::vector<int32_t> prompt) {
    const SeqId id = nextId_++;
    seqs_[id].tokens = std::move(prompt);
    waiting_.push_back(id);
    return id;
}

void Scheduler::cancel(SeqId seq) {
    if (auto it = seqs_.find(seq); it != seqs_.end()) it->second.cancelled = true;
}

StepPlan Scheduler::schedule(const DraftSource& drafts) {
    StepPlan plan;
    dropCancelled(plan);
    int32_t budget = config_.tokenBudget;
    planRunning(plan, budget);
    admitWaiting(plan, budget);
    // Drafts last: they use the budget that prompts left, so speculation never delays a prompt.
    for (PlannedChunk& c : plan.chunks) budget -= addDrafts(c, budget, drafts);
    for (const PlannedChunk& c : plan.chunks) {
        Seq& s = seqs_.at(c.seq);
        s.nPlannedBlocks = s.kv.blockTable.size();
    }
    return plan;
}

Result<void> Scheduler::checkPlanned(const PlannedChunk& chunk) const {
    const auto broken = [&](auto&&... what) {
        return hearth::fail(ErrorCode::InvalidArgument, strCat("sequence ", chunk.seq, what...));
    };
    const auto it = seqs_.find(chunk.seq);
    if (it == seqs_.end()) return broken(" is not scheduled");
    const KvSequence& kv = it->second.kv;
    if (kv.nTokens != chunk.start)
        return broken(" holds ", kv.nTokens, " positions; the plan starts at ", chunk.start,
                      " (only Scheduler::complete advances a sequence)");
    const auto end = static_cast<int32_t>(chunk.start + std::ssize(chunk.tokens));
    const size_t nPlanned = it->second.nPlannedBlocks;
    if (kv.blockTable.size() != nPlanned || !cache_.reserved(kv, end))
        return broken(" has ", kv.blockTable.size(), " KV blocks; the plan reserved ", nPlanned, " for positions [",
                      chunk.start, ", ", end, ") (only Scheduler::schedule reserves)");
    return {};
}

// Drafts after a sampling chunk, within room, with KV reserved only from free blocks: a guess
// never preempts a sequence. Returns the number added.
int32_t Scheduler::addDrafts(PlannedChunk& chunk, int32_t room, const DraftSource& drafts) {
    if (!drafts || !chunk.sample || room <= 0) return 0;
    Seq& s = seqs_.at(chunk.seq);
    PlannedDrafts planned = drafts(chunk.seq, s.tokens, room);
    std::vector<int32_t>& d = planned.tokens;
    // Nodes come after their parents, so cutting the tail leaves a tree.
    if (std::ssize(d) > room) d.resize(static_cast<size_t>(room));
    if (d.empty()) return 0;
    if (!planned.parents.empty()) {
        planned.parents.resize(d.size(), -1);
        bool chain = true;
        for (size_t i = 0; i < d.size(); ++i) {
            if (planned.parents[i] < -1 || planned.parents[i] >= static_cast<int32_t>(i)) return 0;  // not a tree
            chain = chain && planned.parents[i] == static_cast<int32_t>(i) - 1;
        }
        if (!chain) chunk.draftParents = std::move(planned.parents);
    }
    const auto end = static_cast<int32_t>(chunk.start + std::ssize(chunk.tokens) + std::ssize(d));
    auto r = cache_.plan(s.kv, end);
    if (!r || !cache_.commit(s.kv, *r)) return 0;
    chunk.tokens.insert(chunk.tokens.end(), d.begin(), d.end());
    chunk.logitRows = 1 + static_cast<int32_t>(d.size());
    return chunk.logitRows - 1;
}

std::vector<int32_t> PlannedChunk::itemParents() const {
    if (draftParents.empty()) return {};
    const auto nKept = static_cast<int32_t>(tokens.size()) - nDrafts();  // the tokens before the drafts
    std::vector<int32_t> parents(tokens.size());
    for (int32_t t = 0; t < nKept; ++t) parents[static_cast<size_t>(t)] = t - 1;
    for (size_t i = 0; i < draftParents.size(); ++i)
        parents[static_cast<size_t>(nKept) + i] = draftParents[i] < 0 ? nKept - 1 : nKept + draftParents[i];
    return parents;
}

void Scheduler::dropCancelled(StepPlan& plan) {
    std::vector<SeqId> ids;
    for (const auto& [id, s] : seqs_)
        if (s.cancelled) ids.push_back(id);
    for (SeqId id : ids) {
        finish(id, false);
        plan.cancelled.push_back(id);
    }
}

PlannedChunk Scheduler::chunkOf(SeqId id, int32_t n) const {
    const Seq& s = seqs_.at(id);
    PlannedChunk c{id, s.kv.nTokens, {}, false, 1};
    c.tokens.assign(s.tokens.begin() + c.start, s.tokens.begin() + c.start + n);
    c.sample = c.start + n == std::ssize(s.tokens);
    return c;
}

void Scheduler::planRunning(StepPlan& plan, int32_t& budget) {
    for (size_t i = 0; i < running_.size();) {
        const SeqId id = running_[i];
        const Seq& s = seqs_.at(id);
        const auto remaining = static_cast<int32_t>(std::ssize(s.tokens) - s.kv.nTokens);
        const bool decode = remaining <= 1;
        const int32_t n = decode ? remaining : std::min(remaining, budget);
        if (n <= 0) {
            ++i;
            continue;
        }
        if (!reserveOrPreempt(id, s.kv.nTokens + n, plan)) continue;  // id left running_ at i
        if (!decode) budget -= n;
        plan.chunks.push_back(chunkOf(id, n));
        ++i;
    }
}

void Scheduler::admitWaiting(StepPlan& plan, int32_t& budget) {
    while (!waiting_.empty() && std::ssize(running_) < config_.maxRunning && budget > 0)
        if (!admit(waiting_.front(), plan, budget)) break;
}

int32_t Scheduler::cachedHit(const Seq& s) const {
    const int32_t bs = cache_.layout().blockSize;
    const KvSequence& kv = s.kv;
    const auto nHave = static_cast<int32_t>(kv.blockTable.size());
    if (kv.nTokens != nHave * bs || std::ssize(kv.blockKeys) != nHave) return kv.nTokens;
    // The last token is always computed: its logits choose the next token.
    const std::span<const int32_t> cacheable(s.tokens.data(), s.tokens.size() - 1);
    if (std::ssize(cacheable) <= kv.nTokens) return kv.nTokens;
    const KvPrefixHit hit = cache_.cachedPrefix(kv, cacheable.subspan(static_cast<size_t>(kv.nTokens)));
    return kv.nTokens + static_cast<int32_t>(hit.full.blocks.size()) * bs;
}

void Scheduler::adoptOrReleaseParked(Seq& s) {
    if (!parked_ || s.kv.nTokens > 0 || !s.kv.blockTable.empty()) return;
    const auto cacheableEnd = s.tokens.end() - 1;
    const auto mismatch = std::mismatch(s.tokens.begin(), cacheableEnd, parked_->tokens.begin(), parked_->tokens.end());
    const auto common = static_cast<int32_t>(mismatch.first - s.tokens.begin());
    if (common > cachedHit(s)) {
        s.kv = std::move(parked_->kv);
        parked_.reset();
        cache_.rollback(s.kv, common);
        // Back further than its window: the window blocks there were released, so it cannot go
        // on from common; its blocks are released (cached) and the plan below reuses what it can.
        if (!cache_.resumable(s.kv)) cache_.release(s.kv);
    } else {
        releaseParked();  // its full blocks stay cached for the plan below
    }
}

bool Scheduler::admit(SeqId id, StepPlan& plan, int32_t& budget) {
    Seq& s = seqs_.at(id);
    adoptOrReleaseParked(s);
    const std::span<const int32_t> cacheable(s.tokens.data(), s.tokens.size() - 1);
    const int32_t hit = cachedHit(s);
    const int32_t n = std::min(static_cast<int32_t>(std::ssize(s.tokens)) - hit, budget);
    auto r = cache_.plan(s.kv, hit + n, cacheable);
    if (r && cache_.commit(s.kv, *r)) {
        waiting_.pop_front();
        running_.push_back(id);
        if (!s.admittedOnce) {
            s.admittedOnce = true;
            s.prefixHit = s.kv.nTokens;
            plan.admitted.push_back(id);
        }
        const int32_t nCompute = std::min(static_cast<int32_t>(std::ssize(s.tokens)) - s.kv.nTokens, budget);
        budget -= nCompute;
        plan.chunks.push_back(chunkOf(id, nCompute));
        return true;
    }
    if (!running_.empty() || !plan.chunks.empty()) return false;  // wait for blocks to come free
    fail(id, plan);  // alone and still no room
    return true;
}

bool Scheduler::reserveOrPreempt(SeqId id, int32_t nTokens, StepPlan& plan) {
    while (true) {
        Seq& s = seqs_.at(id);
        auto r = cache_.plan(s.kv, nTokens);
        if (r && cache_.commit(s.kv, *r)) return true;
        if (parked_) {
            releaseParked();
            continue;
        }
        const SeqId victim = running_.back();
        if (victim == id && running_.size() == 1) {
            fail(id, plan);
            return false;
        }
        preempt(victim, plan);
        if (victim == id) return false;
    }
}

void Scheduler::preempt(SeqId id, StepPlan& plan) {
    Seq& s = seqs_.at(id);
    cache_.release(s.kv);
    ++s.nPreemptions;
    ++nPreemptionsTotal_;
    std::erase(running_, id);
    waiting_.push_front(id);
    plan.preempted.push_back(id);
}

void Scheduler::fail(SeqId id, StepPlan& plan) {
    finish(id, false);
    plan.failed.push_back(id);
}

void Scheduler::complete(const StepPlan& plan, const StepResult& result) {
    for (const PlannedChunk& c : plan.chunks) {
        auto it = seqs_.find(c.seq);
        if (it == seqs_.end()) continue;
        Seq& s = it->second;
        const auto sampled = std::find_if(result.sampled.begin(), result.sampled.end(),
                                          [&](const SampledToken& t) { return t.seq == c.seq; });
        // The accepted drafts: a prefix of the chunk's; positions of the others are dropped.
        const auto nAccepted = sampled == result.sampled.end()
            ? 0
            : static_cast<int32_t>(std::min<std::ptrdiff_t>(std::ssize(sampled->accepted), c.nDrafts()));
        if (s.kv.nTokens != c.start) continue;  // not run as planned (checkPlanned): nothing to record
        s.kv.nTokens += static_cast<int32_t>(c.tokens.size());
        if (c.nDrafts() > 0 && !c.draftParents.empty() && sampled != result.sampled.end())
            keepKvPath(cache_, s.kv, s.kv.nTokens - c.nDrafts(),
                       std::span(sampled->acceptedNodes)
                           .first(std::min<size_t>(sampled->acceptedNodes.size(), static_cast<size_t>(nAccepted))));
        if (c.nDrafts() > 0) cache_.rollback(s.kv, s.kv.nTokens - c.nDrafts() + nAccepted);
        if (sampled != result.sampled.end()) {
            s.tokens.insert(s.tokens.end(), sampled->accepted.begin(), sampled->accepted.begin() + nAccepted);
            s.tokens.push_back(sampled->token);
        }
        cache_.publish(s.kv, s.tokens);
    }
}

void Scheduler::finish(SeqId seq, bool keepForReuse) {
    auto it = seqs_.find(seq);
    if (it == seqs_.end()) return;
    Seq& s = it->second;
    if (keepForReuse && s.kv.nTokens > 0) {
        releaseParked();
        s.tokens.resize(static_cast<size_t>(s.kv.nTokens));
        parked_ = Parked{std::move(s.tokens), std::move(s.kv)};
    } else {
        cache_.release(s.kv);
    }
    remove(seq);
}

void Scheduler::remove(SeqId id) {
    std::erase(running_, id);
    std::erase(waiting_, id);
    seqs_.erase(id);
}

Result<bool> Scheduler::parkRestored(std::span<const int32_t> tokens,
                                     const std::function<Result<KvSequence>()>& restore) {
    const std::span<const int32_t> parked = parkedTokens();
    const auto n = static_cast<int32_t>(std::ssize(tokens));
    if (std::mismatch(parked.begin(), parked.end(), tokens.begin(), tokens.end()).first - parked.begin() >= n) {
        // It holds them; with a sliding window it also has to hold the window it would go on
        // with from there (what rolling back to n keeps), else the restored copy serves better.
        const int32_t bs = cache_.layout().blockSize;
        KvSequence at;
        at.nTokens = n;
        const std::vector<BlockId>& window = parked_->kv.windowTable;
        at.windowTable.assign(window.begin(),
                              window.begin() + std::min<std::ptrdiff_t>(std::ssize(window), (n + bs - 1) / bs));
        if (cache_.resumable(at)) return false;
    }
    Result<KvSequence> kv = restore();
    if (!kv) return std::unexpected(std::move(kv.error()));
    releaseParked();
    parked_ = Parked{std::vector<int32_t>(tokens.begin(), tokens.end()), std::move(*kv)};
    return true;
}

void Scheduler::releaseParked() {
    if (!parked_) return;
    cache_.release(parked_->kv);
    parked_.reset();
}

}  // namespace hearth

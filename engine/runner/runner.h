// Runner: computes a StepPlan with the architecture's forward pass and returns the logits of
// the rows to sample. All chunks of a step (prefill chunks and decode tokens of every running
// sequence) go through one Model::forwardBatch; a chunk that cannot run fails alone. It
// executes the plan: the scheduler reserved its KV and advances its sequences.
// Thread-safety: engine thread only.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "engine/error.h"
#include "engine/model/model.h"
#include "engine/sched/scheduler.h"

namespace hearth {

// What a sampling chunk's rows bring back (Runner::run): their logits; with ids, only their
// greedy ids (ForwardItem::ids); with top > 0, each row's `top` first logits (ForwardItem::topK),
// and the row itself only where it holds a NaN or an infinity; with lse besides, each row's
// log-sum-exp (ForwardItem::lse).
struct RowsWanted {
    bool ids = false;
    int32_t top = 0;
    bool lse = false;
};

// An allocator whose value-less construct leaves the element uninitialised: a vector's resize
// then only allocates. ChunkOutput::logits spans every sampled row, but with top logits only the
// rare flagged row is written; zero-filling it cost a memset of the whole row a step (1 MiB for
// Gemma 3's 262,144 logits) on the path whose point is to move little.
template <class T>
struct UninitialisedAllocator : std::allocator<T> {
    template <class U>
    struct rebind {
        using other = UninitialisedAllocator<U>;
    };
    UninitialisedAllocator() = default;
    template <class U>
    UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}
    template <class U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

struct ChunkOutput {
    SeqId seq = 0;
    std::optional<Error> error;  // the chunk did not run; the sequence should be finished
    // [chunk.logitRows, nVocab] when the chunk samples and ran (with top logits, only the rows
    // whose top[row * topK].id is -1 are written; the others hold whatever the memory held)
    std::vector<float, UninitialisedAllocator<float>> logits;
    std::vector<int32_t> ids;  // instead, [chunk.logitRows] greedy ids (RowsWanted::ids)
    std::vector<Backend::TopEntry> top;  // [chunk.logitRows, topK] (RowsWanted::top)
    int32_t topK = 0;
    std::vector<float> lse;  // [chunk.logitRows] with top (RowsWanted::lse)

    void clear() {
        logits.clear();
        ids.clear();
        top.clear();
        topK = 0;
        lse.clear();
    }
};

class Runner {
public:
    // All three must outlive the runner; cache is the one the scheduler reserves in.
    Runner(Model& model, Backend& backend, KvCache& cache) : model_(model), backend_(backend), cache_(cache) {}

    // One output per chunk of plan, in its order; reads the block tables through scheduler and
    // changes no step state (Scheduler::complete records what ran). A chunk that fails
    // Scheduler::checkPlanned (its reservation missing, a stale start), asks for logitRows
    // outside [1, tokens], has a token outside the vocabulary or repeats a sequence gets an error
    // and is left out; the other chunks run together. After the pass every chunk that ran is
    // checked again: one whose sequence the model reserved for or advanced gets an error.
    // wanted (empty, or one per chunk): what each chunk's rows bring back; by default, logits.
    std::vector<ChunkOutput> run(const StepPlan& plan, Scheduler& scheduler, std::span<const RowsWanted> wanted = {});

private:
    // Checks chunk (which passed Scheduler::checkPlanned) against its sequence kv and the chunks
    // already accepted, and sizes out.logits; the error when the chunk cannot run.
    std::optional<Error> prepareChunk(const PlannedChunk& chunk, KvSequence& kv, ChunkOutput& out,
                                      std::span<const ForwardItem> accepted, RowsWanted wanted);
    // The forward item computing chunk into out.
    static ForwardItem item(KvSequence& kv, const PlannedChunk& chunk, ChunkOutput& out,
                            std::span<const int32_t> parents);

    Model& model_;
    Backend& backend_;
    KvCache& cache_;
};

}  // namespace hearth

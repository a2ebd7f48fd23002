// Runner: computes a StepPlan with the architecture's forward pass and returns the logits of
// the rows to sample. All chunks of a step (prefill chunks and decode tokens of every running
// sequence) go through one Model::forwardBatch; a chunk that cannot run fails alone. It
// executes the plan: the scheduler reserved its KV and advances its sequences.
// Thread-safety: engine thread only.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "engine/error.h"
#include "engine/model/model.h"
#include "engine/sched/scheduler.h"

namespace hearth {

struct ChunkOutput {
    SeqId seq = 0;
    std::optional<Error> error;  // the chunk did not run; the sequence should be finished
    std::vector<float> logits;  // [chunk.logitRows, nVocab] when the chunk samples and ran
    std::vector<int32_t> ids;  // instead, [chunk.logitRows] greedy ids (run's idsOnly)
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
    // idsOnly (empty, or one per chunk): the chunks whose rows need only their greedy ids
    // (ForwardItem::ids), which come back in ids instead of logits.
    std::vector<ChunkOutput> run(const StepPlan& plan, Scheduler& scheduler, std::span<const char> idsOnly = {});

private:
    // Checks chunk (which passed Scheduler::checkPlanned) against its sequence kv and the chunks
    // already accepted, and sizes out.logits; the error when the chunk cannot run.
    std::optional<Error> prepareChunk(const PlannedChunk& chunk, KvSequence& kv, ChunkOutput& out,
                                      std::span<const ForwardItem> accepted, bool idsOnly);

    Model& model_;
    Backend& backend_;
    KvCache& cache_;
};

}  // namespace hearth

// Runner: computes a StepPlan with the architecture's forward pass and returns the logits of
// the rows to sample. Each planned chunk is one forward() call, sequence after sequence.
// TODO(#4): one forward over all sequences' tokens (a real batch with per-row positions and
// block tables) once Model::forward takes several sequences.
// Thread-safety: engine thread only.
#pragma once

#include <optional>
#include <vector>

#include "engine/error.h"
#include "engine/model/model.h"
#include "engine/sched/scheduler.h"

namespace hearth {

struct ChunkOutput {
    SeqId seq = 0;
    std::optional<Error> error;  // forward() failed; the sequence should be finished
    std::vector<float> logits;   // [nVocab] when the chunk samples and ran
};

class Runner {
public:
    // All three must outlive the runner; cache is the one the scheduler reserves in.
    Runner(Model& model, Backend& backend, KvCache& cache) : model_(model), backend_(backend), cache_(cache) {}

    // One output per chunk of plan, in its order. Reads the block tables through scheduler
    // (forward() advances each sequence's nTokens; Scheduler::complete agrees with it).
    std::vector<ChunkOutput> run(const StepPlan& plan, Scheduler& scheduler);

private:
    Model& model_;
    Backend& backend_;
    KvCache& cache_;
};

}  // namespace hearth

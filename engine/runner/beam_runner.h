// Runs beam search (engine/sample/beam_search.h) on a model: the prompt is computed once, then
// each step is one Model::forwardBatch of every live beam's next token. Each beam is a KV
// sequence forked from its parent, so beams share every block of their common prefix and copy
// only the partly filled block they write into (copy-on-write).
// Thread-safety: engine thread only.
#pragma once

#include <span>
#include <vector>

#include "engine/error.h"
#include "engine/model/model.h"
#include "engine/sample/beam_search.h"

namespace hearth {

struct BeamSearchResult {
    std::vector<BeamHypothesis> hypotheses;  // finished ones, best score first (never empty)
    int32_t nForwardTokens = 0;  // tokens run through the model, the prompt included
    int32_t peakBlocksUsed = 0;  // most KV blocks referenced at once
    int32_t blocksPerBeam = 0;  // blocks one beam's table holds at the end (without sharing: x nBeams)
    int32_t nForwardPasses = 0;  // Model::forwardBatch calls: the prompt's, then one per step
};

// When the cache cannot hold a later step's beams, the live beams end there (BeamEnd::Context).
// Errors: InvalidArgument (empty prompt, nBeams < 1, maxTokens < 1), OutOfMemory (the cache
// cannot hold the prompt or the first token's beams), those of Model::forwardBatch. Every block the search took is released.
Result<BeamSearchResult> runBeamSearch(Model& model, Backend& backend, KvCache& cache, std::span<const int32_t> prompt,
                                       const BeamSearchParams& params);

}  // namespace hearth

// bench-spec --workload history (app/cli/bench_spec_history.cpp): the engine's history index is
// seeded with the model's own greedy replies to set A of the history workload, then set B is
// decoded plainly, with the n-gram drafter and with the History drafter, runs interleaved.
#pragma once

#include <string>

#include "engine/engine.h"

namespace hearth::cli {

// Prints the table for one loaded model (name: its file name). instances: per kind and set.
Result<void> benchSpecHistory(Engine& e, const std::string& name, int runs, int32_t maxTokens, int instances);

// The verbatim run length: a reply token "appears verbatim in the store" when it lies inside a
// run of at least this many consecutive reply tokens that occurs, contiguous and in order,
// inside one stored message.
constexpr int32_t kVerbatimRun = 8;

}  // namespace hearth::cli

// bench-spec --workload history (app/cli/bench_spec_history.cpp): the engine's history index is
// seeded with the model's own greedy replies to set A of the history workload, then set B is
// decoded plainly, with the n-gram drafter and with the History drafter, runs interleaved.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace hearth::cli {

// Prints the table for one loaded model (name: its file name). instances: per kind and set.
// dumpDir (unless empty): the store and set B's plain replies written there (writeReplyJson).
// modes: those besides plain (ngram, history, auto), all when empty.
Result<void> benchSpecHistory(Engine& e, const std::string& name, int runs, int32_t maxTokens, int instances,
                              const std::string& dumpDir, const std::vector<std::string>& modes);

// bench-spec --dump: {"prompt_tokens": [...], "tokens": [...]} (the names generate --json uses),
// and for the history workload {"messages": [[...], ...]} (the store), which
// tests/perf/spec_ceiling.py reads to bound what copying drafters could gain on them.
Result<void> writeReplyJson(const std::string& path, std::span<const TokenId> prompt, std::span<const TokenId> reply);
Result<void> writeStoreJson(const std::string& path, const std::vector<std::vector<TokenId>>& messages);

// The verbatim run length: a reply token "appears verbatim in the store" when it lies inside a
// run of at least this many consecutive reply tokens that occurs, contiguous and in order,
// inside one stored message.
constexpr int32_t kVerbatimRun = 8;

}  // namespace hearth::cli

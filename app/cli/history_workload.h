// The history workload of hearth-cli bench-spec and bench-history: tasks a user repeats with
// other material — code edits, summaries, questions over a passage — written by this code from
// seeded templates (identifiers, names, places and numbers drawn from its own lists; nothing
// fetched), in instances split into set A (the store's history) and set B (measured).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hearth::cli {

struct HistoryTask {
    std::string kind;  // "code-edit", "summary" or "qa"
    std::string prompt;  // the user's message
    std::string reference;  // a reply written by the generator (bench-history's stand-in replies)
};

struct HistoryWorkload {
    std::vector<HistoryTask> setA, setB;  // instances of the same kinds, set B's other material
};

// instances per kind in each set; the same seed gives the same tasks.
HistoryWorkload makeHistoryWorkload(int instances, uint32_t seed = 25);

}  // namespace hearth::cli

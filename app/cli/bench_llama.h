// llama.cpp's own `llama-bench`, built natively by packaging/scripts/build-llama-tools.sh, for
// `hearth-cli bench --depth N --compare-oracle`: one process per call, its JSON report parsed.
// Not the Python oracle (bench_oracle.h): llama-bench times llama.cpp without a Python layer and
// runs its own depth fill, prompt and generation tests, with flash attention off and on.
#pragma once

#include <QString>
#include <vector>

#include "engine/error.h"

namespace hearth {

struct LlamaBenchTool {
    QString exe;  // the llama-bench executable
    QString buildInfo;  // build-llama-tools.sh's build-info.txt (version, instruction sets), one line
};

// Where llama-bench is: HEARTH_LLAMA_BENCH, else the folder `build-llama-tools.sh --print`
// names (the script found next to the source tree above this executable). Errors: Io when it
// is not built, the message saying how to build it.
Result<LlamaBenchTool> findLlamaBench();

// One test of llama-bench's report: a prompt of nPrompt tokens or nGen generated tokens, after
// nDepth tokens of context.
struct LlamaBenchRow {
    int nPrompt = 0, nGen = 0, nDepth = 0;
    bool flashAttention = false;
    double tokensPerSecond = 0;  // llama-bench's avg_ts over its repetitions
    QString cpuInfo;  // llama-bench's cpu_info
};

struct LlamaBenchRun {
    int nThreads = 0, depth = 0;
    int nPrompt = 0;  // 0: no prompt test
    int nGen = 0;  // 0: no generation test
    int nRepeat = 1;
};

// Runs `llama-bench -m MODEL -t T -d DEPTH -p P -n G -fa 0,1 -r R -b 512 -ub 512 -o json` and
// returns its rows. Errors: Io (cannot start, a failure or crash: the end of its stderr; a
// report that does not parse).
Result<std::vector<LlamaBenchRow>> runLlamaBench(const LlamaBenchTool& tool, const QString& model,
                                                 const LlamaBenchRun& run);

}  // namespace hearth

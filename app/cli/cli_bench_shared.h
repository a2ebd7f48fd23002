// What `hearth-cli bench`'s two modes share (cli_bench.cpp, cli_bench_depth.cpp): medians,
// random prompts the prefix cache cannot serve, greedy requests of a fixed length, and one
// request run to its end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"

class QCommandLineParser;

namespace hearth::cli {

// bench's options. In the depth mode (--depth) nPrompt is the prefill timed at each depth and
// nGen the decoded tokens there.
struct BenchOptions {
    int nThreads = 0, nPrompt = 512, nGen = 128, nRepeat = 5;
    uint64_t seed = 0;
    bool json = false, compareOracle = false;
    uint64_t probeBytes = uint64_t{1} << 30;
};

// bench --depth N[,N...] (cli_bench_depth.cpp): decode and prefill at each depth, against the
// bandwidth bound and, with --compare-oracle, llama.cpp's own llama-bench. Returns the exit code.
int runDepthBench(const QCommandLineParser& p, const BenchOptions& o);

struct Spread {
    double median = 0, min = 0, max = 0;
};
Spread spreadOf(std::vector<double> v);
// "median  [min .. max]", right-aligned in a 9-wide field.
std::string spreadText(const std::vector<double>& v, int precision = 1);

// A random prompt of n ids drawn from the tokens that are neither control nor end-of-generation
// pieces, seeded. No BOS. The first id is the run-th of those tokens, so prompts of different
// runs never share even their first token (nor a cached block).
std::vector<TokenId> randomPrompt(const Engine& e, int n, uint64_t seed, int run);
// Greedy, with every end-of-generation token banned, so that the request generates nGen tokens.
GenerateRequest benchRequest(const Engine& e, std::vector<TokenId> prompt, int nGen);
// Submits req and steps the engine until it finishes. Errors: the request's. With
// expectedPrefixHit >= 0, also InvalidArgument when the prefix cache served another number of
// prompt tokens than that (bench's runs must compute what they time).
Result<GenerateTimings> runHearth(Engine& e, const GenerateRequest& req, int32_t expectedPrefixHit = 0);

// The backend's name, with +VNNI / +AVX-512 where the AVX2 backend runs those builds.
std::string backendLabel(const Engine& e);

}  // namespace hearth::cli

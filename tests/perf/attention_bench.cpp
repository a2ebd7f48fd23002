// Micro-benchmark of decode attention over a deep paged KV cache (not a test): one token's
// query heads attend to DEPTH positions in each of LAYERS layers, layer after layer, as a
// decode step does, through the backend the engine would pick (makeBestCpuBackend). The
// layers' K and V together exceed the caches, so the figure is what a decode step sees; they
// live in the engine's KvCache, laid out as a decode step finds them. Prints the fastest repetition's time per step and the KV read rate (GB/s).
// `attention_bench [DEPTH] [THREADS] [REPS] [LAYERS] [HEADS] [KV_HEADS] [HEAD_DIM] [f16|q8_0] [dims|rows]
// [heads|rows]` (defaults: SmolLM2-135M's shape, 30 layers of 9 query heads over 3 KV heads of 64,
// F16 with K dimension-major and V head by head as the engine stores them on the CPU; `rows`: K,
// then V, rows token-major).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/kv/kv_cache.h"
#include "kernels/backend.h"

using namespace hearth;

int main(int argc, char** argv) {
    const int depth = argc > 1 ? std::atoi(argv[1]) : 4096;
    const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
    const int reps = argc > 3 ? std::atoi(argv[3]) : 20;
    const int nLayers = argc > 4 ? std::atoi(argv[4]) : 30;
    const int nHeads = argc > 5 ? std::atoi(argv[5]) : 9;
    const int nKvHeads = argc > 6 ? std::atoi(argv[6]) : 3;
    const int headDim = argc > 7 ? std::atoi(argv[7]) : 64;
    const DType type = argc > 8 && std::string(argv[8]) == "q8_0" ? DType::Q8_0 : DType::F16;
    const bool dimMajor = type == DType::F16 && !(argc > 9 && std::string(argv[9]) == "rows");
    const bool vHeads = type == DType::F16 && !(argc > 10 && std::string(argv[10]) == "rows");
    if (depth < 1 || threads < 1 || reps < 1 || nLayers < 1 || nHeads < 1 || nKvHeads < 1 || nHeads % nKvHeads != 0 ||
        headDim < 8) {
        std::fprintf(stderr,
                     "usage: attention_bench [DEPTH] [THREADS] [REPS] [LAYERS] [HEADS] [KV_HEADS] "
                     "[HEAD_DIM] [f16|q8_0] [dims|rows] [heads|rows]\n");
        return 2;
    }
    const int blockSize = 16, rowStride = nKvHeads * headDim;
    const size_t rowBytesKv = rowBytes(type, rowStride);
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);

    auto backend = makeBestCpuBackend(threads);
    // The KV in the engine's own cache (chunks of blocks per layer, huge pages), one sequence.
    KvLayout layout{nLayers, rowStride, blockSize,
                    type == DType::Q8_0 ? KvElementType::Q8_0 : KvElementType::F16};
    layout.kDimMajor = dimMajor;
    layout.vHeadDim = vHeads ? headDim : 0;
    KvCache cache(layout, depth);
    KvSequence seq;
    if (!cache.reserve(seq, depth)) return std::fprintf(stderr, "cannot reserve %d positions\n", depth), 1;
    seq.nTokens = depth;
    std::vector<float> kRows(static_cast<size_t>(depth) * rowStride), vRows(kRows.size());
    std::vector<int32_t> positions(static_cast<size_t>(depth));
    for (int p = 0; p < depth; ++p) positions[static_cast<size_t>(p)] = p;
    for (int l = 0; l < nLayers; ++l) {
        for (float& x : kRows) x = normal(rng);
        for (float& x : vRows) x = normal(rng);
        backend->kvWrite(cache.layerView(seq, l), kRows.data(), vRows.data(), positions.data(), depth);
    }
    std::vector<PagedKvLayer> views;
    for (int l = 0; l < nLayers; ++l) views.push_back(cache.layerView(seq, l));
    const AttentionShape shape{.nHeads = nHeads,
                               .nKvHeads = nKvHeads,
                               .headDim = headDim,
                               .scale = 1.0f / std::sqrt(static_cast<float>(headDim))};
    std::vector<float> q(static_cast<size_t>(nHeads) * headDim), out(q.size());
    for (float& x : q) x = normal(rng);
    const int32_t last = depth - 1;
    double best = 1e30, checksum = 0;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int l = 0; l < nLayers; ++l) {
            backend->attention(views[static_cast<size_t>(l)], shape, q.data(), &last, 1, out.data());
            checksum += out[0];
        }
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double bytes = 2.0 * static_cast<double>(rowBytesKv) * depth * nLayers;
    std::printf(
        "%s, %d thread(s), depth %d, %d layers x %d heads / %d KV heads x %d, %s KV%s: "
        "%.3f ms per step, KV %.1f MB at %.2f GB/s (checksum %.6g)\n",
        backend->name().c_str(), threads, depth, nLayers, nHeads, nKvHeads, headDim,
        type == DType::Q8_0 ? "q8_0" : "f16",
        dimMajor && vHeads ? " (K dimension-major, V head-major)"
        : dimMajor         ? " (K dimension-major)"
        : vHeads           ? " (V head-major)"
                           : "",
        best * 1e3, bytes / 1e6,
        bytes / best / 1e9, checksum);
    return 0;
}

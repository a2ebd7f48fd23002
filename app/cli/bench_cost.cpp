// Per-token cost of a model (bench_cost.h), from the GGUF tensor list: every 2-D tensor is a
// matrix the forward pass multiplies, except the token-embedding table, which it looks up.
#include "app/cli/bench_cost.h"

#include <algorithm>

#include "engine/model/gguf.h"
#include "engine/model/model.h"

namespace hearth {

ModelCost modelCost(const GgufFile& file, const ModelConfig& config) {
    ModelCost cost;
    for (const GgufTensorInfo& t : file.tensors()) {
        cost.tensorBytes += t.nBytes;
        if (t.dims.size() != 2) continue;  // norms, rope factors: vectors
        const uint64_t rows = static_cast<uint64_t>(t.dims[1]), cols = static_cast<uint64_t>(t.dims[0]);
        const uint64_t flops = 2 * rows * cols;
        if (t.name == "token_embd.weight") {
            cost.weightBytesPerToken += config.tiedOutput ? t.nBytes : t.nBytes / rows;
            if (config.tiedOutput) cost.outputFlops += flops;
        } else if (t.name == "output.weight") {
            cost.weightBytesPerToken += t.nBytes;
            cost.outputFlops += flops;
        } else {
            cost.weightBytesPerToken += t.nBytes;
            cost.layerFlopsPerToken += flops;
        }
    }
    cost.kvBytesPerPosition = 2ull * 2 * static_cast<uint64_t>(config.nLayers) *
        static_cast<uint64_t>(config.nKvHeads) * static_cast<uint64_t>(config.headDim);
    return cost;
}

double attentionFlops(const ModelConfig& config, int64_t from, int64_t to) {
    double total = 0;
    const double perPosition = 4.0 * config.nHeads * config.headDim;
    for (int il = 0; il < config.nLayers; ++il) {
        const bool sliding =
            config.slidingWindow > 0 && il < std::ssize(config.slidingLayers) && config.slidingLayers[il];
        for (int64_t p = from; p < to; ++p) {
            const int64_t visible = sliding ? std::min<int64_t>(p + 1, config.slidingWindow) : p + 1;
            total += perPosition * static_cast<double>(visible);
        }
    }
    return total;
}

double kvBytesReadPerToken(const ModelConfig& config, double bytesPerElement, int64_t from, int64_t to) {
    if (to <= from) return 0;
    const double perPosition = 2.0 * config.nKvHeads * config.headDim * bytesPerElement;  // K and V, one layer
    double positions = 0;
    for (int il = 0; il < config.nLayers; ++il) {
        const bool sliding =
            config.slidingWindow > 0 && il < std::ssize(config.slidingLayers) && config.slidingLayers[il];
        for (int64_t p = from; p < to; ++p)
            positions += static_cast<double>(sliding ? std::min<int64_t>(p + 1, config.slidingWindow) : p + 1);
    }
    return perPosition * positions / static_cast<double>(to - from);
}

}  // namespace hearth

// Layer placement from the file's tensor sizes (layer_placement.h).
#include "engine/model/layer_placement.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "engine/str_cat.h"

namespace hearth {

std::string LayerPlacement::describe() const {
    if (onDevice == 0) return "no layer fits the GPU";
    if (all()) return strCat("all ", nLayers, " layers on the GPU");
    return strCat(onDevice, " of ", nLayers, " layers on the GPU");
}

size_t placementMargin(const ModelConfig& c) {
    const size_t rows = 512;
    const size_t perRow = (4 * static_cast<size_t>(c.nEmbd) + 2 * static_cast<size_t>(c.nFf) +
                           2 * static_cast<size_t>(c.nHeads) * static_cast<size_t>(c.headDim)) *
        sizeof(float);
    return (size_t{256} << 20) + rows * perRow + 16 * static_cast<size_t>(c.nVocab) * sizeof(float);
}

LayerPlacement planLayerPlacement(const GgufFile& file, const ModelConfig& config, const KvLayout& layout,
                                  int32_t contextTokens, size_t budget, int maxLayers) {
    LayerPlacement p;
    p.nLayers = config.nLayers;
    p.budget = budget;
    std::vector<size_t> layerBytes(static_cast<size_t>(config.nLayers), 0);
    size_t embedding = 0, output = 0;
    for (const GgufTensorInfo& t : file.tensors()) {
        const std::string_view name = t.name;
        if (name == "token_embd.weight") embedding = t.nBytes;
        else if (name == "output.weight") output = t.nBytes;
        else if (name.rfind("blk.", 0) == 0) {
            const int layer = std::atoi(t.name.c_str() + 4);
            if (layer >= 0 && layer < config.nLayers) layerBytes[static_cast<size_t>(layer)] += t.nBytes;
        } else if (name == "output_norm.weight") output += t.nBytes;
    }
    const size_t kvPerLayer = 2 * kvRowBytes(layout) * static_cast<size_t>(contextTokens + layout.blockSize);
    // Everything: the embedding (a tied one doubles as the output matrix), every layer with its KV.
    size_t total = embedding + output + placementMargin(config);
    for (size_t bytes : layerBytes) total += bytes + kvPerLayer;
    if (total <= budget && (maxLayers < 0 || maxLayers >= config.nLayers)) {
        p.onDevice = config.nLayers;
        p.deviceBytes = total;
        return p;
    }
    // Whole layers from the first, while they fit beside the embedding's copy and the margin; the
    // last layer stays with the output head on the CPU (a split needs one there).
    size_t used = embedding + placementMargin(config);
    int n = 0;
    const int most = maxLayers < 0 ? config.nLayers - 1 : std::min(maxLayers, config.nLayers - 1);
    while (n < most && used + layerBytes[static_cast<size_t>(n)] + kvPerLayer <= budget)
        used += layerBytes[static_cast<size_t>(n++)] + kvPerLayer;
    p.onDevice = n;
    p.deviceBytes = n > 0 ? used : 0;
    return p;
}

size_t cudaMemoryLimitFromEnvironment() {
    const char* v = std::getenv("HEARTH_CUDA_MEMORY_LIMIT_MB");
    if (v == nullptr) return 0;
    char* end = nullptr;
    const long long mb = std::strtoll(v, &end, 10);
    if (end == v || *end != '\0' || mb <= 0) return 0;
    return static_cast<size_t>(mb) << 20;
}

}  // namespace hearth

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

PlacementSizes placementSizes(const GgufFile& file, const ModelConfig& config) {
    PlacementSizes s;
    s.layerBytes.assign(static_cast<size_t>(std::max(0, config.nLayers)), 0);
    for (const GgufTensorInfo& t : file.tensors()) {
        const std::string_view name = t.name;
        if (name == "token_embd.weight") s.embedding = t.nBytes;
        else if (name == "output.weight") s.output += t.nBytes;
        else if (name.rfind("blk.", 0) == 0) {
            const int layer = std::atoi(t.name.c_str() + 4);
            if (layer >= 0 && layer < config.nLayers) s.layerBytes[static_cast<size_t>(layer)] += t.nBytes;
        } else if (name == "output_norm.weight") s.output += t.nBytes;
    }
    s.margin = placementMargin(config);
    return s;
}

LayerPlacement planLayerPlacement(const GgufFile& file, const ModelConfig& config, const KvLayout& layout,
                                  int32_t contextTokens, size_t budget, int maxLayers) {
    return planLayerPlacement(placementSizes(file, config), layout, contextTokens, budget, maxLayers);
}

LayerPlacement planLayerPlacement(const PlacementSizes& sizes, const KvLayout& layout, int32_t contextTokens,
                                  size_t budget, int maxLayers) {
    const int nLayers = static_cast<int>(sizes.layerBytes.size());
    LayerPlacement p;
    p.nLayers = nLayers;
    p.budget = budget;
    const size_t kvPerLayer = 2 * kvRowBytes(layout) * static_cast<size_t>(contextTokens + layout.blockSize);
    // Everything: the embedding (a tied one doubles as the output matrix), every layer with its KV.
    size_t total = sizes.embedding + sizes.output + sizes.margin;
    for (size_t bytes : sizes.layerBytes) total += bytes + kvPerLayer;
    if (total <= budget && (maxLayers < 0 || maxLayers >= nLayers)) {
        p.onDevice = nLayers;
        p.deviceBytes = total;
        return p;
    }
    // Whole layers from the first, while they fit beside the embedding's copy and the margin; the
    // last layer stays with the output head on the CPU (a split needs one there).
    size_t used = sizes.embedding + sizes.margin;
    int n = 0;
    const int most = maxLayers < 0 ? nLayers - 1 : std::min(maxLayers, nLayers - 1);
    while (n < most && used + sizes.layerBytes[static_cast<size_t>(n)] + kvPerLayer <= budget)
        used += sizes.layerBytes[static_cast<size_t>(n++)] + kvPerLayer;
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

size_t placementBudget(size_t freeBytes) {
    const size_t limit = cudaMemoryLimitFromEnvironment();
    return limit > 0 ? std::min(freeBytes, limit) : freeBytes;
}

}  // namespace hearth

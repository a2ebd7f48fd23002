// Placement of a model on a GPU whose free memory may not hold it (issue 24): the embedding,
// every layer and the output head when they fit with the KV the context needs, else as many
// whole layers as fit (the rest and the output head on the CPU, Model::splitLayers), else none.
// Sizes come from the file's tensors; the KV from the layout and the context; a working margin
// covers activations and the backend's scratch.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/kv/kv_layout.h"

namespace hearth {

class GgufFile;
struct ModelConfig;

struct LayerPlacement {
    int nLayers = 0;
    int onDevice = 0;  // layers [0, onDevice) on the device; nLayers: everything, the output head too
    size_t deviceBytes = 0;  // what the device is to hold: weights, KV for the context, working margin
    size_t budget = 0;  // what it may hold
    bool all() const { return onDevice == nLayers; }
    // "all 32 layers on the GPU", "28 of 32 layers on the GPU", "no layer fits the GPU".
    std::string describe() const;
};

// What placement weighs: each layer's tensors, the embedding, the output head (with the final
// norm) and the working margin, read from a file's tensor table once (the model picker keeps it
// to plan again for another context or free memory without opening the file).
struct PlacementSizes {
    std::vector<size_t> layerBytes;  // [nLayers]
    size_t embedding = 0, output = 0, margin = 0;
};
PlacementSizes placementSizes(const GgufFile& file, const ModelConfig& config);

// Working memory beyond weights and KV: activations of a 512-row prefill and the backend's
// scratch (its F16 tiles, the attention splits, the logits rows).
size_t placementMargin(const ModelConfig& config);

// The placement for a device that may hold `budget` bytes, with at most maxLayers layers on it
// (negative: no cap; below nLayers: a split).
LayerPlacement planLayerPlacement(const GgufFile& file, const ModelConfig& config, const KvLayout& layout,
                                  int32_t contextTokens, size_t budget, int maxLayers = -1);
LayerPlacement planLayerPlacement(const PlacementSizes& sizes, const KvLayout& layout, int32_t contextTokens,
                                  size_t budget, int maxLayers = -1);

// HEARTH_CUDA_MEMORY_LIMIT_MB in the environment, in bytes (0: not set, or not a positive number).
size_t cudaMemoryLimitFromEnvironment();
// What placement may use of a device with freeBytes free: capped by cudaMemoryLimitFromEnvironment.
size_t placementBudget(size_t freeBytes);

}  // namespace hearth

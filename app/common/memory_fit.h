// Whether a model fits in the memory available now: its weights (mapped whole), the KV cache the
// engine would allocate for the chosen context (KvCache's own sizing: whole blocks of every
// layer's K and V rows), and 10% over both, against MemAvailable - "fits" below 70% of it,
// "tight" up to 100%, "too big" above. With a usable GPU, also how many whole layers the engine
// would place on it (engine/model/layer_placement.h, from the GPU's free memory).
#pragma once

#include <QString>

#include "engine/kv/kv_layout.h"
#include "engine/model/layer_placement.h"

namespace hearth {

enum class MemoryVerdict { Unknown, Fits, Tight, TooBig };

struct MemoryEstimate {
    MemoryVerdict verdict = MemoryVerdict::Unknown;
    int contextLength = 0;  // the context the KV cache was sized for
    qint64 weightBytes = 0;
    qint64 kvBytes = 0;
    qint64 neededBytes = 0;  // (weights + KV) * 1.1
    qint64 availableBytes = -1;  // < 0: unknown (then the verdict is Unknown)
    // With a usable GPU: the layers the engine would place on it (LayerPlacement); nLayers 0: no
    // GPU, or not known.
    LayerPlacement gpu;
};

struct MemoryOptions {
    int contextLength = 0;  // the context chosen in the settings; 0: the model's trained context
    KvElementType kvType = KvElementType::F16;
    qint64 availableBytes = -1;  // the memory available now (availableMemoryBytes()); < 0: unknown
    qint64 gpuFreeBytes = -1;  // a usable GPU's free memory (the engine would load there); < 0: none
};

// MemAvailable from a /proc/meminfo-formatted file, in bytes; -1 when it cannot be read (not
// Linux, or no such line).
qint64 availableMemoryBytes(const QString& meminfoPath = QStringLiteral("/proc/meminfo"));
// Bytes of KV a conversation of nTokens holds at most (KvCache::create's pool of
// ceil(nTokens / blockSize) blocks; with a window group, only the blocks the window still reads
// of that group's: the per-group pools); -1 when the layout is not one the cache accepts (a Q8_0
// row not a multiple of 32) or the size is out of range.
qint64 kvCacheBytes(const KvLayout& layout, int nTokens);
// layout: the model's (Model::kvLayout()); the element type is taken from options. The context is
// the engine's: the chosen one capped by the trained one, or the trained one.
// placement: the file's sizes for the GPU's share (options.gpuFreeBytes); null or empty: none.
MemoryEstimate estimateMemory(qint64 weightBytes, KvLayout layout, int trainedContext, const MemoryOptions& options,
                              const PlacementSizes* placement = nullptr);
// "all 32 layers on the GPU", "20 of 32 layers on the GPU", "too big for the GPU: on the CPU"
// (translated); empty without a GPU.
QString gpuPlacementText(const LayerPlacement& gpu);
// "fits", "tight", "too big", "unknown" (translated)
QString memoryVerdictText(MemoryVerdict verdict);

}  // namespace hearth

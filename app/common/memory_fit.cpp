// Memory fit (memory_fit.h). The KV size is the engine's own: a KvCache of that layout and
// context is made (its blocks are allocated only when handed out, so this costs a few small
// vectors) and asked for its capacity and block size.
#include "app/common/memory_fit.h"

#include <QCoreApplication>
#include <QFile>
#include <algorithm>

#include "engine/kv/kv_cache.h"

namespace hearth {

qint64 availableMemoryBytes(const QString& meminfoPath) {
    QFile f(meminfoPath);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return -1;
    // "MemAvailable:   12345678 kB" (proc(5): the kernel's estimate of memory available for
    // starting new applications without swapping)
    // Read whole: /proc files report a size of 0, so atEnd() would be true at once.
    for (const QByteArray& raw : f.read(1 << 16).split('\n')) {
        const QByteArray line = raw.simplified();
        if (!line.startsWith("MemAvailable:")) continue;
        const QList<QByteArray> fields = line.split(' ');
        bool ok = false;
        const qint64 kb = fields.size() >= 2 ? fields[1].toLongLong(&ok) : 0;
        if (!ok || kb < 0) return -1;
        return fields.size() >= 3 && fields[2] == "kB" ? kb * 1024 : kb;
    }
    return -1;
}

qint64 kvCacheBytes(const KvLayout& layout, int nTokens) {
    auto cache = KvCache::create(layout, nTokens);
    if (!cache) return -1;
    const auto blocks = static_cast<qint64>((*cache)->capacityTokens() / layout.blockSize);
    qint64 bytes = blocks * static_cast<qint64>((*cache)->bytesPerBlock(0));
    if ((*cache)->nGroups() > 1) {
        // The window group's pool: memory is taken on first use and blocks that left every
        // future query's window are returned (KvCache), so a conversation holds at most the
        // blocks its next query's `window` positions touch, plus the one being written.
        const qint64 windowBlocks = std::min<qint64>(blocks, (layout.window - 1) / layout.blockSize + 2);
        bytes += windowBlocks * static_cast<qint64>((*cache)->bytesPerBlock(1));
    }
    return bytes;
}

MemoryEstimate estimateMemory(qint64 weightBytes, KvLayout layout, int trainedContext, const MemoryOptions& options,
                              const PlacementSizes* placement) {
    MemoryEstimate e;
    e.contextLength = options.contextLength > 0 && trainedContext > 0 ? std::min(options.contextLength, trainedContext)
                                                                      : trainedContext;
    e.weightBytes = weightBytes;
    e.availableBytes = options.availableBytes;
    layout.elementType = options.kvType;
    e.kvBytes = e.contextLength > 0 && layout.nLayers > 0 ? kvCacheBytes(layout, e.contextLength) : -1;
    if (e.kvBytes < 0) return e;
    if (placement != nullptr && !placement->layerBytes.empty() && options.gpuFreeBytes > 0)
        e.gpu = planLayerPlacement(*placement, layout, e.contextLength, static_cast<size_t>(options.gpuFreeBytes));
    e.neededBytes = static_cast<qint64>(static_cast<double>(weightBytes + e.kvBytes) * 1.1);
    if (e.availableBytes <= 0) return e;
    const double share = static_cast<double>(e.neededBytes) / static_cast<double>(e.availableBytes);
    e.verdict = share < 0.7 ? MemoryVerdict::Fits : share <= 1.0 ? MemoryVerdict::Tight : MemoryVerdict::TooBig;
    return e;
}

QString gpuPlacementText(const LayerPlacement& gpu) {
    if (gpu.nLayers <= 0) return {};
    if (gpu.onDevice == 0) return QCoreApplication::translate("hearth::MemoryFit", "too big for the GPU: on the CPU");
    if (gpu.all()) return QCoreApplication::translate("hearth::MemoryFit", "all %1 layers on the GPU").arg(gpu.nLayers);
    return QCoreApplication::translate("hearth::MemoryFit", "%1 of %2 layers on the GPU").arg(gpu.onDevice).arg(gpu.nLayers);
}

QString memoryVerdictText(MemoryVerdict verdict) {
    switch (verdict) {
    case MemoryVerdict::Fits: return QCoreApplication::translate("hearth::MemoryFit", "fits");
    case MemoryVerdict::Tight: return QCoreApplication::translate("hearth::MemoryFit", "tight");
    case MemoryVerdict::TooBig: return QCoreApplication::translate("hearth::MemoryFit", "too big");
    case MemoryVerdict::Unknown: break;
    }
    return QCoreApplication::translate("hearth::MemoryFit", "unknown");
}

}  // namespace hearth

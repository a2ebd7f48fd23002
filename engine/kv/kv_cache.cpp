// Paged KV storage: a pool of fixed-size blocks, a free list, per-sequence block tables.
// Block memory: [nLayers][K, V][blockSize][rowStride] F16.
#include "engine/kv/kv_cache.h"

#include <algorithm>
#include <new>
#include <string>

namespace hearth {

KvCache::KvCache(KvLayout layout, int32_t maxTokens) : layout_(layout) {
    nMaxBlocks_ = (std::max(maxTokens, 1) + layout_.blockSize - 1) / layout_.blockSize;
    blocks_.resize(static_cast<size_t>(nMaxBlocks_));
    freeList_.reserve(static_cast<size_t>(nMaxBlocks_));
    for (int32_t b = nMaxBlocks_ - 1; b >= 0; --b) freeList_.push_back(b);
}

KvCache::~KvCache() = default;

size_t KvCache::bytesPerBlock() const {
    return static_cast<size_t>(layout_.nLayers) * 2 * static_cast<size_t>(layout_.blockSize) *
           static_cast<size_t>(layout_.rowStride) * sizeof(f16_t);
}

int32_t KvCache::nFreeBlocks() const { return static_cast<int32_t>(freeList_.size()); }

f16_t* KvCache::blockData(int32_t block) {
    auto& slot = blocks_[static_cast<size_t>(block)];
    if (!slot) slot.reset(new (std::nothrow) f16_t[bytesPerBlock() / sizeof(f16_t)]);
    return slot.get();
}

Result<void> KvCache::reserve(KvSequence& seq, int32_t nTokens) {
    const int32_t needBlocks = (nTokens + layout_.blockSize - 1) / layout_.blockSize;
    const int32_t haveBlocks = static_cast<int32_t>(seq.blockTable.size());
    if (needBlocks <= haveBlocks) return {};
    const int32_t extra = needBlocks - haveBlocks;
    if (extra > nFreeBlocks())
        return fail(ErrorCode::OutOfMemory, "KV cache full: " + std::to_string(nTokens) +
                                                " tokens need " + std::to_string(needBlocks) +
                                                " blocks, " + std::to_string(haveBlocks + nFreeBlocks()) +
                                                " available");
    // Plan: the blocks to take are the last `extra` entries of the free list; make sure each
    // has memory before taking any of them.
    for (int32_t i = 0; i < extra; ++i)
        if (!blockData(freeList_[freeList_.size() - 1 - static_cast<size_t>(i)]))
            return fail(ErrorCode::OutOfMemory, "KV cache: cannot allocate a block");
    for (int32_t i = 0; i < extra; ++i) {
        seq.blockTable.push_back(freeList_.back());
        freeList_.pop_back();
    }
    return {};
}

void KvCache::truncate(KvSequence& seq, int32_t nTokens) {
    nTokens = std::clamp(nTokens, 0, seq.nTokens);
    const size_t keepBlocks = static_cast<size_t>((nTokens + layout_.blockSize - 1) / layout_.blockSize);
    while (seq.blockTable.size() > keepBlocks) {
        freeList_.push_back(seq.blockTable.back());
        seq.blockTable.pop_back();
    }
    seq.nTokens = nTokens;
}

PagedKvLayer KvCache::layerView(const KvSequence& seq, int layer) {
    const size_t n = seq.blockTable.size();
    kPointers_.resize(n * static_cast<size_t>(layout_.nLayers));
    vPointers_.resize(n * static_cast<size_t>(layout_.nLayers));
    const size_t layerElems = 2 * static_cast<size_t>(layout_.blockSize) * static_cast<size_t>(layout_.rowStride);
    const size_t halfElems = layerElems / 2;
    // Pointers of layer l live at [l * n, (l + 1) * n) so that views of all layers stay valid together.
    f16_t** kOut = kPointers_.data() + static_cast<size_t>(layer) * n;
    f16_t** vOut = vPointers_.data() + static_cast<size_t>(layer) * n;
    for (size_t b = 0; b < n; ++b) {
        f16_t* base = blocks_[static_cast<size_t>(seq.blockTable[b])].get() + static_cast<size_t>(layer) * layerElems;
        kOut[b] = base;
        vOut[b] = base + halfElems;
    }
    return PagedKvLayer{kOut, vOut, layout_.blockSize, layout_.rowStride};
}

}  // namespace hearth

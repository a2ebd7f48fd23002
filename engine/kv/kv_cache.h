// KV storage in fixed-size blocks addressed through per-sequence block tables. This is the
// paged layout that the full manager (prefix sharing, reference counts, LRU: issue 4) builds
// on; for now each sequence owns its blocks.
// Thread-safety: owned and called by the engine thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/error.h"
#include "kernels/backend.h"

namespace hearth {

struct KvLayout {
    int nLayers = 0;
    int rowStride = 0;    // nKvHeads * headDim: elements of one token's K (or V) in one layer
    int blockSize = 16;   // tokens per block
};

// One sequence's view of the cache: its block table and how many positions are filled.
struct KvSequence {
    std::vector<int32_t> blockTable;
    int32_t nTokens = 0;
};

class KvCache {
public:
    // maxTokens bounds the memory: ceil(maxTokens / blockSize) blocks at most, allocated lazily.
    KvCache(KvLayout layout, int32_t maxTokens);
    ~KvCache();
    KvCache(const KvCache&) = delete;
    KvCache& operator=(const KvCache&) = delete;

    const KvLayout& layout() const { return layout_; }
    int32_t capacityTokens() const { return nMaxBlocks_ * layout_.blockSize; }

    // Makes room for positions [0, nTokens) in seq: plans every block first and commits only
    // when all of them can be had, so a failure leaves seq and the pool unchanged.
    Result<void> reserve(KvSequence& seq, int32_t nTokens);
    // Drops positions >= nTokens, returning whole blocks past them to the free list.
    void truncate(KvSequence& seq, int32_t nTokens);
    void release(KvSequence& seq) { truncate(seq, 0); }

    // Pointers for one layer of seq, valid until the next reserve/truncate.
    PagedKvLayer layerView(const KvSequence& seq, int layer);

    int32_t nFreeBlocks() const;
    size_t bytesPerBlock() const;

private:
    f16_t* blockData(int32_t block);

    KvLayout layout_;
    int32_t nMaxBlocks_ = 0;
    std::vector<std::unique_ptr<f16_t[]>> blocks_;  // allocated on first use
    std::vector<int32_t> freeList_;                 // O(1) pop/push
    std::vector<f16_t*> kPointers_, vPointers_;     // scratch for layerView
};

}  // namespace hearth

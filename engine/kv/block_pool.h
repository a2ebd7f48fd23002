// BlockPool: the bookkeeping of KV blocks by id — reference counts, an O(1) free list, and the
// prefix index (block key -> block) with an LRU of unreferenced blocks whose key is known.
// It knows nothing about memory (KvCache owns that). Thread-safety: engine thread only.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/kv/kv_layout.h"
#include "engine/util/sha256.h"

namespace hearth {

using BlockId = int32_t;
using BlockKey = Sha256Digest;

// The key a chain of blocks starts from. Two caches share a block only when their roots are
// equal, so the root must name everything that makes K/V values differ: the model's bytes,
// the KV layout, the backend and its numerics version (DESIGN.md, engine/kv).
struct KvChainRoot {
    BlockKey key{};
    // SHA-256(modelFingerprint || describe(layout) || backendName || numericsVersion as LE u32).
    static KvChainRoot derive(std::span<const uint8_t> modelFingerprint, const KvLayout& layout,
                              std::string_view backendName, uint32_t numericsVersion);
    bool operator==(const KvChainRoot&) const = default;
};

// Key of a full block: SHA-256(parent key || its token ids as little-endian int32).
BlockKey chainKey(const BlockKey& parent, std::span<const int32_t> tokens);

// Cached blocks holding a prefix of some tokens, in order, with their keys.
struct CachedPrefix {
    std::vector<BlockId> blocks;
    std::vector<BlockKey> keys;
};

class BlockPool {
public:
    // Blocks 0 .. nBlocks-1, all free; a fresh pool hands them out in increasing order.
    BlockPool(int32_t nBlocks, int32_t blockSize);

    int32_t nBlocks() const { return static_cast<int32_t>(refCounts_.size()); }
    int32_t blockSize() const { return blockSize_; }
    int32_t nFree() const { return static_cast<int32_t>(freeList_.size()); }  // unreferenced, no key
    int32_t nCached() const { return nCached_; }  // unreferenced, keyed: evictable, in LRU
    int32_t nUsed() const { return nBlocks() - nFree() - nCached(); }
    int32_t nAvailable() const { return nFree() + nCached(); }
    int32_t refCount(BlockId block) const { return refCounts_[static_cast<size_t>(block)]; }
    const BlockKey* keyOf(BlockId block) const;  // nullptr when the block is not indexed
    BlockId find(const BlockKey& key) const;  // -1 when no block is indexed under key
    std::vector<BlockId> lruOrder() const;  // cached blocks, least recently used first
    // Changes on every mutation; a planned reservation is valid only for the generation it saw.
    uint64_t generation() const { return generation_; }

    // The longest run of indexed blocks whose keys chain from `parent` over whole blocks of
    // `tokens` (a trailing partial block is never matched). Changes nothing.
    CachedPrefix longestCachedPrefix(const BlockKey& parent, std::span<const int32_t> tokens) const;

    // The blocks the next n allocate() calls would hand out once the cached blocks in
    // `toShare` have been shared (fewer when fewer are available). Changes nothing.
    std::vector<BlockId> peekAllocations(int32_t n, std::span<const BlockId> toShare) const;
    // Requires nAvailable() > 0. Takes the top of the free list, or else evicts the least
    // recently used cached block (dropping its key). The block comes back with refcount 1.
    BlockId allocate();
    // One more reference; a cached block leaves the LRU.
    void share(BlockId block);
    // One reference less; at zero a keyed block becomes the most recently used cached block,
    // an unkeyed one returns to the free list.
    void release(BlockId block);
    // Indexes a referenced, full, unkeyed block under key. False (and nothing changes) when the
    // key already names another block: the first one stays the cached copy.
    bool publish(BlockId block, const BlockKey& key);
    // Drops a block's key, e.g. before it is overwritten in place; a cached block becomes free.
    void unpublish(BlockId block);

private:
    struct KeyHash {
        size_t operator()(const BlockKey& k) const;
    };
    void dropKey(BlockId block);
    void lruPushBack(BlockId block);
    void lruRemove(BlockId block);

    int32_t blockSize_;
    std::vector<int32_t> refCounts_;
    std::vector<BlockId> freeList_;  // a stack: back() is handed out next
    std::vector<uint8_t> keyed_;  // 1 when keys_[block] is in index_
    std::vector<BlockKey> keys_;
    std::unordered_map<BlockKey, BlockId, KeyHash> index_;
    std::vector<BlockId> lruPrev_, lruNext_;  // intrusive list, -1 terminated
    BlockId lruHead_ = -1, lruTail_ = -1;  // head: least recently used
    int32_t nCached_ = 0;
    uint64_t generation_ = 0;
};

}  // namespace hearth

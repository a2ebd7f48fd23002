// KvCache: the K/V memory of one model's attention group, handed out in fixed-size blocks
// through per-sequence block tables, with prefix sharing through a BlockPool (reference
// counts, key index, LRU). Reservation is a plan (a KvReservation value) committed once.
// Thread-safety: owned and called by the engine thread only.
// TODO(#4): one pool and block table per attention group (vLLM's hybrid allocator), so that
// Gemma 3's sliding-window layers free the blocks outside their window; today every layer
// keeps every position (hearth-cli bench-kv prints what that costs).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/error.h"
#include "engine/kv/block_pool.h"
#include "engine/kv/kv_layout.h"
#include "kernels/backend.h"

namespace hearth {

// One sequence's view of the cache, a value the caller owns: its block table, how many
// positions hold K/V, and the chain keys of its leading full blocks (filled by publish()).
// A block of the table may be shared with other sequences; KvCache un-shares it before a write.
struct KvSequence {
    std::vector<BlockId> blockTable;
    int32_t nTokens = 0;
    std::vector<BlockKey> blockKeys;  // keys of blockTable[0 .. blockKeys.size()), all full
};

// What commit() will do to one sequence, planned against one state of the pool.
struct KvReservation {
    enum class Unshare : uint8_t {
        None,
        Copy,  // the partly filled block at the write position is shared or cached: copy it
        InPlace,  // it is ours alone but keyed, and no block is spare: drop its key instead
    };
    std::vector<BlockId> reuse;  // cached blocks appended to the table (shared)
    std::vector<BlockKey> reuseKeys;
    int32_t nCachedTokens = 0;  // positions the reused blocks fill
    int32_t nNewBlocks = 0;  // fresh blocks appended after them
    Unshare unshare = Unshare::None;
    // The state it was planned against; commit() refuses a reservation that no longer fits.
    uint64_t poolGeneration = 0;
    size_t fromTableSize = 0;
    int32_t fromNTokens = 0;
};

class KvCache {
public:
    // Errors: InvalidArgument (layout; a Q8_0 row not a multiple of 32 elements), OutOfMemory
    // (the block memory cannot be had).
    static Result<std::unique_ptr<KvCache>> create(const KvLayout& layout, int32_t maxTokens,
                                                   const KvChainRoot& root = {});
    // maxTokens bounds the memory: ceil(maxTokens / blockSize) blocks, each allocated when
    // first handed out. Precondition: a layout create() accepts.
    KvCache(KvLayout layout, int32_t maxTokens, const KvChainRoot& root = {});
    ~KvCache();
    KvCache(const KvCache&) = delete;
    KvCache& operator=(const KvCache&) = delete;

    const KvLayout& layout() const { return layout_; }
    const KvChainRoot& root() const { return root_; }
    const BlockPool& pool() const { return pool_; }
    int32_t capacityTokens() const { return pool_.nBlocks() * layout_.blockSize; }
    int32_t nFreeBlocks() const { return pool_.nAvailable(); }  // free + evictable cached
    size_t bytesPerBlock() const;

    // Plans room for positions [0, nTokens) of seq. When seq ends on a block boundary with all
    // its blocks keyed (an empty seq does), cached blocks continuing its chain over
    // `cacheableTokens` (ids of positions [0, ...) of seq; only whole blocks count) are reused
    // rather than recomputed. Changes nothing. Errors: OutOfMemory, InvalidArgument.
    Result<KvReservation> plan(const KvSequence& seq, int32_t nTokens,
                               std::span<const int32_t> cacheableTokens = {}) const;
    // Applies a reservation planned for seq against the current state: all of it or, when the
    // state changed since plan() (InvalidArgument) or block memory cannot be had
    // (OutOfMemory), nothing.
    Result<void> commit(KvSequence& seq, const KvReservation& reservation);
    // plan() without reuse, then commit(): what the owner of a sequence's step state calls
    // before a forward pass writes K/V (Scheduler::schedule, Model::forward).
    Result<void> reserve(KvSequence& seq, int32_t nTokens);
    // Whether positions [seq.nTokens, nTokens) can be written as they are: seq's table has their
    // blocks and the partly filled one written first is seq's alone and unkeyed, so reserve()
    // would change nothing. What a forward pass checks instead of reserving.
    bool reserved(const KvSequence& seq, int32_t nTokens) const;

    // Indexes seq's blocks that are full and not yet keyed; tokens: ids of positions
    // [0, seq.nTokens) (more are ignored, fewer publish only the blocks they cover).
    void publish(KvSequence& seq, std::span<const int32_t> tokens);
    // Drops positions >= nTokens: blocks past them are released (the last first, so deeper
    // blocks are evicted before the prefix they continue). A partly kept shared block is
    // un-shared by the next plan that writes into it.
    void rollback(KvSequence& seq, int32_t nTokens);
    void release(KvSequence& seq) { rollback(seq, 0); }
    // A second sequence holding the same positions in the same blocks (each shared once more):
    // a beam that branches off. Writing past the fork copies the partly filled block first.
    KvSequence fork(const KvSequence& seq);

    // Persistence (engine/snapshot): a block's bytes, bytesPerBlock() of them (all layers);
    // empty when the block's memory was never allocated.
    std::span<const uint8_t> blockBytes(BlockId block) const;
    // Fills a free (else the least recently used cached) block with saved bytes and indexes it
    // under key as a cached block, as if computed and released. False when key is already
    // indexed (nothing changes). Errors: InvalidArgument (size), OutOfMemory (no block).
    Result<bool> importBlock(const BlockKey& key, std::span<const uint8_t> bytes);
    // A sequence's trailing partial block, saved and restored (engine/snapshot): the first
    // nRows rows of every layer's K and V, packed (tailBytes(nRows) bytes); empty when the
    // block's memory was never allocated. writeRows fills the first nRows rows of a block the
    // caller holds from the first nRows rows of such packed bytes (saved with nSavedRows >= nRows).
    size_t tailBytes(int32_t nRows) const {
        return static_cast<size_t>(nRows) * 2 * static_cast<size_t>(layout_.nLayers) * rowBytes_;
    }
    std::vector<uint8_t> packedRows(BlockId block, int32_t nRows) const;
    Result<void> writeRows(BlockId block, std::span<const uint8_t> packed, int32_t nSavedRows, int32_t nRows);

    // Pointers for one layer of seq (views of all layers stay valid together), valid until
    // the next commit/reserve/rollback of any sequence.
    PagedKvLayer layerView(const KvSequence& seq, int layer);

private:
    uint8_t* blockData(BlockId block) { return blocks_[static_cast<size_t>(block)].get(); }
    Result<void> ensureMemory(const KvSequence& seq, const KvReservation& reservation);
    int32_t blocksFor(int32_t nTokens) const { return (nTokens + layout_.blockSize - 1) / layout_.blockSize; }
    KvReservation::Unshare planUnshare(const KvSequence& seq, int32_t nTokens, int32_t nSpare) const;
    void copyRows(BlockId from, BlockId to, int32_t nRows);

    KvLayout layout_;
    KvChainRoot root_;
    BlockPool pool_;
    size_t rowBytes_ = 0;  // one token's K (or V) row in one layer
    size_t bytesPerBlock_ = 0;
    std::vector<std::unique_ptr<uint8_t[]>> blocks_;  // [nBlocks] -> [nLayers][K, V][blockSize] rows, on first use
    std::vector<f16_t*> kPointers_, vPointers_;  // scratch for layerView
};

}  // namespace hearth

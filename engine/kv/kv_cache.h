// KvCache: the K/V memory of one model, one pool per attention group, handed out in fixed-size
// blocks through per-sequence block tables, with prefix sharing through a BlockPool per group
// (reference counts, key index, LRU). Reservation is a plan (a KvReservation value) committed once.
// A model with sliding-window layers (KvLayout::window) has two groups, as vLLM's hybrid
// allocator does: the full-attention group keeps every position; the window group keeps only
// what the next query's window reads, and its blocks that fall out of that window are released
// as the sequence advances (freed when no other sequence holds them). Force one group of all
// positions with a layout that has no window (Model::kvLayout(..., false)).
// Prefix sharing with a window group: a cached prefix of n blocks is reusable only when the
// window blocks the query right after it needs (positions from n * blockSize - window + 1 on) are
// still cached too; a released window block that no one holds is freed, not kept, so an earlier
// point of a long conversation (a regenerated reply far back, a branch) is recomputed from the
// last point whose window is held. The end of a finished sequence (its last window, released to
// the LRU) stays reusable, as the parked sequence does.
// Thread-safety: owned and called by the engine thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <vector>

#include "engine/error.h"
#include "engine/kv/block_pool.h"
#include "engine/kv/kv_layout.h"
#include "kernels/backend.h"

namespace hearth {

// A window-group table entry whose block was released (out of every future query's window).
inline constexpr BlockId kNoBlock = -1;

// One sequence's view of the cache, a value the caller owns: its block tables, how many
// positions hold K/V, and the chain keys of its leading full blocks (filled by publish()).
// A block of a table may be shared with other sequences; KvCache un-shares it before a write.
struct KvSequence {
    std::vector<BlockId> blockTable;  // the full-attention group (every layer when there is one group)
    int32_t nTokens = 0;
    std::vector<BlockKey> blockKeys;  // keys of blockTable[0 .. blockKeys.size()), all full
    // The window group's table when the layout has one: as long as blockTable, block i holding
    // the same positions; kNoBlock for the leading blocks released as the window slid past them.
    std::vector<BlockId> windowTable = {};
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
    // The window group (when the layout has one). Reused positions: table indices from
    // windowReuseFirst on share the cached windowReuse blocks; those before it stay kNoBlock
    // (outside the window of the first query computed).
    std::vector<BlockId> windowReuse = {};
    size_t windowReuseFirst = 0;
    // The sequence's window blocks of table indices below windowDropEnd are released first: no
    // query from the first position computed on reads them.
    size_t windowDropEnd = 0;
    int32_t nWindowFreed = 0;  // how many of those go back to the free list (no other holder)
    Unshare windowUnshare = Unshare::None;
    // The state it was planned against; commit() refuses a reservation that no longer fits.
    uint64_t poolGeneration = 0;
    uint64_t windowPoolGeneration = 0;
    size_t fromTableSize = 0;
    int32_t fromNTokens = 0;
};

// Cached blocks that continue a sequence's chain and that a query right after them can use: the
// full group's run and, with a window group, the window blocks that query reads (windowFirst:
// the table index of window[0]; indices of the run before it need none).
struct KvPrefixHit {
    CachedPrefix full;
    std::vector<BlockId> window;
    size_t windowFirst = 0;
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
    // The backend whose memory holds the blocks, for one that computes in memory of its own
    // (Backend::operatesOnHostMemory false): blocks are allocated there (Backend::allocate) and
    // every byte the cache moves goes through its copy, upload and download. Null (the default):
    // host memory. With firstHostLayer >= 0 only layers below it are there (a model split between
    // that backend and the CPU, Model::splitLayers): the other layers' K and V stay in host
    // memory. Set before the first reservation; the backend outlives the cache's use.
    void placeOn(Backend* backend, int firstHostLayer = -1);
    // Where a layer's blocks are (null: host memory).
    Backend* memory(int layer) const {
        return firstHostLayer_ >= 0 && layer >= firstHostLayer_ ? nullptr : memory_;
    }
    // 1, or 2 when the layout has a window group (group 0: full attention, group 1: the window).
    int nGroups() const { return static_cast<int>(groups_.size()); }
    const BlockPool& pool(int group = 0) const { return groups_[static_cast<size_t>(group)].pool; }
    int32_t capacityTokens() const { return pool().nBlocks() * layout_.blockSize; }
    // Free + evictable cached blocks of a group's pool.
    int32_t nFreeBlocks(int group = 0) const { return pool(group).nAvailable(); }
    size_t bytesPerBlock() const;  // K and V of every layer for one block of positions, all groups
    size_t bytesPerBlock(int group) const { return groups_[static_cast<size_t>(group)].bytesPerBlock; }
    // Blocks of a group's table that seq holds, and the bytes all its held blocks take.
    int32_t nHeldBlocks(const KvSequence& seq, int group) const;
    size_t heldBytes(const KvSequence& seq) const;
    // Whether seq can go on from seq.nTokens: every window block the next query reads is still
    // held (always true with one group). False after a rollback further back than the window.
    bool resumable(const KvSequence& seq) const;
    // The first position the window of a query at `position` reads (0 with one group).
    int32_t windowStart(int32_t position) const;
    // The cached continuation of seq (at a chain head: its positions fill whole keyed blocks)
    // over whole blocks of tokens (ids of positions seq.nTokens, ...), cut to what the window
    // group can serve. Changes nothing.
    KvPrefixHit cachedPrefix(const KvSequence& seq, std::span<const int32_t> tokens) const;

    // Plans room for positions [0, nTokens) of seq, in every group. When seq ends on a block
    // boundary with all its blocks keyed (an empty seq does), cached blocks continuing its chain
    // over `cacheableTokens` (ids of positions [0, ...) of seq; only whole blocks count) are
    // reused rather than recomputed (cachedPrefix). With a window group, seq's window blocks
    // that no query from its first computed position on reads are released by the commit (and
    // counted as available to it). Changes nothing. Errors: OutOfMemory, InvalidArgument (also
    // when seq is not resumable()).
    Result<KvReservation> plan(const KvSequence& seq, int32_t nTokens,
                               std::span<const int32_t> cacheableTokens = {}) const;
    // Applies a reservation planned for seq against the current state: all of it or, when the
    // state changed since plan() (InvalidArgument) or block memory cannot be had
    // (OutOfMemory), nothing.
    Result<void> commit(KvSequence& seq, const KvReservation& reservation);
    // plan() without reuse, then commit(): what the owner of a sequence's step state calls
    // before a forward pass writes K/V (Scheduler::schedule, Model::forward).
    Result<void> reserve(KvSequence& seq, int32_t nTokens);
    // Whether positions [seq.nTokens, nTokens) can be written and attended as they are: seq's
    // tables have their blocks (and, with a window group, every window block the query at
    // seq.nTokens reads), and the partly filled one written first is seq's alone and unkeyed, so
    // reserve() would add or copy no block (it may still release window blocks the window slid
    // past). What a forward pass checks instead of reserving.
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

    // Persistence (engine/snapshot): a group's block's bytes, bytesPerBlock(group) of them (the
    // group's layers, each layer's K then V, as [layers][K, V][blockSize] rows); empty when the
    // block's memory was never allocated.
    std::vector<uint8_t> blockBytes(BlockId block, int group = 0) const;
    // The bytes saved for block `key`: the full group's (bytesPerBlock(0)) or, with a window
    // group, also the window group's after them (bytesPerBlock() in all). Fills a free (else the
    // least recently used cached) block of each group whose bytes are given and whose pool does
    // not index key yet, and indexes it under key as a cached block, as if computed and released
    // (the window part is skipped when its pool has no block available). False when nothing was
    // copied. Errors: InvalidArgument (size), OutOfMemory (no full-group block).
    Result<bool> importBlock(const BlockKey& key, std::span<const uint8_t> bytes);
    // A sequence's trailing partial block, saved and restored (engine/snapshot): the first
    // nRows rows of every layer's K and V (the full group's layers, then the window group's),
    // packed (tailBytes(nRows) bytes), from seq's block `index` in every group; empty when a
    // block's memory was never allocated. writeRows fills the first nRows rows of seq's block
    // `index` of every group (seq holds them) from the first nRows rows of such packed bytes
    // (saved with nSavedRows >= nRows).
    size_t tailBytes(int32_t nRows) const {
        return static_cast<size_t>(nRows) * 2 * static_cast<size_t>(layout_.nLayers) * rowBytes_;
    }
    std::vector<uint8_t> packedRows(const KvSequence& seq, size_t index, int32_t nRows) const;
    Result<void> writeRows(const KvSequence& seq, size_t index, std::span<const uint8_t> packed, int32_t nSavedRows,
                           int32_t nRows);

    // Pointers for one layer of seq (views of all layers stay valid together), valid until
    // the next commit/reserve/rollback of any sequence.
    PagedKvLayer layerView(const KvSequence& seq, int layer);

private:
    // A chunk's memory starts on a cache line (64 bytes), so that a head's K or V slice in it
    // straddles no more lines than it must; a chunk of 2 MiB or more starts on a 2 MiB boundary
    // and asks for huge pages (Linux), so that streaming a layer's K and V walks few pages.
    using BlockMemory = std::unique_ptr<BackendBuffer>;
    BlockMemory allocateChunk(Backend* memory, size_t bytes) const;  // null memory: the host's
    // Bytes moved out of the block memory (to the host), into it, and within it.
    enum class Move { ToHost, FromHost, Within };
    void move(Move how, Backend* memory, void* dst, const void* src, size_t bytes) const;
    // The memory of part `part` of group g's blocks (null: host memory).
    Backend* memoryOf(int g, size_t part) const {
        return part / 2 < static_cast<size_t>(group(g).deviceSlots) ? memory_ : nullptr;
    }
    // One attention group: its pool, and its blocks' memory in chunks of chunkBlocks consecutive
    // block ids, each allocated on first use and laid out [its layers][K, V][chunkBlocks]
    // [blockSize] rows: one layer's K (or V) of consecutive blocks is one run of memory, so
    // attention over a sequence (whose blocks a fresh pool hands out in increasing order) streams
    // each layer's K and V instead of reading a few KiB of every block and jumping to the next.
    struct Group {
        BlockPool pool;
        int nLayers = 0;
        size_t bytesPerBlock = 0;
        int32_t chunkBlocks = 1;
        std::vector<BlockMemory> chunks = {};  // [ceil(nBlocks / chunkBlocks)]
        // Split placement (placeOn with firstHostLayer): the group's first deviceSlots layers in
        // chunks (the backend's memory), the others in hostChunks, laid out the same way.
        int deviceSlots = 0;
        std::vector<BlockMemory> hostChunks = {};
    };
    // Bytes of one layer's K (or V) in one block.
    size_t partBytes() const { return static_cast<size_t>(layout_.blockSize) * rowBytes_; }
    // Part `part` (2 * layer slot + 0 for K, 1 for V) of a group's block; null when the block's
    // chunk was never allocated.
    uint8_t* partOf(int g, BlockId block, size_t part) const;
    Result<void> ensureBlockMemory(int g, BlockId block);
    Group& group(int g) { return groups_[static_cast<size_t>(g)]; }
    const Group& group(int g) const { return groups_[static_cast<size_t>(g)]; }
    static const std::vector<BlockId>& table(const KvSequence& seq, int g) {
        return g == 0 ? seq.blockTable : seq.windowTable;
    }
    static std::vector<BlockId>& table(KvSequence& seq, int g) { return g == 0 ? seq.blockTable : seq.windowTable; }
    Result<void> ensureMemory(int g, int32_t nTaken, std::span<const BlockId> toShare, int32_t nFromFreed);
    int32_t blocksFor(int32_t nTokens) const { return (nTokens + layout_.blockSize - 1) / layout_.blockSize; }
    KvReservation::Unshare planUnshare(int g, const KvSequence& seq, int32_t nTokens, int32_t nSpare) const;
    void unshare(int g, KvSequence& seq, KvReservation::Unshare how);
    void planWindow(const KvSequence& seq, int32_t nTokens, KvReservation& r) const;
    Result<void> checkAvailable(int g, const KvReservation& r, int32_t nTokens, int32_t nAvailable) const;
    void commitWindow(KvSequence& seq, const KvReservation& r);
    void copyRows(int g, BlockId from, BlockId to, int32_t nRows);
    // The first nRows slots of one layer's K (kPart) or V from src, whose K or V holds srcSlots
    // slots, into dst, which holds dstSlots: rows, or with dimension-major K each element's run
    // of slots (PagedKvLayer::kDimMajor), with head-major V each head's run of rows
    // (PagedKvLayer::vHeadDim). Packed snapshot rows use the cache's own order.
    void copySlots(Move how, Backend* memory, uint8_t* dst, int32_t dstSlots, const uint8_t* src, int32_t srcSlots, int32_t nRows,
                   bool kPart) const;
    Result<bool> importInto(int g, const BlockKey& key, std::span<const uint8_t> bytes);

    KvLayout layout_;
    KvChainRoot root_;
    std::vector<Group> groups_;  // [nGroups()]
    size_t rowBytes_ = 0;  // one token's K (or V) row in one layer
    std::vector<int> layerGroup_, layerSlot_;  // [nLayers]: a layer's group and index within it
    std::vector<f16_t*> kPointers_, vPointers_;  // scratch for layerView
    Backend* memory_ = nullptr;
    int firstHostLayer_ = -1;
};

}  // namespace hearth

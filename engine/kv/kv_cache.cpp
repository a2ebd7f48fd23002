// Paged KV memory over a BlockPool: planning and committing reservations (reuse of cached
// prefix blocks, copy-on-write of a shared partly filled block), publishing full blocks,
// rollback, and the per-layer block pointers the kernels read.
// Block memory: [nLayers][K, V][blockSize] rows of the element type, allocated on first use.
#include "engine/kv/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include "engine/str_cat.h"

namespace hearth {

Result<std::unique_ptr<KvCache>> KvCache::create(const KvLayout& layout, int32_t maxTokens, const KvChainRoot& root) {
    if (layout.nLayers <= 0 || layout.rowStride <= 0 || layout.blockSize <= 0 || layout.blockSize > 1024 ||
        maxTokens <= 0)
        return fail(ErrorCode::InvalidArgument,
                    strCat("invalid KV layout (", describe(layout), ") or size (", maxTokens, " tokens)"));
    if (layout.elementType == KvElementType::Q8_0 && layout.rowStride % kQK != 0)
        return fail(ErrorCode::InvalidArgument,
                    strCat("a q8_0 KV cache needs rows of a multiple of ", kQK, " elements; this model's are ",
                           layout.rowStride));
    const double bytes =
        double(layout.nLayers) * 2 * double(kvRowBytes(layout)) * (double(maxTokens) + layout.blockSize);
    if (bytes > double(std::numeric_limits<std::ptrdiff_t>::max()) / 2)
        return fail(ErrorCode::OutOfMemory, strCat("a KV cache of ", maxTokens, " tokens is too large"));
    return std::make_unique<KvCache>(layout, maxTokens, root);
}

KvCache::KvCache(KvLayout layout, int32_t maxTokens, const KvChainRoot& root)
    : layout_(layout),
      root_(root),
      pool_((std::max(maxTokens, 1) + layout.blockSize - 1) / layout.blockSize, layout.blockSize) {
    rowBytes_ = kvRowBytes(layout_);
    bytesPerBlock_ = static_cast<size_t>(layout_.nLayers) * 2 * static_cast<size_t>(layout_.blockSize) * rowBytes_;
    blocks_.resize(static_cast<size_t>(pool_.nBlocks()));
}

KvCache::~KvCache() = default;

size_t KvCache::bytesPerBlock() const { return bytesPerBlock_; }

KvReservation::Unshare KvCache::planUnshare(const KvSequence& seq, int32_t nTokens, int32_t nSpare) const {
    // Only the block holding the first position to write can hold others' data: blocks past
    // it were allocated fresh for this sequence.
    const auto index = static_cast<size_t>(seq.nTokens / layout_.blockSize);
    if (nTokens <= seq.nTokens || seq.nTokens % layout_.blockSize == 0 || index >= seq.blockTable.size())
        return KvReservation::Unshare::None;
    const BlockId block = seq.blockTable[index];
    if (pool_.refCount(block) > 1) return KvReservation::Unshare::Copy;
    if (!pool_.keyOf(block)) return KvReservation::Unshare::None;
    // Ours alone, but its full content is indexed: keep that cached copy when a block is spare.
    return nSpare > 0 ? KvReservation::Unshare::Copy : KvReservation::Unshare::InPlace;
}

Result<KvReservation> KvCache::plan(const KvSequence& seq, int32_t nTokens,
                                    std::span<const int32_t> cacheableTokens) const {
    if (nTokens < 0) return fail(ErrorCode::InvalidArgument, strCat("cannot reserve ", nTokens, " KV positions"));
    if (nTokens > capacityTokens())
        return fail(ErrorCode::OutOfMemory,
                    strCat("KV cache full: ", nTokens, " tokens need ", blocksFor(nTokens), " blocks; the cache has ",
                           pool_.nBlocks()));
    KvReservation r;
    r.poolGeneration = pool_.generation();
    r.fromTableSize = seq.blockTable.size();
    r.fromNTokens = seq.nTokens;
    const int32_t bs = layout_.blockSize;
    const auto nHave = static_cast<int32_t>(seq.blockTable.size());
    const bool atChainHead = seq.nTokens == nHave * bs && std::ssize(seq.blockKeys) == nHave;
    const auto nCacheable = std::min<int64_t>(std::ssize(cacheableTokens), nTokens);
    if (atChainHead && nCacheable > seq.nTokens) {
        const BlockKey& parent = seq.blockKeys.empty() ? root_.key : seq.blockKeys.back();
        CachedPrefix hit = pool_.longestCachedPrefix(
            parent,
            cacheableTokens.subspan(static_cast<size_t>(seq.nTokens), static_cast<size_t>(nCacheable - seq.nTokens)));
        r.reuse = std::move(hit.blocks);
        r.reuseKeys = std::move(hit.keys);
        r.nCachedTokens = static_cast<int32_t>(r.reuse.size()) * bs;
    }
    r.nNewBlocks = std::max(0, blocksFor(nTokens) - nHave - static_cast<int32_t>(r.reuse.size()));
    int32_t nAvailable = pool_.nAvailable();
    for (BlockId b : r.reuse)
        if (pool_.refCount(b) == 0) --nAvailable;  // leaves the LRU: no longer evictable
    if (r.reuse.empty()) r.unshare = planUnshare(seq, nTokens, nAvailable - r.nNewBlocks);
    const int32_t nNeeded = r.nNewBlocks + (r.unshare == KvReservation::Unshare::Copy ? 1 : 0);
    if (nNeeded > nAvailable)
        return fail(
            ErrorCode::OutOfMemory,
            strCat("KV cache full: ", nTokens, " tokens need ", nNeeded, " more blocks, ", nAvailable, " available"));
    return r;
}

Result<void> KvCache::ensureMemory(const KvSequence& seq, const KvReservation& r) {
    const int32_t nTaken = r.nNewBlocks + (r.unshare == KvReservation::Unshare::Copy ? 1 : 0);
    for (BlockId b : pool_.peekAllocations(nTaken, r.reuse)) {
        auto& slot = blocks_[static_cast<size_t>(b)];
        // Not value-initialised: every position is written before attention reads it.
        if (!slot) slot.reset(new (std::nothrow) uint8_t[bytesPerBlock_]);
        if (!slot)
            return fail(ErrorCode::OutOfMemory,
                        strCat("cannot allocate a KV block (", bytesPerBlock(), " bytes) for ",
                               seq.nTokens + r.nCachedTokens, "+ tokens"));
    }
    return {};
}

Result<void> KvCache::commit(KvSequence& seq, const KvReservation& r) {
    if (r.poolGeneration != pool_.generation() || r.fromTableSize != seq.blockTable.size() ||
        r.fromNTokens != seq.nTokens)
        return fail(ErrorCode::InvalidArgument,
                    "stale KV reservation: the cache or the sequence changed since it was planned");
    if (auto m = ensureMemory(seq, r); !m) return m;  // before any change
    for (size_t i = 0; i < r.reuse.size(); ++i) {
        pool_.share(r.reuse[i]);
        seq.blockTable.push_back(r.reuse[i]);
        seq.blockKeys.push_back(r.reuseKeys[i]);
    }
    seq.nTokens += r.nCachedTokens;
    if (r.unshare != KvReservation::Unshare::None) {
        BlockId& slot = seq.blockTable[static_cast<size_t>(seq.nTokens / layout_.blockSize)];
        if (r.unshare == KvReservation::Unshare::Copy) {
            const BlockId copy = pool_.allocate();
            copyRows(slot, copy, seq.nTokens % layout_.blockSize);
            pool_.release(slot);
            slot = copy;
        } else {
            pool_.unpublish(slot);
        }
    }
    for (int32_t i = 0; i < r.nNewBlocks; ++i) seq.blockTable.push_back(pool_.allocate());
    return {};
}

Result<void> KvCache::reserve(KvSequence& seq, int32_t nTokens) {
    auto r = plan(seq, nTokens);
    if (!r) return std::unexpected(r.error());
    return commit(seq, *r);
}

bool KvCache::reserved(const KvSequence& seq, int32_t nTokens) const {
    return std::ssize(seq.blockTable) >= blocksFor(nTokens) &&
        planUnshare(seq, nTokens, 0) == KvReservation::Unshare::None;
}

void KvCache::publish(KvSequence& seq, std::span<const int32_t> tokens) {
    const auto bs = static_cast<size_t>(layout_.blockSize);
    const size_t nFull = std::min(static_cast<size_t>(seq.nTokens), tokens.size()) / bs;
    while (seq.blockKeys.size() < nFull) {
        const size_t i = seq.blockKeys.size();
        const BlockKey& parent = i == 0 ? root_.key : seq.blockKeys.back();
        const BlockKey key = chainKey(parent, tokens.subspan(i * bs, bs));
        // An unkeyed block whose key already names another block stays private (publish says no).
        if (!pool_.keyOf(seq.blockTable[i])) pool_.publish(seq.blockTable[i], key);
        seq.blockKeys.push_back(key);
    }
}

void KvCache::rollback(KvSequence& seq, int32_t nTokens) {
    nTokens = std::clamp(nTokens, 0, seq.nTokens);
    const auto keep = static_cast<size_t>(blocksFor(nTokens));
    while (seq.blockTable.size() > keep) {
        pool_.release(seq.blockTable.back());
        seq.blockTable.pop_back();
    }
    const auto nFull = static_cast<size_t>(nTokens / layout_.blockSize);
    if (seq.blockKeys.size() > nFull) seq.blockKeys.resize(nFull);
    seq.nTokens = nTokens;
}

KvSequence KvCache::fork(const KvSequence& seq) {
    for (BlockId b : seq.blockTable) pool_.share(b);
    return seq;
}

std::span<const uint8_t> KvCache::blockBytes(BlockId block) const {
    const auto& slot = blocks_[static_cast<size_t>(block)];
    return slot ? std::span<const uint8_t>(slot.get(), bytesPerBlock_) : std::span<const uint8_t>();
}

Result<bool> KvCache::importBlock(const BlockKey& key, std::span<const uint8_t> bytes) {
    if (bytes.size() != bytesPerBlock_)
        return fail(ErrorCode::InvalidArgument,
                    strCat("a saved KV block has ", bytes.size(), " bytes; this cache's have ", bytesPerBlock_));
    if (pool_.find(key) >= 0) return false;
    if (pool_.nAvailable() == 0) return fail(ErrorCode::OutOfMemory, "no KV block is available to import into");
    auto& slot = blocks_[static_cast<size_t>(pool_.peekAllocations(1, {}).front())];
    if (!slot) slot.reset(new (std::nothrow) uint8_t[bytesPerBlock_]);
    if (!slot) return fail(ErrorCode::OutOfMemory, strCat("cannot allocate a KV block (", bytesPerBlock_, " bytes)"));
    const BlockId b = pool_.allocate();
    std::memcpy(blockData(b), bytes.data(), bytes.size());
    pool_.publish(b, key);
    pool_.release(b);  // keyed, unreferenced: a cached block the next plan() can reuse
    return true;
}

std::vector<uint8_t> KvCache::packedRows(BlockId block, int32_t nRows) const {
    const auto& slot = blocks_[static_cast<size_t>(block)];
    if (!slot || nRows <= 0 || nRows > layout_.blockSize) return {};
    const size_t half = static_cast<size_t>(layout_.blockSize) * rowBytes_;
    const size_t bytes = static_cast<size_t>(nRows) * rowBytes_;
    std::vector<uint8_t> out(tailBytes(nRows));
    for (size_t part = 0; part < 2 * static_cast<size_t>(layout_.nLayers); ++part)  // K and V of each layer
        std::memcpy(out.data() + part * bytes, slot.get() + part * half, bytes);
    return out;
}

Result<void> KvCache::writeRows(BlockId block, std::span<const uint8_t> packed, int32_t nSavedRows, int32_t nRows) {
    if (nRows <= 0 || nRows > nSavedRows || nSavedRows > layout_.blockSize || packed.size() != tailBytes(nSavedRows))
        return fail(ErrorCode::InvalidArgument,
                    strCat("a saved partial KV block has ", packed.size(), " bytes for ", nSavedRows,
                           " rows; this cache's rows need ", tailBytes(nSavedRows)));
    const size_t half = static_cast<size_t>(layout_.blockSize) * rowBytes_;
    const size_t saved = static_cast<size_t>(nSavedRows) * rowBytes_;
    for (size_t part = 0; part < 2 * static_cast<size_t>(layout_.nLayers); ++part)
        std::memcpy(blockData(block) + part * half, packed.data() + part * saved,
                    static_cast<size_t>(nRows) * rowBytes_);
    return {};
}

void KvCache::copyRows(BlockId from, BlockId to, int32_t nRows) {
    const size_t half = static_cast<size_t>(layout_.blockSize) * rowBytes_;
    const size_t bytes = static_cast<size_t>(nRows) * rowBytes_;
    for (size_t part = 0; part < 2 * static_cast<size_t>(layout_.nLayers); ++part)  // K and V of each layer
        std::memcpy(blockData(to) + part * half, blockData(from) + part * half, bytes);
}

PagedKvLayer KvCache::layerView(const KvSequence& seq, int layer) {
    const size_t n = seq.blockTable.size();
    kPointers_.resize(n * static_cast<size_t>(layout_.nLayers));
    vPointers_.resize(n * static_cast<size_t>(layout_.nLayers));
    const size_t half = static_cast<size_t>(layout_.blockSize) * rowBytes_;
    // Pointers of layer l live at [l * n, (l + 1) * n) so that views of all layers stay valid together.
    f16_t** kOut = kPointers_.data() + static_cast<size_t>(layer) * n;
    f16_t** vOut = vPointers_.data() + static_cast<size_t>(layer) * n;
    for (size_t b = 0; b < n; ++b) {
        uint8_t* base = blockData(seq.blockTable[b]) + static_cast<size_t>(layer) * 2 * half;
        kOut[b] = reinterpret_cast<f16_t*>(base);  // rows of 2-byte elements or 34-byte Q8_0 blocks
        vOut[b] = reinterpret_cast<f16_t*>(base + half);
    }
    const DType type = layout_.elementType == KvElementType::Q8_0 ? DType::Q8_0 : DType::F16;
    return PagedKvLayer{kOut, vOut, layout_.blockSize, layout_.rowStride, type};
}

}  // namespace hearth

// Paged KV memory over one BlockPool per attention group: planning and committing reservations
// (reuse of cached prefix blocks, copy-on-write of a shared partly filled block, release of
// window blocks the window slid past), publishing full blocks, rollback, and the per-layer block
// pointers the kernels read. A group's block memory: chunks of consecutive blocks, each
// [its layers][K, V][chunk's blocks][blockSize] rows of the element type, allocated on first use.
#include "engine/kv/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "engine/str_cat.h"

namespace hearth {

Result<std::unique_ptr<KvCache>> KvCache::create(const KvLayout& layout, int32_t maxTokens, const KvChainRoot& root) {
    if (layout.nLayers <= 0 || layout.rowStride <= 0 || layout.blockSize <= 0 || layout.blockSize > 1024 ||
        maxTokens <= 0 || layout.window < 0 ||
        (!layout.windowLayers.empty() && std::ssize(layout.windowLayers) != layout.nLayers))
        return fail(ErrorCode::InvalidArgument,
                    strCat("invalid KV layout (", describe(layout), ") or size (", maxTokens, " tokens)"));
    if (layout.kDimMajor && (layout.elementType != KvElementType::F16 || layout.blockSize % 8 != 0))
        return fail(ErrorCode::InvalidArgument, "dimension-major K needs an F16 cache and blocks of a multiple of 8");
    if (layout.vHeadDim != 0 &&
        (layout.elementType != KvElementType::F16 || layout.vHeadDim < 0 || layout.rowStride % layout.vHeadDim != 0))
        return fail(ErrorCode::InvalidArgument, "head-major V needs an F16 cache and rows of whole heads");
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
    : layout_(std::move(layout)), root_(root) {
    rowBytes_ = kvRowBytes(layout_);
    const bool grouped = hasWindowGroup(layout_);
    // Both pools can hand out a block for every position of the cache: short sequences need as
    // many window blocks as full ones. Memory is taken on first use, and a released window block
    // is reused first (the free list is a stack), so the window pool's memory follows its peak use.
    const int32_t nBlocks = (std::max(maxTokens, 1) + layout_.blockSize - 1) / layout_.blockSize;
    for (int g = 0; g < (grouped ? 2 : 1); ++g) {
        Group& grp = groups_.emplace_back(Group{BlockPool(nBlocks, layout_.blockSize)});
        grp.nLayers = nGroupLayers(layout_, g);
        grp.bytesPerBlock = static_cast<size_t>(grp.nLayers) * 2 * static_cast<size_t>(layout_.blockSize) * rowBytes_;
        // Runs of at least 64 KiB of one layer's K (or V), of at most 64 blocks and no more than the cache has.
        while (grp.chunkBlocks < 64 && static_cast<size_t>(grp.chunkBlocks) * partBytes() < (size_t{64} << 10) &&
               grp.chunkBlocks < nBlocks)
            grp.chunkBlocks *= 2;
        grp.chunks.resize(static_cast<size_t>((nBlocks + grp.chunkBlocks - 1) / grp.chunkBlocks));
        grp.deviceSlots = grp.nLayers;
    }
    int nSeen[2] = {0, 0};
    for (int l = 0; l < layout_.nLayers; ++l) {
        const int g = grouped && layout_.windowLayers[static_cast<size_t>(l)] ? 1 : 0;
        layerGroup_.push_back(g);
        layerSlot_.push_back(nSeen[g]++);
    }
}

KvCache::~KvCache() = default;

void KvCache::placeOn(Backend* backend, int firstHostLayer) {
    memory_ = backend;
    firstHostLayer_ = backend != nullptr && firstHostLayer >= 0 && firstHostLayer < layout_.nLayers ? firstHostLayer : -1;
    for (Group& grp : groups_) {
        grp.deviceSlots = grp.nLayers;
        grp.hostChunks.clear();
    }
    if (firstHostLayer_ < 0) return;
    for (int l = 0; l < layout_.nLayers; ++l)  // a group's slots follow the layers' order
        if (l >= firstHostLayer_) {
            Group& grp = group(layerGroup_[static_cast<size_t>(l)]);
            grp.deviceSlots = std::min(grp.deviceSlots, layerSlot_[static_cast<size_t>(l)]);
        }
    for (Group& grp : groups_)
        if (grp.deviceSlots < grp.nLayers) grp.hostChunks.resize(grp.chunks.size());
}

namespace {

class HostChunk final : public BackendBuffer {
public:
    HostChunk(void* p, size_t bytes, size_t alignment) : BackendBuffer(p, bytes), alignment_(alignment) {}
    ~HostChunk() override { ::operator delete[](data(), std::align_val_t{alignment_}); }

private:
    size_t alignment_;
};

}  // namespace

KvCache::BlockMemory KvCache::allocateChunk(Backend* memory, size_t bytes) const {
    if (memory != nullptr) return memory->allocate(bytes);
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t alignment = bytes >= kHuge ? kHuge : 64;
    // Whole huge pages: advising only the chunk's whole 2 MiB pages left a third of SmolLM2's
    // 5.9 MB chunks on 4 KiB pages (smaps), whose K/V runs then missed the TLB. The cost is the
    // unused end of a chunk's last huge page once it is touched (SmolLM2: 0.1 MB a chunk).
    const size_t size = alignment == kHuge ? (bytes + kHuge - 1) / kHuge * kHuge : bytes;
    auto* p = static_cast<uint8_t*>(::operator new[](size, std::align_val_t{alignment}, std::nothrow));
    if (p == nullptr) return nullptr;
#if defined(__linux__)
    if (alignment == kHuge) madvise(p, size, MADV_HUGEPAGE);  // advice: failure is harmless
#endif
    return std::make_unique<HostChunk>(p, bytes, alignment);
}

void KvCache::move(Move how, Backend* memory, void* dst, const void* src, size_t bytes) const {
    if (memory == nullptr) return (void)std::memmove(dst, src, bytes);
    switch (how) {
    case Move::ToHost: return memory->download(dst, src, bytes);
    case Move::FromHost: return memory->upload(dst, src, bytes);
    case Move::Within: return memory->copy(dst, src, bytes);
    }
}

size_t KvCache::bytesPerBlock() const {
    size_t n = 0;
    for (const Group& g : groups_) n += g.bytesPerBlock;
    return n;
}

int32_t KvCache::nHeldBlocks(const KvSequence& seq, int g) const {
    const std::vector<BlockId>& t = table(seq, g);
    return static_cast<int32_t>(std::count_if(t.begin(), t.end(), [](BlockId b) { return b != kNoBlock; }));
}

size_t KvCache::heldBytes(const KvSequence& seq) const {
    size_t n = 0;
    for (int g = 0; g < nGroups(); ++g) n += static_cast<size_t>(nHeldBlocks(seq, g)) * bytesPerBlock(g);
    return n;
}

int32_t KvCache::windowStart(int32_t position) const {
    // llama.cpp's standard sliding window (AttentionShape::slidingWindow): a query at p reads (p - window, p].
    return nGroups() > 1 ? std::max(0, position + 1 - layout_.window) : 0;
}

bool KvCache::resumable(const KvSequence& seq) const {
    if (nGroups() == 1) return true;
    const auto first = static_cast<size_t>(windowStart(seq.nTokens) / layout_.blockSize);
    for (size_t i = first; i < seq.windowTable.size(); ++i)
        if (seq.windowTable[i] == kNoBlock) return false;
    return true;
}

KvPrefixHit KvCache::cachedPrefix(const KvSequence& seq, std::span<const int32_t> tokens) const {
    KvPrefixHit hit;
    const BlockKey& parent = seq.blockKeys.empty() ? root_.key : seq.blockKeys.back();
    hit.full = pool(0).longestCachedPrefix(parent, tokens);
    if (nGroups() == 1 || hit.full.blocks.empty()) return hit;
    // The longest run whose end a query can go on from: every window block that query reads is
    // cached (those of seq's own positions it holds: seq is resumable).
    const size_t have = seq.blockTable.size(), bs = static_cast<size_t>(layout_.blockSize);
    std::vector<BlockId> window(hit.full.blocks.size());
    size_t lastMissing = 0;  // 1 + the run index of the last window block not cached (0: none yet)
    size_t best = 0;
    for (size_t m = 1; m <= hit.full.blocks.size(); ++m) {
        window[m - 1] = pool(1).find(hit.full.keys[m - 1]);
        if (window[m - 1] < 0) lastMissing = m;
        const auto first = static_cast<size_t>(windowStart(static_cast<int32_t>((have + m) * bs))) / bs;
        if (lastMissing == 0 || have + lastMissing - 1 < first) best = m;
    }
    hit.full.blocks.resize(best);
    hit.full.keys.resize(best);
    const size_t first = best == 0
        ? have
        : std::max(have, static_cast<size_t>(windowStart(static_cast<int32_t>((have + best) * bs))) / bs);
    hit.windowFirst = first;
    hit.window.assign(window.begin() + static_cast<std::ptrdiff_t>(first - have),
                      window.begin() + static_cast<std::ptrdiff_t>(best));
    return hit;
}

KvReservation::Unshare KvCache::planUnshare(int g, const KvSequence& seq, int32_t nTokens, int32_t nSpare) const {
    // Only the block holding the first position to write can hold others' data: blocks past
    // it were allocated fresh for this sequence.
    const std::vector<BlockId>& t = table(seq, g);
    const auto index = static_cast<size_t>(seq.nTokens / layout_.blockSize);
    if (nTokens <= seq.nTokens || seq.nTokens % layout_.blockSize == 0 || index >= t.size() || t[index] == kNoBlock)
        return KvReservation::Unshare::None;
    const BlockId block = t[index];
    if (pool(g).refCount(block) > 1) return KvReservation::Unshare::Copy;
    if (!pool(g).keyOf(block)) return KvReservation::Unshare::None;
    // Ours alone, but its full content is indexed: keep that cached copy when a block is spare.
    return nSpare > 0 ? KvReservation::Unshare::Copy : KvReservation::Unshare::InPlace;
}

Result<void> KvCache::checkAvailable(int g, const KvReservation& r, int32_t nTokens, int32_t nAvailable) const {
    const KvReservation::Unshare how = g == 0 ? r.unshare : r.windowUnshare;
    const int32_t nNeeded = r.nNewBlocks + (how == KvReservation::Unshare::Copy ? 1 : 0);
    if (nNeeded <= nAvailable) return {};
    return fail(ErrorCode::OutOfMemory,
                strCat("KV cache full: ", nTokens, " tokens need ", nNeeded, " more blocks",
                       g == 0 ? "" : " of the window group", ", ", nAvailable, " available"));
}

// The window group's part of a reservation whose full-group part (reuse, new blocks) is planned.
void KvCache::planWindow(const KvSequence& seq, int32_t nTokens, KvReservation& r) const {
    const BlockPool& wp = pool(1);
    r.windowPoolGeneration = wp.generation();
    const size_t have = seq.windowTable.size();
    // The first query computed is at seq.nTokens + r.nCachedTokens: what lies before its window
    // goes, kept from the window of its block's first position on (a block more only when the
    // window is not a whole number of blocks), so that the sequence's last full block boundary
    // stays a point it can be restored or rolled back to (engine/snapshot: full blocks + tail).
    const int32_t bs = layout_.blockSize, first = seq.nTokens + r.nCachedTokens;
    r.windowDropEnd = std::min(have, static_cast<size_t>(windowStart(first / bs * bs) / bs));
    for (size_t i = 0; i < r.windowDropEnd; ++i)
        if (seq.windowTable[i] != kNoBlock && wp.refCount(seq.windowTable[i]) == 1) ++r.nWindowFreed;
    int32_t nAvailable = wp.nAvailable() + r.nWindowFreed;
    for (BlockId b : r.windowReuse)
        if (wp.refCount(b) == 0) --nAvailable;
    if (r.reuse.empty()) r.windowUnshare = planUnshare(1, seq, nTokens, nAvailable - r.nNewBlocks);
}

Result<KvReservation> KvCache::plan(const KvSequence& seq, int32_t nTokens,
                                    std::span<const int32_t> cacheableTokens) const {
    if (nTokens < 0) return fail(ErrorCode::InvalidArgument, strCat("cannot reserve ", nTokens, " KV positions"));
    if (nTokens > capacityTokens())
        return fail(ErrorCode::OutOfMemory,
                    strCat("KV cache full: ", nTokens, " tokens need ", blocksFor(nTokens), " blocks; the cache has ",
                           pool().nBlocks()));
    if (!resumable(seq))
        return fail(ErrorCode::InvalidArgument,
                    strCat("the sliding window's KV blocks before position ", seq.nTokens,
                           " were released: the sequence cannot go on from there"));
    KvReservation r;
    r.poolGeneration = pool(0).generation();
    r.fromTableSize = seq.blockTable.size();
    r.fromNTokens = seq.nTokens;
    const int32_t bs = layout_.blockSize;
    const auto nHave = static_cast<int32_t>(seq.blockTable.size());
    const bool atChainHead = seq.nTokens == nHave * bs && std::ssize(seq.blockKeys) == nHave;
    const auto nCacheable = std::min<int64_t>(std::ssize(cacheableTokens), nTokens);
    if (atChainHead && nCacheable > seq.nTokens) {
        KvPrefixHit hit = cachedPrefix(
            seq,
            cacheableTokens.subspan(static_cast<size_t>(seq.nTokens), static_cast<size_t>(nCacheable - seq.nTokens)));
        r.reuse = std::move(hit.full.blocks);
        r.reuseKeys = std::move(hit.full.keys);
        r.nCachedTokens = static_cast<int32_t>(r.reuse.size()) * bs;
        r.windowReuse = std::move(hit.window);
        r.windowReuseFirst = hit.windowFirst;
    }
    r.nNewBlocks = std::max(0, blocksFor(nTokens) - nHave - static_cast<int32_t>(r.reuse.size()));
    int32_t nAvailable = pool(0).nAvailable();
    for (BlockId b : r.reuse)
        if (pool(0).refCount(b) == 0) --nAvailable;  // leaves the LRU: no longer evictable
    if (r.reuse.empty()) r.unshare = planUnshare(0, seq, nTokens, nAvailable - r.nNewBlocks);
    if (auto a = checkAvailable(0, r, nTokens, nAvailable); !a) return std::unexpected(a.error());
    if (nGroups() == 1) return r;
    planWindow(seq, nTokens, r);
    int32_t nWindowAvailable = pool(1).nAvailable() + r.nWindowFreed;
    for (BlockId b : r.windowReuse)
        if (pool(1).refCount(b) == 0) --nWindowAvailable;
    if (auto a = checkAvailable(1, r, nTokens, nWindowAvailable); !a) return std::unexpected(a.error());
    return r;
}

// nFromFreed of the nTaken blocks come from blocks the commit frees first (they have memory).
Result<void> KvCache::ensureMemory(int g, int32_t nTaken, std::span<const BlockId> toShare, int32_t nFromFreed) {
    Group& grp = group(g);
    for (BlockId b : grp.pool.peekAllocations(std::max(0, nTaken - nFromFreed), toShare))
        if (auto m = ensureBlockMemory(g, b); !m) return m;
    return {};
}

Result<void> KvCache::ensureBlockMemory(int g, BlockId block) {
    Group& grp = group(g);
    const auto index = static_cast<size_t>(block / grp.chunkBlocks);
    // Not value-initialised: every position is written before attention reads it.
    const size_t perSlot = static_cast<size_t>(grp.chunkBlocks) * 2 * partBytes();
    const size_t deviceBytes = perSlot * static_cast<size_t>(grp.deviceSlots);
    auto& chunk = grp.chunks[index];
    if (!chunk && deviceBytes > 0) chunk = allocateChunk(memory_, deviceBytes);
    if (!chunk && deviceBytes > 0)
        return fail(ErrorCode::OutOfMemory, strCat("cannot allocate KV memory (", deviceBytes, " bytes)"));
    if (grp.hostChunks.empty()) return {};
    const size_t hostBytes = perSlot * static_cast<size_t>(grp.nLayers - grp.deviceSlots);
    auto& host = grp.hostChunks[index];
    if (!host) host = allocateChunk(nullptr, hostBytes);
    if (!host) return fail(ErrorCode::OutOfMemory, strCat("cannot allocate KV memory (", hostBytes, " bytes)"));
    return {};
}

uint8_t* KvCache::partOf(int g, BlockId block, size_t part) const {
    const Group& grp = group(g);
    const auto device = static_cast<size_t>(2 * grp.deviceSlots);
    const bool onHost = part >= device;
    const BlockMemory& memory = (onHost ? grp.hostChunks : grp.chunks)[static_cast<size_t>(block / grp.chunkBlocks)];
    if (!memory) return nullptr;
    auto* chunk = memory->as<uint8_t>();
    const size_t index =
        (onHost ? part - device : part) * static_cast<size_t>(grp.chunkBlocks) + static_cast<size_t>(block % grp.chunkBlocks);
    return chunk + index * partBytes();
}

void KvCache::unshare(int g, KvSequence& seq, KvReservation::Unshare how) {
    if (how == KvReservation::Unshare::None) return;
    BlockPool& p = group(g).pool;
    BlockId& slot = table(seq, g)[static_cast<size_t>(seq.nTokens / layout_.blockSize)];
    if (how == KvReservation::Unshare::Copy) {
        const BlockId copy = p.allocate();
        copyRows(g, slot, copy, seq.nTokens % layout_.blockSize);
        p.release(slot);
        slot = copy;
    } else {
        p.unpublish(slot);
    }
}

// After the full group's part (seq.nTokens counts the reused positions already).
void KvCache::commitWindow(KvSequence& seq, const KvReservation& r) {
    BlockPool& p = group(1).pool;
    for (size_t i = 0; i < r.windowDropEnd; ++i) {
        BlockId& b = seq.windowTable[i];
        if (b == kNoBlock) continue;
        // Freed, not cached, when no one else holds it: its memory goes to the next block the
        // window needs (see the header on prefix sharing).
        if (p.refCount(b) == 1) p.unpublish(b);
        p.release(b);
        b = kNoBlock;
    }
    for (size_t i = r.fromTableSize, j = 0; i < r.fromTableSize + r.reuse.size(); ++i) {
        if (i < r.windowReuseFirst) {
            seq.windowTable.push_back(kNoBlock);
            continue;
        }
        p.share(r.windowReuse[j]);
        seq.windowTable.push_back(r.windowReuse[j++]);
    }
    unshare(1, seq, r.windowUnshare);
    for (int32_t i = 0; i < r.nNewBlocks; ++i) seq.windowTable.push_back(p.allocate());
}

Result<void> KvCache::commit(KvSequence& seq, const KvReservation& r) {
    if (r.poolGeneration != pool(0).generation() || r.fromTableSize != seq.blockTable.size() ||
        r.fromNTokens != seq.nTokens ||
        (nGroups() > 1 &&
         (r.windowPoolGeneration != pool(1).generation() || seq.windowTable.size() != seq.blockTable.size())))
        return fail(ErrorCode::InvalidArgument,
                    "stale KV reservation: the cache or the sequence changed since it was planned");
    const auto copies = [](KvReservation::Unshare u) { return u == KvReservation::Unshare::Copy ? 1 : 0; };
    if (auto m = ensureMemory(0, r.nNewBlocks + copies(r.unshare), r.reuse, 0); !m) return m;  // before any change
    if (nGroups() > 1)
        if (auto m = ensureMemory(1, r.nNewBlocks + copies(r.windowUnshare), r.windowReuse, r.nWindowFreed); !m)
            return m;
    BlockPool& p = group(0).pool;
    for (size_t i = 0; i < r.reuse.size(); ++i) {
        p.share(r.reuse[i]);
        seq.blockTable.push_back(r.reuse[i]);
        seq.blockKeys.push_back(r.reuseKeys[i]);
    }
    seq.nTokens += r.nCachedTokens;
    unshare(0, seq, r.unshare);
    for (int32_t i = 0; i < r.nNewBlocks; ++i) seq.blockTable.push_back(p.allocate());
    if (nGroups() > 1) commitWindow(seq, r);
    return {};
}

Result<void> KvCache::reserve(KvSequence& seq, int32_t nTokens) {
    auto r = plan(seq, nTokens);
    if (!r) return std::unexpected(r.error());
    return commit(seq, *r);
}

bool KvCache::reserved(const KvSequence& seq, int32_t nTokens) const {
    const int32_t nBlocks = blocksFor(nTokens);
    if (std::ssize(seq.blockTable) < nBlocks || planUnshare(0, seq, nTokens, 0) != KvReservation::Unshare::None)
        return false;
    if (nGroups() == 1) return true;
    if (seq.windowTable.size() != seq.blockTable.size() ||
        planUnshare(1, seq, nTokens, 0) != KvReservation::Unshare::None)
        return false;
    for (auto i = windowStart(seq.nTokens) / layout_.blockSize; i < nBlocks; ++i)
        if (seq.windowTable[static_cast<size_t>(i)] == kNoBlock) return false;
    return true;
}

void KvCache::publish(KvSequence& seq, std::span<const int32_t> tokens) {
    const auto bs = static_cast<size_t>(layout_.blockSize);
    const size_t nFull = std::min(static_cast<size_t>(seq.nTokens), tokens.size()) / bs;
    while (seq.blockKeys.size() < nFull) {
        const size_t i = seq.blockKeys.size();
        const BlockKey& parent = i == 0 ? root_.key : seq.blockKeys.back();
        const BlockKey key = chainKey(parent, tokens.subspan(i * bs, bs));
        // An unkeyed block whose key already names another block stays private (publish says no).
        for (int g = 0; g < nGroups(); ++g) {
            const BlockId b = table(seq, g)[i];
            if (b != kNoBlock && !pool(g).keyOf(b)) group(g).pool.publish(b, key);
        }
        seq.blockKeys.push_back(key);
    }
}

void KvCache::rollback(KvSequence& seq, int32_t nTokens) {
    nTokens = std::clamp(nTokens, 0, seq.nTokens);
    const auto keep = static_cast<size_t>(blocksFor(nTokens));
    for (int g = 0; g < nGroups(); ++g) {
        std::vector<BlockId>& t = table(seq, g);
        while (t.size() > keep) {
            if (t.back() != kNoBlock) group(g).pool.release(t.back());
            t.pop_back();
        }
    }
    const auto nFull = static_cast<size_t>(nTokens / layout_.blockSize);
    if (seq.blockKeys.size() > nFull) seq.blockKeys.resize(nFull);
    seq.nTokens = nTokens;
}

KvSequence KvCache::fork(const KvSequence& seq) {
    for (int g = 0; g < nGroups(); ++g)
        for (BlockId b : table(seq, g))
            if (b != kNoBlock) group(g).pool.share(b);
    return seq;
}

std::vector<uint8_t> KvCache::blockBytes(BlockId block, int g) const {
    if (!partOf(g, block, 0)) return {};
    std::vector<uint8_t> out(group(g).bytesPerBlock);
    for (size_t part = 0; part < 2 * static_cast<size_t>(group(g).nLayers); ++part)
        move(Move::ToHost, memoryOf(g, part), out.data() + part * partBytes(), partOf(g, block, part), partBytes());
    return out;
}

Result<bool> KvCache::importInto(int g, const BlockKey& key, std::span<const uint8_t> bytes) {
    Group& grp = group(g);
    if (grp.pool.find(key) >= 0) return false;
    if (grp.pool.nAvailable() == 0) return fail(ErrorCode::OutOfMemory, "no KV block is available to import into");
    if (auto m = ensureBlockMemory(g, grp.pool.peekAllocations(1, {}).front()); !m) return std::unexpected(m.error());
    const BlockId b = grp.pool.allocate();
    for (size_t part = 0; part < 2 * static_cast<size_t>(grp.nLayers); ++part)
        move(Move::FromHost, memoryOf(g, part), partOf(g, b, part), bytes.data() + part * partBytes(), partBytes());
    grp.pool.publish(b, key);
    grp.pool.release(b);  // keyed, unreferenced: a cached block the next plan() can reuse
    return true;
}

Result<bool> KvCache::importBlock(const BlockKey& key, std::span<const uint8_t> bytes) {
    const size_t fullBytes = bytesPerBlock(0);
    if (bytes.size() != fullBytes && bytes.size() != bytesPerBlock())
        return fail(ErrorCode::InvalidArgument,
                    strCat("a saved KV block has ", bytes.size(), " bytes; this cache's have ", bytesPerBlock(),
                           nGroups() > 1 ? strCat(" (or ", fullBytes, " without the window group's)") : std::string()));
    auto full = importInto(0, key, bytes.first(fullBytes));
    if (!full || nGroups() == 1 || bytes.size() == fullBytes) return full;
    // The window part is an extra: without a block for it the prefix is shorter, not wrong.
    auto window = importInto(1, key, bytes.subspan(fullBytes));
    return *full || (window && *window);
}

void KvCache::copySlots(Move how, Backend* memory, uint8_t* dst, int32_t dstSlots, const uint8_t* src, int32_t srcSlots,
                        int32_t nRows, bool kPart) const {
    // Dimension-major K keeps each row element's run of slots, head-major V each head's run of
    // rows: runs of `width` elements a slot, rowStride / width of them.
    const int width = kPart ? (layout_.kDimMajor ? 1 : 0) : layout_.vHeadDim;
    if (width == 0) return move(how, memory, dst, src, static_cast<size_t>(nRows) * rowBytes_);
    const size_t runBytes = static_cast<size_t>(width) * sizeof(f16_t);
    for (int r = 0; r < layout_.rowStride / width; ++r)
        move(how, memory, dst + static_cast<size_t>(r) * static_cast<size_t>(dstSlots) * runBytes,
             src + static_cast<size_t>(r) * static_cast<size_t>(srcSlots) * runBytes,
             static_cast<size_t>(nRows) * runBytes);
}

std::vector<uint8_t> KvCache::packedRows(const KvSequence& seq, size_t index, int32_t nRows) const {
    if (nRows <= 0 || nRows > layout_.blockSize) return {};
    const size_t bytes = static_cast<size_t>(nRows) * rowBytes_;
    std::vector<uint8_t> out(tailBytes(nRows));
    uint8_t* to = out.data();
    for (int g = 0; g < nGroups(); ++g) {
        const std::vector<BlockId>& t = table(seq, g);
        if (index >= t.size() || t[index] == kNoBlock || !partOf(g, t[index], 0)) return {};
        for (size_t part = 0; part < 2 * static_cast<size_t>(group(g).nLayers);
             ++part, to += bytes)  // K and V of each layer
            copySlots(Move::ToHost, memoryOf(g, part), to, nRows, partOf(g, t[index], part), layout_.blockSize, nRows,
                      part % 2 == 0);
    }
    return out;
}

Result<void> KvCache::writeRows(const KvSequence& seq, size_t index, std::span<const uint8_t> packed,
                                int32_t nSavedRows, int32_t nRows) {
    if (nRows <= 0 || nRows > nSavedRows || nSavedRows > layout_.blockSize || packed.size() != tailBytes(nSavedRows))
        return fail(ErrorCode::InvalidArgument,
                    strCat("a saved partial KV block has ", packed.size(), " bytes for ", nSavedRows,
                           " rows; this cache's rows need ", tailBytes(nSavedRows)));
    for (int g = 0; g < nGroups(); ++g) {
        const std::vector<BlockId>& t = table(seq, g);
        if (index >= t.size() || t[index] == kNoBlock)
            return fail(ErrorCode::InvalidArgument, "the sequence holds no block to write the saved rows into");
    }
    const size_t saved = static_cast<size_t>(nSavedRows) * rowBytes_;
    const uint8_t* from = packed.data();
    for (int g = 0; g < nGroups(); ++g) {
        const BlockId b = table(seq, g)[index];
        for (size_t part = 0; part < 2 * static_cast<size_t>(group(g).nLayers); ++part, from += saved)
            copySlots(Move::FromHost, memoryOf(g, part), partOf(g, b, part), layout_.blockSize, from, nSavedRows, nRows,
                      part % 2 == 0);
    }
    return {};
}

void KvCache::copyRows(int g, BlockId from, BlockId to, int32_t nRows) {
    for (size_t part = 0; part < 2 * static_cast<size_t>(group(g).nLayers); ++part)  // K and V of each layer
        copySlots(Move::Within, memoryOf(g, part), partOf(g, to, part), layout_.blockSize, partOf(g, from, part), layout_.blockSize,
                  nRows, part % 2 == 0);
}

PagedKvLayer KvCache::layerView(const KvSequence& seq, int layer) {
    const int g = layerGroup_[static_cast<size_t>(layer)];
    const std::vector<BlockId>& t = table(seq, g);
    const size_t n = t.size();
    kPointers_.resize(n * static_cast<size_t>(layout_.nLayers));
    vPointers_.resize(n * static_cast<size_t>(layout_.nLayers));
    // Pointers of layer l live at [l * n, (l + 1) * n) so that views of all layers stay valid together.
    f16_t** kOut = kPointers_.data() + static_cast<size_t>(layer) * n;
    f16_t** vOut = vPointers_.data() + static_cast<size_t>(layer) * n;
    const size_t kPart = static_cast<size_t>(layerSlot_[static_cast<size_t>(layer)]) * 2;
    for (size_t b = 0; b < n; ++b) {
        // A released window block (outside every window still to be read) is a null pointer:
        // no kernel reads positions before its query's window (AttentionShape::slidingWindow).
        const bool held = t[b] != kNoBlock;
        // Rows of 2-byte elements or 34-byte Q8_0 blocks.
        kOut[b] = held ? reinterpret_cast<f16_t*>(partOf(g, t[b], kPart)) : nullptr;
        vOut[b] = held ? reinterpret_cast<f16_t*>(partOf(g, t[b], kPart + 1)) : nullptr;
    }
    const DType type = layout_.elementType == KvElementType::Q8_0 ? DType::Q8_0 : DType::F16;
    return PagedKvLayer{.kBlocks = kOut,
                        .vBlocks = vOut,
                        .blockSize = layout_.blockSize,
                        .rowStride = layout_.rowStride,
                        .type = type,
                        .kDimMajor = layout_.kDimMajor,
                        .vHeadDim = layout_.vHeadDim,
                        .nBlocks = static_cast<int>(n)};
}

}  // namespace hearth

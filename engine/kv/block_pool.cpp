// Block bookkeeping: reference counts, the free list, the key index and the LRU of cached
// blocks. Every operation is O(1) except longestCachedPrefix (one hash per block matched).
#include "engine/kv/block_pool.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace hearth {
namespace {

void appendLe32(Sha256& h, uint32_t v) {
    const uint8_t bytes[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16),
                              static_cast<uint8_t>(v >> 24)};
    h.update(bytes);
}

}  // namespace

KvChainRoot KvChainRoot::derive(std::span<const uint8_t> modelFingerprint, const KvLayout& layout,
                                std::string_view backendName, uint32_t numericsVersion) {
    // Each variable-length part is preceded by its length, so no two inputs hash alike by
    // moving bytes from one part into the next.
    Sha256 h;
    appendLe32(h, static_cast<uint32_t>(modelFingerprint.size()));
    h.update(modelFingerprint);
    const std::string layoutText = describe(layout);
    appendLe32(h, static_cast<uint32_t>(layoutText.size()));
    h.update(layoutText);
    appendLe32(h, static_cast<uint32_t>(backendName.size()));
    h.update(backendName);
    appendLe32(h, numericsVersion);
    return KvChainRoot{h.finish()};
}

BlockKey chainKey(const BlockKey& parent, std::span<const int32_t> tokens) {
    Sha256 h;
    h.update(parent);
    for (int32_t t : tokens) appendLe32(h, static_cast<uint32_t>(t));
    return h.finish();
}

size_t BlockPool::KeyHash::operator()(const BlockKey& k) const {
    size_t v;  // the key is already a uniform hash: its first bytes serve
    std::memcpy(&v, k.data(), sizeof v);
    return v;
}

BlockPool::BlockPool(int32_t nBlocks, int32_t blockSize) : blockSize_(blockSize) {
    const auto n = static_cast<size_t>(std::max(nBlocks, 0));
    refCounts_.assign(n, 0);
    keyed_.assign(n, 0);
    keys_.resize(n);
    lruPrev_.assign(n, -1);
    lruNext_.assign(n, -1);
    freeList_.reserve(n);
    for (auto b = static_cast<BlockId>(n) - 1; b >= 0; --b) freeList_.push_back(b);
}

const BlockKey* BlockPool::keyOf(BlockId block) const {
    return keyed_[static_cast<size_t>(block)] ? &keys_[static_cast<size_t>(block)] : nullptr;
}

BlockId BlockPool::find(const BlockKey& key) const {
    const auto it = index_.find(key);
    return it == index_.end() ? -1 : it->second;
}

std::vector<BlockId> BlockPool::lruOrder() const {
    std::vector<BlockId> order;
    for (BlockId b = lruHead_; b >= 0; b = lruNext_[static_cast<size_t>(b)]) order.push_back(b);
    return order;
}

CachedPrefix BlockPool::longestCachedPrefix(const BlockKey& parent, std::span<const int32_t> tokens) const {
    CachedPrefix prefix;
    BlockKey key = parent;
    for (size_t start = 0; start + static_cast<size_t>(blockSize_) <= tokens.size();
         start += static_cast<size_t>(blockSize_)) {
        key = chainKey(key, tokens.subspan(start, static_cast<size_t>(blockSize_)));
        const auto it = index_.find(key);
        if (it == index_.end()) break;
        prefix.blocks.push_back(it->second);
        prefix.keys.push_back(key);
    }
    return prefix;
}

std::vector<BlockId> BlockPool::peekAllocations(int32_t n, std::span<const BlockId> toShare) const {
    std::vector<BlockId> next;
    for (auto it = freeList_.rbegin(); it != freeList_.rend() && std::ssize(next) < n; ++it) next.push_back(*it);
    for (BlockId b = lruHead_; b >= 0 && std::ssize(next) < n; b = lruNext_[static_cast<size_t>(b)])
        if (std::find(toShare.begin(), toShare.end(), b) == toShare.end()) next.push_back(b);
    return next;
}

BlockId BlockPool::allocate() {
    assert(nAvailable() > 0);
    ++generation_;
    BlockId block;
    if (!freeList_.empty()) {
        block = freeList_.back();
        freeList_.pop_back();
    } else {
        block = lruHead_;  // evict the least recently used cached block
        lruRemove(block);
        dropKey(block);
    }
    refCounts_[static_cast<size_t>(block)] = 1;
    return block;
}

void BlockPool::share(BlockId block) {
    ++generation_;
    if (refCounts_[static_cast<size_t>(block)]++ == 0) {
        assert(keyed_[static_cast<size_t>(block)]);  // an unreferenced block is shareable only while cached
        lruRemove(block);
    }
}

void BlockPool::release(BlockId block) {
    assert(refCounts_[static_cast<size_t>(block)] > 0);
    ++generation_;
    if (--refCounts_[static_cast<size_t>(block)] > 0) return;
    if (keyed_[static_cast<size_t>(block)]) lruPushBack(block);
    else freeList_.push_back(block);
}

bool BlockPool::publish(BlockId block, const BlockKey& key) {
    assert(refCounts_[static_cast<size_t>(block)] > 0 && !keyed_[static_cast<size_t>(block)]);
    if (!index_.emplace(key, block).second) return false;
    ++generation_;
    keyed_[static_cast<size_t>(block)] = 1;
    keys_[static_cast<size_t>(block)] = key;
    return true;
}

void BlockPool::unpublish(BlockId block) {
    if (!keyed_[static_cast<size_t>(block)]) return;
    ++generation_;
    dropKey(block);
    if (refCounts_[static_cast<size_t>(block)] == 0) {  // was cached: now plainly free
        lruRemove(block);
        freeList_.push_back(block);
    }
}

void BlockPool::dropKey(BlockId block) {
    index_.erase(keys_[static_cast<size_t>(block)]);
    keyed_[static_cast<size_t>(block)] = 0;
}

void BlockPool::lruPushBack(BlockId block) {
    lruPrev_[static_cast<size_t>(block)] = lruTail_;
    lruNext_[static_cast<size_t>(block)] = -1;
    if (lruTail_ >= 0) lruNext_[static_cast<size_t>(lruTail_)] = block;
    else lruHead_ = block;
    lruTail_ = block;
    ++nCached_;
}

void BlockPool::lruRemove(BlockId block) {
    const BlockId prev = lruPrev_[static_cast<size_t>(block)], next = lruNext_[static_cast<size_t>(block)];
    if (prev >= 0) lruNext_[static_cast<size_t>(prev)] = next;
    else lruHead_ = next;
    if (next >= 0) lruPrev_[static_cast<size_t>(next)] = prev;
    else lruTail_ = prev;
    lruPrev_[static_cast<size_t>(block)] = lruNext_[static_cast<size_t>(block)] = -1;
    --nCached_;
}

}  // namespace hearth

// The block pool and the paged KV cache over it, with exact block ids and no model:
// allocation order, sharing, prefix lookup, copy-on-write, rollback, LRU eviction, failed and
// stale reservations, and chain roots that keep models apart.
#include <QtTest>
#include <numeric>
#include <vector>

#include "engine/kv/kv_cache.h"

using namespace hearth;
using Ids = std::vector<int32_t>;

namespace {

const KvLayout kLayout{2, 2, 4};  // 2 layers, rows of 2 elements, 4 tokens per block

Ids tokens(int32_t first, int32_t n) {
    Ids t(static_cast<size_t>(n));
    std::iota(t.begin(), t.end(), first);
    return t;
}

// What a forward pass does: reserve (reusing cached blocks), fill, publish the full blocks.
// Returns the positions taken from the cache.
int32_t fill(KvCache& cache, KvSequence& seq, const Ids& ids) {
    auto plan = cache.plan(seq, static_cast<int32_t>(ids.size()), ids);
    if (!plan || !cache.commit(seq, *plan)) return -1;
    seq.nTokens = static_cast<int32_t>(ids.size());
    cache.publish(seq, ids);
    return plan->nCachedTokens;
}

// Marks K and V of every layer at a position (its value: a tag) through the kernels' view.
void writeTag(KvCache& cache, const KvSequence& seq, int32_t pos, uint16_t tag) {
    for (int l = 0; l < kLayout.nLayers; ++l) {
        const PagedKvLayer view = cache.layerView(seq, l);
        const auto block = static_cast<size_t>(pos / view.blockSize), row = static_cast<size_t>(pos % view.blockSize);
        for (size_t i = 0; i < 2; ++i) {
            view.kBlocks[block][row * 2 + i] = static_cast<uint16_t>(tag + 100 * l);
            view.vBlocks[block][row * 2 + i] = static_cast<uint16_t>(tag + 100 * l + 50);
        }
    }
}

bool hasTag(KvCache& cache, const KvSequence& seq, int32_t pos, uint16_t tag) {
    for (int l = 0; l < kLayout.nLayers; ++l) {
        const PagedKvLayer view = cache.layerView(seq, l);
        const auto block = static_cast<size_t>(pos / view.blockSize), row = static_cast<size_t>(pos % view.blockSize);
        for (size_t i = 0; i < 2; ++i)
            if (view.kBlocks[block][row * 2 + i] != tag + 100 * l ||
                view.vBlocks[block][row * 2 + i] != tag + 100 * l + 50)
                return false;
    }
    return true;
}

Ids lookup(const KvCache& cache, const Ids& ids) {
    return cache.pool().longestCachedPrefix(cache.root().key, ids).blocks;
}

}  // namespace

class TestBlockPool : public QObject {
    Q_OBJECT
private slots:
    void allocationOrder() {
        BlockPool pool(4, 4);
        QCOMPARE(pool.allocate(), 0);
        QCOMPARE(pool.allocate(), 1);
        QCOMPARE(pool.allocate(), 2);
        QCOMPARE(pool.allocate(), 3);
        QCOMPARE(pool.nAvailable(), 0);
        pool.release(2);  // unkeyed: straight back to the free list, handed out first
        QCOMPARE(pool.nFree(), 1);
        QCOMPARE(pool.allocate(), 2);
        pool.release(1);
        pool.release(3);
        QCOMPARE(pool.allocate(), 3);  // a stack: last freed, first reused
        QCOMPARE(pool.allocate(), 1);
    }
    void chainKeyIsSha256OfParentAndLittleEndianTokens() {
        const BlockKey parent = sha256("parent");
        std::string bytes(parent.begin(), parent.end());
        for (int32_t t : {1, -2, 0x01020304})
            for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>(static_cast<uint32_t>(t) >> (8 * i)));
        QCOMPARE(chainKey(parent, Ids{1, -2, 0x01020304}), sha256(bytes));
    }
    void twoSequencesShareTheirCommonPrefix() {
        KvCache cache(kLayout, 32);  // 8 blocks
        KvSequence a, b;
        const Ids promptA = tokens(1, 10);
        QCOMPARE(fill(cache, a, promptA), 0);
        QCOMPARE(a.blockTable, (Ids{0, 1, 2}));
        QVERIFY(cache.pool().keyOf(0) && cache.pool().keyOf(1) && !cache.pool().keyOf(2));  // block 2 is partly filled
        Ids promptB = tokens(1, 8);
        promptB.insert(promptB.end(), {100, 101, 102});
        QCOMPARE(fill(cache, b, promptB), 8);
        QCOMPARE(b.blockTable, (Ids{0, 1, 3}));
        QCOMPARE(b.blockKeys, a.blockKeys);
        QCOMPARE(cache.pool().refCount(0), 2);
        QCOMPARE(cache.pool().refCount(1), 2);
        QCOMPARE(cache.pool().refCount(2), 1);
        QCOMPARE(cache.pool().refCount(3), 1);
        QCOMPARE(cache.pool().nUsed(), 4);
        cache.release(a);
        QCOMPARE(cache.pool().refCount(0), 1);
        QCOMPARE(cache.pool().nFree(), 5);  // block 2 (never keyed) is free again
        cache.release(b);
        QCOMPARE(cache.pool().lruOrder(), (Ids{1, 0}));  // released last block first
        QCOMPARE(cache.pool().nCached(), 2);
        QCOMPARE(cache.pool().nFree(), 6);
    }
    void longestCachedPrefixIsBlockAligned() {
        KvCache cache(kLayout, 32);
        KvSequence a;
        fill(cache, a, tokens(1, 12));  // three full blocks 0, 1, 2
        QCOMPARE(lookup(cache, tokens(1, 12)), (Ids{0, 1, 2}));
        QCOMPARE(lookup(cache, tokens(1, 11)), (Ids{0, 1}));  // a partial block never matches
        Ids diverging = tokens(1, 12);
        diverging[9] = 99;
        QCOMPARE(lookup(cache, diverging), (Ids{0, 1}));
        QCOMPARE(lookup(cache, tokens(2, 12)), Ids{});
        cache.release(a);  // unreferenced but keyed: still found
        QCOMPARE(lookup(cache, tokens(1, 16)), (Ids{0, 1, 2}));
        // A plan never reuses past the positions it reserves, nor the last partial block.
        KvSequence b;
        auto r = cache.plan(b, 9, tokens(1, 12));
        QVERIFY(r);
        QCOMPARE(r->reuse, (Ids{0, 1}));
        QCOMPARE(r->nCachedTokens, 8);
        QCOMPARE(r->nNewBlocks, 1);
    }
    void copyOnWriteOfPartlyFilledSharedBlock() {
        KvCache cache(kLayout, 32);
        KvSequence a, b;
        const Ids t = tokens(1, 8);
        fill(cache, a, t);
        for (int32_t pos = 0; pos < 8; ++pos) writeTag(cache, a, pos, static_cast<uint16_t>(pos + 1));
        QCOMPARE(fill(cache, b, t), 8);
        QCOMPARE(b.blockTable, (Ids{0, 1}));
        cache.rollback(b, 6);  // b edits its last two tokens
        QCOMPARE(b.blockTable, (Ids{0, 1}));
        QCOMPARE(b.blockKeys.size(), size_t{1});
        QCOMPARE(cache.pool().refCount(1), 2);  // nothing copied until a write is planned
        auto r = cache.plan(b, 8);
        QVERIFY(r);
        QCOMPARE(r->unshare, KvReservation::Unshare::Copy);
        QCOMPARE(r->nNewBlocks, 0);
        QVERIFY(cache.commit(b, *r));
        QCOMPARE(b.blockTable, (Ids{0, 2}));
        QCOMPARE(cache.pool().refCount(1), 1);
        QCOMPARE(cache.pool().refCount(2), 1);
        QVERIFY(!cache.pool().keyOf(2));
        QVERIFY(hasTag(cache, b, 4, 5) && hasTag(cache, b, 5, 6));  // the kept rows were copied
        writeTag(cache, b, 6, 70);
        writeTag(cache, b, 7, 80);
        QVERIFY(hasTag(cache, a, 6, 7) && hasTag(cache, a, 7, 8));  // a's block is untouched
        QVERIFY(hasTag(cache, b, 6, 70));
    }
    void copyOnWriteKeepsTheCachedFullBlock() {
        KvCache cache(kLayout, 32);
        KvSequence a, c;
        const Ids t = tokens(1, 8);
        fill(cache, a, t);
        cache.rollback(a, 6);  // a alone holds block 1, but its full content is indexed
        QVERIFY(cache.reserve(a, 7));
        QCOMPARE(a.blockTable, (Ids{0, 2}));
        QCOMPARE(cache.pool().lruOrder(), (Ids{1}));
        QCOMPARE(fill(cache, c, t), 8);  // the full block 1 serves another sequence
        QCOMPARE(c.blockTable, (Ids{0, 1}));
        QCOMPARE(cache.pool().nCached(), 0);
    }
    void writeInPlaceWhenNoBlockIsSpare() {
        KvCache cache(kLayout, 8);  // 2 blocks
        KvSequence a;
        const Ids t = tokens(1, 8);
        fill(cache, a, t);
        cache.rollback(a, 6);
        auto r = cache.plan(a, 7);
        QVERIFY(r);
        QCOMPARE(r->unshare, KvReservation::Unshare::InPlace);
        QVERIFY(cache.commit(a, *r));
        QCOMPARE(a.blockTable, (Ids{0, 1}));
        QVERIFY(!cache.pool().keyOf(1));
        QCOMPARE(lookup(cache, t), (Ids{0}));
    }
    void rollbackFreesBlocksPastThePosition() {
        KvCache cache(kLayout, 32);
        KvSequence a, b;
        fill(cache, a, tokens(1, 10));
        cache.rollback(a, 5);
        QCOMPARE(a.blockTable, (Ids{0, 1}));
        QCOMPARE(a.nTokens, 5);
        QCOMPARE(a.blockKeys.size(), size_t{1});
        QCOMPARE(cache.pool().nFree(), 6);  // block 2 was partial: free, not cached
        QVERIFY(cache.reserve(b, 1));
        QCOMPARE(b.blockTable, (Ids{2}));
        cache.rollback(a, 4);
        QCOMPARE(a.blockTable, (Ids{0}));
        QCOMPARE(cache.pool().lruOrder(), (Ids{1}));  // full and keyed: cached
        cache.rollback(a, 9);  // never grows
        QCOMPARE(a.nTokens, 4);
        cache.rollback(a, 0);
        QVERIFY(a.blockTable.empty() && a.blockKeys.empty());
        QCOMPARE(cache.pool().lruOrder(), (Ids{1, 0}));
    }
    void evictsLeastRecentlyUsedFirst() {
        KvCache cache(kLayout, 16);  // 4 blocks
        KvSequence a, b, c, d;
        const Ids tA = tokens(1, 8), tB = tokens(11, 8);
        fill(cache, a, tA);
        cache.release(a);
        fill(cache, b, tB);
        QCOMPARE(b.blockTable, (Ids{2, 3}));
        cache.release(b);
        QCOMPARE(cache.pool().lruOrder(), (Ids{1, 0, 3, 2}));
        QCOMPARE(fill(cache, d, tA), 8);  // reuse refreshes a's blocks
        cache.release(d);
        QCOMPARE(cache.pool().lruOrder(), (Ids{3, 2, 1, 0}));
        QCOMPARE(cache.pool().peekAllocations(3, {}), (Ids{3, 2, 1}));
        QCOMPARE(cache.pool().peekAllocations(3, Ids{3}), (Ids{2, 1, 0}));  // 3 about to be shared
        QCOMPARE(fill(cache, c, tokens(21, 12)), 0);  // no free block left: evict 3, 2, 1
        QCOMPARE(c.blockTable, (Ids{3, 2, 1}));
        QCOMPARE(cache.pool().lruOrder(), (Ids{0}));
        QCOMPARE(lookup(cache, tB), Ids{});
        QCOMPARE(lookup(cache, tA), (Ids{0}));
    }
    void failedReservationChangesNothing() {
        KvCache cache(kLayout, 16);  // 4 blocks
        KvSequence a, b, c;
        const Ids tA = tokens(1, 8);
        fill(cache, a, tA);
        cache.release(a);
        fill(cache, b, tokens(11, 4));
        QCOMPARE(b.blockTable, (Ids{2}));
        const uint64_t generation = cache.pool().generation();
        Ids longer = tA;
        longer.resize(20, 7);  // a's two cached blocks + three new: one block short
        const auto r = cache.plan(c, 20, longer);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::OutOfMemory);
        QVERIFY(!cache.plan(c, 40));  // beyond the capacity
        QCOMPARE(cache.pool().generation(), generation);
        QCOMPARE(cache.pool().lruOrder(), (Ids{1, 0}));
        QCOMPARE(cache.pool().nFree(), 1);
        QVERIFY(c.blockTable.empty() && c.nTokens == 0);
        // A reservation planned before another change is refused whole.
        auto stale = cache.plan(c, 8, tA);
        QVERIFY(stale);
        QVERIFY(cache.reserve(b, 5));
        const auto committed = cache.commit(c, *stale);
        QVERIFY(!committed);
        QCOMPARE(committed.error().code, ErrorCode::InvalidArgument);
        QVERIFY(c.blockTable.empty() && c.nTokens == 0);
        QCOMPARE(cache.pool().refCount(0), 0);
        QCOMPARE(cache.pool().lruOrder(), (Ids{1, 0}));
    }
    void aKeyAlreadyIndexedStaysWithItsFirstBlock() {
        KvCache cache(kLayout, 16);
        KvSequence a, b;
        const Ids t = tokens(1, 4);
        QVERIFY(cache.reserve(a, 4) && cache.reserve(b, 4));  // both computed, neither looked up
        a.nTokens = b.nTokens = 4;
        cache.publish(a, t);
        cache.publish(b, t);
        QCOMPARE(b.blockKeys, a.blockKeys);  // b still knows its chain
        QVERIFY(cache.pool().keyOf(0) && !cache.pool().keyOf(1));
        cache.release(b);
        QCOMPARE(cache.pool().nFree(), 3);
    }
    void differentChainRootsNeverShare() {
        const uint8_t fpA[] = {1, 2, 3}, fpB[] = {1, 2, 4};
        const KvChainRoot rootA = KvChainRoot::derive(fpA, kLayout, "CPU (reference)", 1);
        QVERIFY(rootA == KvChainRoot::derive(fpA, kLayout, "CPU (reference)", 1));
        QVERIFY(!(rootA == KvChainRoot::derive(fpB, kLayout, "CPU (reference)", 1)));
        QVERIFY(!(rootA == KvChainRoot::derive(fpA, KvLayout{2, 2, 8}, "CPU (reference)", 1)));
        QVERIFY(!(rootA == KvChainRoot::derive(fpA, KvLayout{2, 2, 4, KvElementType::Q8_0}, "CPU (reference)", 1)));
        QVERIFY(!(rootA == KvChainRoot::derive(fpA, kLayout, "CUDA", 1)));
        QVERIFY(!(rootA == KvChainRoot::derive(fpA, kLayout, "CPU (reference)", 2)));
        const KvChainRoot rootB = KvChainRoot::derive(fpB, kLayout, "CPU (reference)", 1);
        BlockPool pool(4, 4);
        const Ids t = tokens(1, 4);
        const BlockId block = pool.allocate();
        QVERIFY(pool.publish(block, chainKey(rootA.key, t)));
        QCOMPARE(pool.longestCachedPrefix(rootA.key, t).blocks, (Ids{block}));
        QVERIFY(pool.longestCachedPrefix(rootB.key, t).blocks.empty());
        KvCache cacheA(kLayout, 16, rootA), cacheB(kLayout, 16, rootB);
        KvSequence a, b;
        fill(cacheA, a, t);
        fill(cacheB, b, t);
        QVERIFY(a.blockKeys != b.blockKeys);
    }
};

QTEST_APPLESS_MAIN(TestBlockPool)
#include "test_block_pool.moc"

// The paged KV storage: blocks are handed out and returned, reservation is all-or-nothing,
// and a position's K/V lives where its block table says.
#include <QtTest>

#include "engine/kv/kv_cache.h"

using namespace hearth;

class TestKvCache : public QObject {
    Q_OBJECT
private slots:
    void reserveAndTruncate() {
        KvCache cache({2, 8, 16}, 64);  // 4 blocks
        QCOMPARE(cache.nFreeBlocks(), 4);
        KvSequence seq;
        QVERIFY(cache.reserve(seq, 17));
        QCOMPARE(seq.blockTable.size(), size_t{2});
        QCOMPARE(cache.nFreeBlocks(), 2);
        seq.nTokens = 17;
        cache.rollback(seq, 16);
        QCOMPARE(seq.blockTable.size(), size_t{1});
        QCOMPARE(cache.nFreeBlocks(), 3);
        cache.release(seq);
        QCOMPARE(cache.nFreeBlocks(), 4);
    }
    void failedReserveChangesNothing() {
        KvCache cache({1, 4, 16}, 32);  // 2 blocks
        KvSequence a, b;
        QVERIFY(cache.reserve(a, 16));
        const auto r = cache.reserve(b, 33);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::OutOfMemory);
        QVERIFY(b.blockTable.empty());
        QCOMPARE(cache.nFreeBlocks(), 1);
    }
    void writesLandInTheRightBlock() {
        KvCache cache({2, 4, 4}, 16);
        KvSequence seq;
        QVERIFY(cache.reserve(seq, 6));
        auto backend = makeCpuReferenceBackend();
        const PagedKvLayer layer1 = cache.layerView(seq, 1);
        const float k[4] = {1, 2, 3, 4}, v[4] = {-1, -2, -3, -4};
        const int32_t pos[1] = {5};  // block 1, slot 1
        backend->kvWrite(layer1, k, v, pos, 1);
        QCOMPARE(f16ToF32(layer1.kBlocks[1][1 * 4 + 2]), 3.0f);
        QCOMPARE(f16ToF32(layer1.vBlocks[1][1 * 4 + 3]), -4.0f);
        const PagedKvLayer layer0 = cache.layerView(seq, 0);
        QVERIFY(layer0.kBlocks[1] != layer1.kBlocks[1]);
    }
};

QTEST_APPLESS_MAIN(TestKvCache)
#include "test_kv_cache.moc"

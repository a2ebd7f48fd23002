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
    // K stored dimension-major and V head by head (the CPU engine's orders): each element lands
    // at its slot, and a forked sequence's copied tail block, snapshot tail rows written back,
    // hold the same K and V.
    void cpuOrdersTravelWithTheirRows() {
        KvLayout layout{2, 8, 8};
        layout.kDimMajor = true;
        layout.vHeadDim = 4;  // two heads of four
        QVERIFY(describe(layout).find(" k=dim-major v=head-major/4") != std::string::npos);
        KvCache cache(layout, 64);
        KvSequence seq;
        QVERIFY(cache.reserve(seq, 12));
        auto backend = makeCpuReferenceBackend();
        const auto kAt = [](int layer, int p, int c) { return float(layer * 128 + p * 8 + c); };
        for (int layer = 0; layer < 2; ++layer)
            for (int32_t p = 0; p < 12; ++p) {
                float k[8], v[8];
                for (int c = 0; c < 8; ++c) k[c] = kAt(layer, p, c), v[c] = -kAt(layer, p, c);
                backend->kvWrite(cache.layerView(seq, layer), k, v, &p, 1);
            }
        seq.nTokens = 12;
        for (int layer = 0; layer < 2; ++layer) {
            const PagedKvLayer view = cache.layerView(seq, layer);
            QVERIFY(view.kDimMajor);
            QCOMPARE(view.vHeadDim, 4);
            QCOMPARE(f16ToF32(view.kBlocks[1][3 * 8 + 2]), kAt(layer, 10, 3));  // element 3 of position 10
            // element 6 of position 10: head 1's row of slot 2, its element 2
            QCOMPARE(f16ToF32(view.vBlocks[1][(1 * 8 + 2) * 4 + 2]), -kAt(layer, 10, 6));
            for (int32_t p = 0; p < 12; ++p)
                for (int c = 0; c < 8; ++c) {
                    QCOMPARE(f16ToF32(*kvKElement(view, p, c)), kAt(layer, p, c));
                    QCOMPARE(f16ToF32(*kvVElement(view, p, c)), -kAt(layer, p, c));
                }
        }
        KvSequence forked = cache.fork(seq);
        QVERIFY(cache.reserve(forked, 13));  // copies the shared, partly filled block 1
        QVERIFY(forked.blockTable[1] != seq.blockTable[1]);
        const std::vector<uint8_t> packed = cache.packedRows(seq, 1, 4);
        QCOMPARE(packed.size(), cache.tailBytes(4));
        KvSequence other;
        QVERIFY(cache.reserve(other, 4));
        QVERIFY(cache.writeRows(other, 0, packed, 4, 4));
        for (int layer = 0; layer < 2; ++layer) {
            const PagedKvLayer f = cache.layerView(forked, layer), o = cache.layerView(other, layer);
            for (int32_t p = 8; p < 12; ++p)
                for (int c = 0; c < 8; ++c) {
                    QCOMPARE(f16ToF32(*kvKElement(f, p, c)), kAt(layer, p, c));
                    QCOMPARE(f16ToF32(*kvKElement(o, p - 8, c)), kAt(layer, p, c));
                    QCOMPARE(f16ToF32(*kvVElement(f, p, c)), -kAt(layer, p, c));
                    QCOMPARE(f16ToF32(*kvVElement(o, p - 8, c)), -kAt(layer, p, c));
                }
        }
        cache.release(other);
        cache.release(forked);
        cache.release(seq);
        KvLayout odd{2, 8, 4};  // blocks of 4 positions cannot hold chunks of eight
        odd.kDimMajor = true;
        QVERIFY(!KvCache::create(odd, 64));
        KvLayout partHead{2, 8, 8};  // heads of 3 do not tile rows of 8
        partHead.vHeadDim = 3;
        QVERIFY(!KvCache::create(partHead, 64));
        KvLayout q8{2, 64, 8, KvElementType::Q8_0};  // Q8_0 rows stay token-major
        q8.vHeadDim = 32;
        QVERIFY(!KvCache::create(q8, 64));
    }
};

QTEST_APPLESS_MAIN(TestKvCache)
#include "test_kv_cache.moc"

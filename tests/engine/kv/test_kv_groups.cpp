// Per-group KV pools (engine/kv/kv_cache.h): the window group's blocks are released as the
// window slides (freed when no one else holds them), shared ones are only unreferenced, and
// rollback, forks and prefix reuse work per group.
#include <QtTest>

#include <numeric>

#include "engine/kv/kv_cache.h"
#include "engine/snapshot/kv_snapshot.h"

using namespace hearth;

namespace {

// 3 layers, layer 0 global, layers 1 and 2 see the last 6 positions; blocks of 4; 16 blocks a pool.
KvLayout windowLayout() {
    KvLayout l{3, 4, 4};
    l.window = 6;
    l.windowLayers = {false, true, true};
    return l;
}

std::vector<int32_t> iota(int32_t n, int32_t from = 100) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    std::iota(t.begin(), t.end(), from);
    return t;
}

// Decodes one position at a time up to `to`, as the scheduler does: reserve, advance, publish.
bool advance(KvCache& cache, KvSequence& seq, const std::vector<int32_t>& tokens, int32_t to) {
    while (seq.nTokens < to) {
        if (!cache.reserve(seq, seq.nTokens + 1)) return false;
        ++seq.nTokens;
        cache.publish(seq, tokens);
    }
    return true;
}

int32_t blocksFor(int32_t n) { return (n + 3) / 4; }

}  // namespace

class TestKvGroups : public QObject {
    Q_OBJECT
private slots:
    void layoutDescribesItsGroups() {
        QVERIFY(hasWindowGroup(windowLayout()));
        QCOMPARE(nGroupLayers(windowLayout(), 0), 1);
        QCOMPARE(nGroupLayers(windowLayout(), 1), 2);
        QCOMPARE(QString::fromStdString(describe(windowLayout())),
                 QString("kv-layout/v2 layers=3 row=4 block=4 type=f16 window=6 window_layers=1,2"));
        KvLayout all = windowLayout();
        all.windowLayers = {true, true, true};  // no global layer: one group of all positions
        QVERIFY(!hasWindowGroup(all));
        QCOMPARE(QString::fromStdString(describe(KvLayout{3, 4, 4})),
                 QString("kv-layout/v1 layers=3 row=4 block=4 type=f16"));
        KvCache one(KvLayout{3, 4, 4}, 64), two(windowLayout(), 64);
        QCOMPARE(one.nGroups(), 1);
        QCOMPARE(two.nGroups(), 2);
        QCOMPARE(two.bytesPerBlock(), one.bytesPerBlock());
        QCOMPARE(two.bytesPerBlock(0) * 2, two.bytesPerBlock(1));
    }

    void windowBlocksAreFreedAsItSlides() {
        KvCache cache(windowLayout(), 64);
        const std::vector<int32_t> tokens = iota(60);
        KvSequence seq;
        for (int32_t p = 0; p < 60; ++p) {
            QVERIFY(advance(cache, seq, tokens, p + 1));
            // Planned at nTokens = p: the query at p reads positions (p - 6, p]; what the first
            // position of its block reads is kept (the window is not a whole number of blocks).
            const int32_t held = blocksFor(p + 1) - std::max(0, p / 4 * 4 + 1 - 6) / 4;
            QCOMPARE(cache.nHeldBlocks(seq, 0), blocksFor(p + 1));
            QCOMPARE(cache.nHeldBlocks(seq, 1), held);
            QCOMPARE(cache.nFreeBlocks(1), 16 - held);
            QCOMPARE(cache.pool(1).nCached(), 0);  // released blocks were freed, not kept
            QVERIFY(cache.resumable(seq));
        }
        QVERIFY(cache.nHeldBlocks(seq, 1) <= 3);
        QCOMPARE(cache.heldBytes(seq),
                 size_t(15) * cache.bytesPerBlock(0) + size_t(cache.nHeldBlocks(seq, 1)) * cache.bytesPerBlock(1));
        // The released entries are holes; the views of window layers give null pointers there.
        const PagedKvLayer view = cache.layerView(seq, 1);
        QCOMPARE(view.kBlocks[0], nullptr);
        QVERIFY(view.kBlocks[14] != nullptr);
        QVERIFY(cache.layerView(seq, 0).kBlocks[0] != nullptr);
        cache.release(seq);
        QCOMPARE(cache.nFreeBlocks(0), 16);
        QCOMPARE(cache.nFreeBlocks(1), 16);
    }

    void sharedWindowBlocksAreOnlyUnreferenced() {
        KvCache cache(windowLayout(), 64);
        const std::vector<int32_t> tokens = iota(40);
        KvSequence a;
        QVERIFY(advance(cache, a, tokens, 12));
        KvSequence b = cache.fork(a);  // a beam that branches off at 12
        const std::vector<BlockId> bWindow = b.windowTable;
        QVERIFY(advance(cache, a, tokens, 30));
        // a let go of its old window blocks; b still holds (and reads) them.
        QCOMPARE(b.windowTable, bWindow);
        for (BlockId blk : bWindow)
            if (blk != kNoBlock) QCOMPARE(cache.pool(1).refCount(blk), 1);
        QVERIFY(cache.resumable(b));
        QVERIFY(advance(cache, b, tokens, 14));
        cache.release(a);
        cache.release(b);
        QCOMPARE(cache.nFreeBlocks(0), 16);
        QCOMPARE(cache.nFreeBlocks(1), 16);
    }

    void rollbackWorksPerGroup() {
        KvCache cache(windowLayout(), 64);
        const std::vector<int32_t> tokens = iota(40);
        KvSequence seq;
        QVERIFY(advance(cache, seq, tokens, 20));
        // A speculative verify: 8 drafted positions reserved and written, 1 kept.
        QVERIFY(cache.reserve(seq, 28));
        const int32_t freeBefore = cache.nFreeBlocks(1);
        seq.nTokens = 28;
        cache.rollback(seq, 21);
        QCOMPARE(std::ssize(seq.blockTable), blocksFor(21));
        QCOMPARE(seq.windowTable.size(), seq.blockTable.size());
        QCOMPARE(cache.nFreeBlocks(1), freeBefore + 1);
        QVERIFY(cache.resumable(seq));
        QVERIFY(advance(cache, seq, tokens, 26));
        // Further back than the window: the blocks there were released, it cannot go on.
        cache.rollback(seq, 5);
        QVERIFY(!cache.resumable(seq));
        const auto r = cache.plan(seq, 6);
        QVERIFY(!r);
        QCOMPARE(r.error().code, ErrorCode::InvalidArgument);
        cache.release(seq);
        QCOMPARE(cache.nFreeBlocks(1), 16);
    }

    void prefixReuseNeedsTheWindowBlocks() {
        KvCache cache(windowLayout(), 64);
        const std::vector<int32_t> tokens = iota(40);
        KvSequence a;
        QVERIFY(advance(cache, a, tokens, 32));
        cache.release(a);  // its last window stays cached (keyed), the rest of the window group was freed
        QCOMPARE(cache.pool(0).nCached(), 8);
        QVERIFY(cache.pool(1).nCached() >= 2);
        // Going on from the end: all 8 blocks reused, the window group's where the window needs them.
        KvSequence b;
        auto r = cache.plan(b, 34, std::span<const int32_t>(tokens).first(33));
        QVERIFY(r);
        QCOMPARE(r->nCachedTokens, 32);
        QVERIFY(cache.commit(b, *r));
        QCOMPARE(b.nTokens, 32);
        QCOMPARE(b.windowTable[0], kNoBlock);
        QVERIFY(cache.reserved(b, 34));
        QCOMPARE(cache.nHeldBlocks(b, 1), 9 - (32 + 1 - 6) / 4);  // reused from the window of the query at 32
        cache.release(b);
        // Diverging at token 10: the full group has blocks 0 and 1, but the window blocks a query
        // at 8 reads were freed: nothing reusable.
        std::vector<int32_t> other = tokens;
        other[10] = 7;
        KvSequence c;
        QCOMPARE(cache.pool(0).longestCachedPrefix(cache.root().key, other).blocks.size(), size_t(2));
        QCOMPARE(cache.cachedPrefix(c, std::span<const int32_t>(other).first(20)).full.blocks.size(), size_t(0));
        auto rc = cache.plan(c, 20, std::span<const int32_t>(other).first(19));
        QVERIFY(rc);
        QCOMPARE(rc->nCachedTokens, 0);
    }

    void oneGroupKeepsEveryPosition() {
        KvLayout all = windowLayout();
        all.window = 0;  // the all-positions layout of the same model
        KvCache cache(all, 64);
        const std::vector<int32_t> tokens = iota(40);
        KvSequence seq;
        QVERIFY(advance(cache, seq, tokens, 40));
        QCOMPARE(cache.nHeldBlocks(seq, 0), 10);
        QVERIFY(seq.windowTable.empty());
        QCOMPARE(cache.heldBytes(seq), size_t(10) * cache.bytesPerBlock());
        cache.release(seq);
    }

    void tailRowsRoundTripThroughBothGroups() {
        KvCache cache(windowLayout(), 64);
        const std::vector<int32_t> tokens = iota(40);
        KvSequence seq;
        QVERIFY(advance(cache, seq, tokens, 22));
        auto backend = makeCpuReferenceBackend();
        for (int layer = 0; layer < 3; ++layer) {
            const float k[4] = {1.0f + layer, 2, 3, 4}, v[4] = {-1, -2, -3, -4.0f - layer};
            const int32_t pos[1] = {21};
            backend->kvWrite(cache.layerView(seq, layer), k, v, pos, 1);
        }
        const std::vector<uint8_t> packed = cache.packedRows(seq, 5, 2);
        QCOMPARE(packed.size(), cache.tailBytes(2));
        KvSequence other;
        QVERIFY(cache.reserve(other, 2));
        QVERIFY(cache.writeRows(other, 0, packed, 2, 2));
        for (int layer = 0; layer < 3; ++layer) {
            const PagedKvLayer view = cache.layerView(other, layer);
            QCOMPARE(f16ToF32(view.kBlocks[0][1 * 4 + 0]), 1.0f + layer);
            QCOMPARE(f16ToF32(view.vBlocks[0][1 * 4 + 3]), -4.0f - layer);
        }
        cache.release(other);
        cache.release(seq);
    }

    // A sequence of 23 positions (5 full blocks and a tail of 3) saved and restored into another
    // cache: the full group's blocks all travel, the window group's only where the window of the
    // tail's block start reads them, and the restored sequence holds the same rows and can go on.
    void snapshotRestoresTheLastWindow() {
        const KvChainRoot root{chainKey({}, std::vector<int32_t>{1})};
        const std::vector<int32_t> tokens = iota(40);
        auto backend = makeCpuReferenceBackend();
        KvCache cache(windowLayout(), 64, root);
        KvSequence seq;
        while (seq.nTokens < 23) {
            QVERIFY(cache.reserve(seq, seq.nTokens + 1));
            for (int layer = 0; layer < 3; ++layer) {
                const float x = float(seq.nTokens * 10 + layer);
                const float k[4] = {x, x + 1, x + 2, x + 3}, v[4] = {-x, -x - 1, -x - 2, -x - 3};
                backend->kvWrite(cache.layerView(seq, layer), k, v, &seq.nTokens, 1);
            }
            ++seq.nTokens;
            cache.publish(seq, tokens);
        }
        const std::span<const int32_t> held(tokens.data(), 23);
        const std::vector<KvBlockRecord> records = exportKvBlocks(cache, held, {}, &seq, held);
        QCOMPARE(records.size(), size_t(6));
        // The query at 20 (the tail block's start) reads from 15: window blocks 3 and 4, and the tail.
        for (size_t i = 0; i < 5; ++i)
            QCOMPARE(records[i].data.size(), i < 3 ? cache.bytesPerBlock(0) : cache.bytesPerBlock());
        QVERIFY(isKvTail(records[5], 4));

        KvCache other(windowLayout(), 64, root);
        KvRootInfo info;
        info.key = root.key;
        const KvImportResult imported = importKvBlocks(other, info, info, records, held);
        QVERIFY2(imported.refusal.empty(), imported.refusal.c_str());
        QCOMPARE(imported.nTokens, 20);
        QCOMPARE(imported.tailRows, 3);
        auto restored =
            restoreKvTail(other, held, imported.nBlocks, records[size_t(imported.tailRecord)], imported.tailRows);
        QVERIFY2(restored, restored ? "" : restored.error().message.c_str());
        QCOMPARE(restored->nTokens, 23);
        QVERIFY(other.resumable(*restored));
        for (int layer = 0; layer < 3; ++layer) {
            const PagedKvLayer a = cache.layerView(seq, layer), b = other.layerView(*restored, layer);
            for (int32_t p = layer == 0 ? 0 : 23 - 6; p < 23; ++p)  // what the next query reads
                for (int i = 0; i < 4; ++i) {
                    QCOMPARE(f16ToF32(b.kBlocks[p / 4][p % 4 * 4 + i]), f16ToF32(a.kBlocks[p / 4][p % 4 * 4 + i]));
                    QCOMPARE(f16ToF32(b.vBlocks[p / 4][p % 4 * 4 + i]), f16ToF32(a.vBlocks[p / 4][p % 4 * 4 + i]));
                }
        }
        QVERIFY(other.reserve(*restored, 24));
        other.release(*restored);
        cache.release(seq);
        // Saved without the window blocks (the window group's bytes cut off): nothing usable.
        std::vector<KvBlockRecord> fullOnly(records.begin(), records.begin() + 5);
        for (KvBlockRecord& r : fullOnly) {
            r.data.resize(cache.bytesPerBlock(0));
            r.checksum = kvChecksum(r.data);
        }
        KvCache third(windowLayout(), 64, root);
        const KvImportResult cut = importKvBlocks(third, info, info, fullOnly, held);
        QCOMPARE(cut.nTokens, 0);
        QVERIFY2(QString::fromStdString(cut.refusal).contains("sliding window"), cut.refusal.c_str());
    }
};

QTEST_APPLESS_MAIN(TestKvGroups)
#include "test_kv_groups.moc"

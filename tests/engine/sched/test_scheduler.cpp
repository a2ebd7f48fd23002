// The scheduler's plans, exactly, without a model: chunked prefill beside decode, cancellation,
// release of finished sequences, preemption and resume, prefix reuse, a request too large,
// speculative drafts on sampling chunks (budget, KV without preempting, rollback on complete).
#include <QtTest>
#include <numeric>

#include "engine/sched/scheduler.h"

using namespace hearth;
using Tokens = std::vector<int32_t>;

namespace {

Tokens range(int32_t from, int32_t n) {
    Tokens t(static_cast<size_t>(n));
    std::iota(t.begin(), t.end(), from);
    return t;
}

PlannedChunk chunk(SeqId seq, int32_t start, Tokens tokens, bool sample) {
    return {seq, start, std::move(tokens), sample};
}

// What a runner would do: every chunk ran; sampling chunks produced `token + seq`.
void runAll(Scheduler& s, const StepPlan& plan, int32_t token) {
    StepResult r;
    for (const PlannedChunk& c : plan.chunks)
        if (c.sample) r.sampled.push_back({c.seq, token + static_cast<int32_t>(c.seq)});
    s.complete(plan, r);
}

}  // namespace

class TestScheduler : public QObject {
    Q_OBJECT
private slots:
    void chunkedPrefillBesideDecode() {
        KvCache cache({1, 4, 4}, 64);
        Scheduler s(cache, {.tokenBudget = 8, .maxRunning = 4});
        const SeqId a = s.add({1, 2, 3}), b = s.add(range(10, 20));
        StepPlan p = s.schedule();
        QCOMPARE(p.admitted, (std::vector<SeqId>{a, b}));
        QCOMPARE(p.chunks, (std::vector<PlannedChunk>{chunk(a, 0, {1, 2, 3}, true), chunk(b, 0, range(10, 5), false)}));
        runAll(s, p, 100);  // a samples 101
        p = s.schedule();  // a's decode token does not wait for b's prompt: b gets one chunk
        QCOMPARE(p.chunks, (std::vector<PlannedChunk>{chunk(a, 3, {101}, true), chunk(b, 5, range(15, 8), false)}));
        runAll(s, p, 200);
        p = s.schedule();
        QCOMPARE(p.chunks, (std::vector<PlannedChunk>{chunk(a, 4, {201}, true), chunk(b, 13, range(23, 7), true)}));
        runAll(s, p, 300);
        QCOMPARE(s.tokens(b).back(), 302);
        QCOMPARE(s.kvSequence(a).blockTable, (std::vector<BlockId>{0, 5}));  // b took 1, 2, then 3, 4
    }

    void cancelledAndFinishedSequencesReleaseTheirBlocks() {
        KvCache cache({1, 4, 4}, 64);
        Scheduler s(cache, {.tokenBudget = 16, .maxRunning = 4});
        const SeqId a = s.add(range(1, 6)), b = s.add(range(50, 6));
        StepPlan p = s.schedule();
        runAll(s, p, 0);
        QCOMPARE(cache.pool().nUsed(), 4);
        s.cancel(b);
        p = s.schedule();
        QCOMPARE(p.cancelled, (std::vector<SeqId>{b}));
        QCOMPARE(p.chunks, (std::vector<PlannedChunk>{chunk(a, 6, {static_cast<int32_t>(a)}, true)}));
        QVERIFY(!s.contains(b));
        QCOMPARE(cache.pool().nUsed(), 2);
        runAll(s, p, 0);
        s.finish(a, false);
        QCOMPARE(cache.pool().nUsed(), 0);
        QVERIFY(s.idle());
        QVERIFY(s.schedule().chunks.empty());
    }

    void preemptsTheNewestAndRecomputesIt() {
        KvCache cache({1, 4, 4}, 8);  // 2 blocks
        Scheduler s(cache, {.tokenBudget = 8, .maxRunning = 4});
        const SeqId a = s.add({1, 2, 3}), b = s.add({4, 5, 6});
        runAll(s, s.schedule(), 10);  // a: [1,2,3,11], b: [4,5,6,12]
        runAll(s, s.schedule(), 20);  // both blocks full
        StepPlan p = s.schedule();  // a needs a block for position 4: b gives its up
        QCOMPARE(p.preempted, (std::vector<SeqId>{b}));
        QCOMPARE(p.chunks, (std::vector<PlannedChunk>{chunk(a, 4, {21}, true)}));
        QCOMPARE(s.kvSequence(a).blockTable, (std::vector<BlockId>{0, 1}));
        QCOMPARE(s.nWaiting(), 1);
        runAll(s, p, 30);
        s.finish(a, false);
        p = s.schedule();  // b comes back and recomputes everything it had
        QCOMPARE(p.chunks, (std::vector<PlannedChunk>{chunk(b, 0, {4, 5, 6, 12, 22}, true)}));
        QVERIFY(p.admitted.empty());  // not a first admission
        QCOMPARE(s.nPreemptions(b), 1);
    }

    void reusesCachedBlocksAndTheParkedSequence() {
        KvCache cache({1, 4, 4}, 64);
        Scheduler s(cache, {.tokenBudget = 64, .maxRunning = 4});
        const SeqId a = s.add(range(1, 10));
        runAll(s, s.schedule(), 40);  // a: positions 0..9 computed, blocks 0 and 1 published
        s.finish(a, false);
        Tokens bPrompt = range(1, 9);
        bPrompt.push_back(77);
        const SeqId b = s.add(bPrompt);  // shares 9 tokens with a: two whole blocks
        StepPlan p = s.schedule();
        QCOMPARE(p.chunks, (std::vector<PlannedChunk>{chunk(b, 8, {9, 77}, true)}));
        QCOMPARE(s.prefixHitTokens(b), 8);
        runAll(s, p, 60);
        s.finish(b, true);  // parked: positions 0..9 = bPrompt
        Tokens cPrompt = bPrompt;
        cPrompt.insert(cPrompt.end(), {62, 5});
        const SeqId c = s.add(cPrompt);  // continues b: all 10 positions, not just 2 blocks
        p = s.schedule();
        QCOMPARE(p.chunks, (std::vector<PlannedChunk>{chunk(c, 10, {62, 5}, true)}));
        QCOMPARE(s.prefixHitTokens(c), 10);
    }

    // KV restored from disk becomes the parked sequence unless the parked one already holds its
    // tokens (then restore is not even called); a failed restore leaves the parked one.
    void parkRestoredKeepsAParkedSequenceThatHoldsTheTokens() {
        KvCache cache({1, 4, 4}, 64);
        Scheduler s(cache, {.tokenBudget = 64, .maxRunning = 4});
        const SeqId a = s.add(range(1, 10));
        runAll(s, s.schedule(), 40);
        s.finish(a, true);  // parked: positions 0..9 = range(1, 10)
        int nRestores = 0;
        const auto restore = [&](int32_t nTokens) {
            return [&, nTokens]() -> Result<KvSequence> {
                ++nRestores;
                KvSequence kv;
                if (auto r = cache.reserve(kv, nTokens); !r) return std::unexpected(r.error());
                kv.nTokens = nTokens;
                return kv;
            };
        };
        const Result<bool> held = s.parkRestored(range(1, 6), restore(6));
        QVERIFY(held && !*held);  // the parked sequence holds these tokens already
        QCOMPARE(nRestores, 0);
        const auto broken = [] {
            return Result<KvSequence>(std::unexpected(Error{ErrorCode::InvalidFormat, "checksum"}));
        };
        const Result<bool> failed = s.parkRestored(range(1, 12), broken);  // more than the parked holds
        QVERIFY(!failed && failed.error().message == "checksum");
        QCOMPARE(s.parkedTokens().size(), size_t{10});
        const Tokens other = range(5, 7);
        const Result<bool> parked = s.parkRestored(other, restore(7));
        QVERIFY(parked && *parked);
        QCOMPARE(nRestores, 1);
        QCOMPARE(Tokens(s.parkedTokens().begin(), s.parkedTokens().end()), other);
        QCOMPARE(s.parkedKv()->nTokens, 7);
        QCOMPARE(cache.pool().nUsed(), 2);  // the restored sequence's blocks; the old parked one's released
    }

    // With a sliding window (per-group pools): a parked sequence that holds the tokens but not the
    // window it would go on with from their end is replaced by the restored copy, and one rolled
    // back further than its window is released rather than adopted (nothing there to reuse).
    void windowedSequencesParkAndAdoptOnlyWhereTheyCanGoOn() {
        KvLayout layout{2, 4, 4};
        layout.window = 6;
        layout.windowLayers = {false, true};
        KvCache cache(layout, 64);
        Scheduler s(cache, {.tokenBudget = 64, .maxRunning = 4});
        const SeqId a = s.add(range(1, 30));
        for (int step = 0; step < 4; ++step) runAll(s, s.schedule(), 40 + step);  // prefill, 3 decodes
        QCOMPARE(s.kvSequence(a).nTokens, 33);
        QCOMPARE(cache.nHeldBlocks(s.kvSequence(a), 0), 9);
        QCOMPARE(cache.nHeldBlocks(s.kvSequence(a), 1), 3);  // blocks 6..8: the window of position 28 on
        const Tokens aTokens = s.tokens(a);
        s.finish(a, true);
        int nRestores = 0;
        const auto restore = [&]() -> Result<KvSequence> {
            ++nRestores;
            KvSequence kv;
            if (auto r = cache.reserve(kv, 10); !r) return std::unexpected(r.error());
            kv.nTokens = 10;
            return kv;
        };
        const Tokens first10(aTokens.begin(), aTokens.begin() + 10);
        const Result<bool> parked = s.parkRestored(first10, restore);
        QVERIFY(parked && *parked);  // the old parked sequence lacks the window of position 10
        QCOMPARE(nRestores, 1);
        QCOMPARE(s.parkedKv()->nTokens, 10);
        QCOMPARE(s.parkRestored(Tokens(aTokens.begin(), aTokens.begin() + 9), restore).value(), false);
        QCOMPARE(nRestores, 1);

        // Park a long one again, then a prompt sharing only its first 13 tokens: adopting it would
        // need the window blocks of positions 8..12, released long ago, so it is released and
        // the prompt computed (no cached block continues with its window either).
        const SeqId b = s.add(range(1, 30));
        for (int step = 0; step < 4; ++step) runAll(s, s.schedule(), 40 + step);
        s.finish(b, true);
        Tokens cPrompt(aTokens.begin(), aTokens.begin() + 13);
        cPrompt.push_back(99);
        const SeqId c = s.add(cPrompt);
        const StepPlan p = s.schedule();
        QCOMPARE(p.chunks, (std::vector<PlannedChunk>{chunk(c, 0, cPrompt, true)}));
        QCOMPARE(s.prefixHitTokens(c), 0);
        QCOMPARE(s.parkedKv(), nullptr);
        runAll(s, p, 50);
        s.finish(c, false);
        QCOMPARE(cache.pool(0).nUsed(), 0);
        QCOMPARE(cache.pool(1).nUsed(), 0);
    }

    void draftsRideOnSamplingChunksAndRollBack() {
        KvCache cache({1, 4, 4}, 64);
        Scheduler s(cache, {.tokenBudget = 12, .maxRunning = 4});
        const SeqId a = s.add({1, 2, 3});
        std::vector<std::pair<SeqId, int32_t>> asked;
        const DraftSource drafts = [&](SeqId seq, std::span<const int32_t> context, int32_t room) {
            asked.emplace_back(seq, room);
            Tokens d = range(50, 20);  // more than fits: cut to room
            d.insert(d.begin(), context.back());
            return d;
        };
        StepPlan p = s.schedule(drafts);  // a: 3 prompt tokens + 9 drafts = the budget
        QCOMPARE(asked, (std::vector<std::pair<SeqId, int32_t>>{{a, 9}}));
        QCOMPARE(p.chunks, (std::vector<PlannedChunk>{{a, 0, {1, 2, 3, 3, 50, 51, 52, 53, 54, 55, 56, 57}, true, 10}}));
        QCOMPARE(p.chunks[0].nDrafts(), 9);
        QCOMPARE(cache.pool().nUsed(), 3);
        s.complete(p, {{{a, 99, {3, 50}}}});  // two drafts kept, then 99
        QCOMPARE(s.tokens(a), (Tokens{1, 2, 3, 3, 50, 99}));
        QCOMPARE(s.kvSequence(a).nTokens, 5);
        QCOMPARE(cache.pool().nUsed(), 2);  // the third block's positions were rolled back
        const SeqId b = s.add(range(10, 20));
        asked.clear();
        p = s.schedule(drafts);  // b's prompt takes the whole budget: no drafts for a
        QVERIFY(asked.empty());
        QCOMPARE(p.chunks, (std::vector<PlannedChunk>{chunk(a, 5, {99}, true), chunk(b, 0, range(10, 12), false)}));
        s.complete(p, {{{a, 7, {}}}});
        p = s.schedule(drafts);  // b's last 8 tokens; what is left (4) goes to a's drafts first
        QCOMPARE(asked, (std::vector<std::pair<SeqId, int32_t>>{{a, 4}}));
        QCOMPARE(p.chunks,
                 (std::vector<PlannedChunk>{{a, 6, {7, 7, 50, 51, 52}, true, 5}, chunk(b, 12, range(22, 8), true)}));
        s.complete(p, {{{a, 8, {7, 50, 51, 52}}, {b, 9}}});  // all kept: a bonus token
        QCOMPARE(s.tokens(a), (Tokens{1, 2, 3, 3, 50, 99, 7, 7, 50, 51, 52, 8}));
        QCOMPARE(s.kvSequence(a).nTokens, 11);
        QCOMPARE(s.tokens(b).back(), 9);
    }

    void draftsNeverPreempt() {
        KvCache cache({1, 4, 4}, 8);  // 2 blocks
        Scheduler s(cache, {.tokenBudget = 16, .maxRunning = 4});
        const SeqId a = s.add({1, 2, 3});
        const StepPlan p = s.schedule([](SeqId, std::span<const int32_t>, int32_t) { return range(50, 8); });
        QCOMPARE(p.chunks, (std::vector<PlannedChunk>{chunk(a, 0, {1, 2, 3}, true)}));  // 11 positions do not fit
        QVERIFY(p.preempted.empty());
    }

    void aRequestLargerThanTheCacheFails() {
        KvCache cache({1, 4, 4}, 4);
        Scheduler s(cache, {.tokenBudget = 16, .maxRunning = 4});
        const SeqId a = s.add(range(1, 6));
        const StepPlan p = s.schedule();
        QCOMPARE(p.failed, (std::vector<SeqId>{a}));
        QVERIFY(p.chunks.empty());
        QVERIFY(s.idle());
    }
};

QTEST_APPLESS_MAIN(TestScheduler)
#include "test_scheduler.moc"

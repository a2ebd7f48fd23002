// HistoryDrafter on a hand-made history: the linear draft (the likeliest continuation, ties to
// the newest occurrence, cut below minProb) and the tree (every continuation merged, a node's
// score the summed probability of the continuations through it); MixedDrafter (the window's
// Default) taking both sources in turns, the longer match first.
#include <QtTest>

#include "engine/spec/history_drafter.h"
#include "engine/spec/mixed_drafter.h"

using namespace hearth;

namespace {

using Seq = std::vector<int32_t>;

SuffixIndex history() {
    SuffixIndex index;
    index.add(Seq{1, 2, 3, 4, 5});
    index.add(Seq{1, 2, 3, 9, 9});
    index.add(Seq{1, 2, 3, 4, 6});
    return index;
}

}  // namespace

class TestHistoryDrafter : public QObject {
    Q_OBJECT
private slots:
    void linear() {
        const SuffixIndex index = history();
        const SpecSampler sampler{SamplingParams{}};
        HistoryDrafter drafter(index, {});
        auto d = drafter.propose(Seq{7, 1, 2, 3}, 8, sampler);
        QVERIFY(d.has_value());
        QCOMPARE(d->tokens, (Seq{4, 6}));  // 4 in two of three; then 5 or 6 once each: the newest
        HistoryDrafter cautious(index, {.minMatch = 2, .minProb = 0.5, .maxContinuations = 4});
        QCOMPARE(cautious.propose(Seq{7, 1, 2, 3}, 8, sampler)->tokens, (Seq{4}));  // 4 then 6: 1/3 < 0.5
        HistoryDrafter strict(index, {.minMatch = 4, .minProb = 0.1, .maxContinuations = 4});
        QVERIFY(strict.propose(Seq{7, 1, 2, 3}, 8, sampler)->tokens.empty());  // a 3-token match only
    }

    void tree() {
        const SuffixIndex index = history();
        const SpecSampler sampler{SamplingParams{}};
        HistoryDrafter drafter(index, {});
        auto t = drafter.proposeTree(Seq{7, 1, 2, 3}, 16, 4, sampler);
        QVERIFY(t.has_value());
        QVERIFY(t->valid());
        QCOMPARE(t->size(), size_t(5));  // 4 -> {5, 6}, 9 -> 9
        const int32_t four = t->child(-1, 4), nine = t->child(-1, 9);
        QVERIFY(four >= 0 && nine >= 0);
        QVERIFY(t->child(four, 5) >= 0 && t->child(four, 6) >= 0 && t->child(nine, 9) >= 0);
        QVERIFY(std::abs(t->score[size_t(four)] - 2.0 / 3.0) < 1e-9);
        QVERIFY(std::abs(t->score[size_t(nine)] - 1.0 / 3.0) < 1e-9);
        QCOMPARE(t->firstPath().tokens.front(), 4);
        // Room for two nodes: the best continuation's.
        auto small = drafter.proposeTree(Seq{7, 1, 2, 3}, 2, 4, sampler);
        QCOMPARE(small->size(), size_t(2));
        QVERIFY(small->isChain());
        QCOMPARE(small->tokens.front(), 4);
    }

    void mixed() {
        const SuffixIndex index = history();
        const SpecSampler sampler{SamplingParams{}};
        MixedDrafter drafter(2, 4, &index);
        // The history matches 1 2 3 (three tokens), the context's own n-gram only 2 3: the
        // history's continuations lead, the context's 8 1 2 3 follows as the second branch.
        const Seq context{9, 2, 3, 8, 1, 2, 3};
        auto t = drafter.proposeTree(context, 16, 4, sampler);
        QVERIFY(t.has_value());
        QVERIFY(t->valid());
        QCOMPARE(t->firstPath().tokens, (Seq{4, 6}));
        const int32_t eight = t->child(-1, 8);
        QVERIFY(eight > 0);
        QCOMPARE(t->pathTo(t->child(t->child(t->child(eight, 1), 2), 3)).size(), size_t(4));
        QCOMPARE(drafter.propose(context, 8, sampler)->tokens, (Seq{4, 6}));
        // The context alone matching longer (4 tokens, beyond the history's): the n-gram leads.
        const Seq own{5, 1, 2, 3, 7, 5, 1, 2, 3};
        QCOMPARE(drafter.propose(own, 8, sampler)->tokens, (Seq{7, 5, 1, 2, 3}));
        // Without an index: the n-gram drafter's tree.
        MixedDrafter alone(2, 4, nullptr);
        NGramDrafter ngram(2, 4);
        const DraftTree a = alone.proposeTree(context, 16, 4, sampler).value();
        const DraftTree b = ngram.proposeTree(context, 16, 4, sampler).value();
        QCOMPARE(a.tokens, b.tokens);
        QCOMPARE(a.parents, b.parents);
        QVERIFY(alone.propose(Seq{7, 1, 2, 3}, 8, sampler)->tokens.empty());
    }
};

QTEST_GUILESS_MAIN(TestHistoryDrafter)
#include "test_history_drafter.moc"

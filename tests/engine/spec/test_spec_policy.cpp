// SpecPolicy with measured times fed in (label unit): plain speed is probed first, speculation
// switches off when its ms per output token exceed plain decoding's, back on after enough
// right n-gram guesses; the draft length follows acceptance.
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "engine/spec/spec_policy.h"

using namespace hearth;

class TestSpecPolicy : public QObject {
    Q_OBJECT
private slots:
    void probesPlainSpeedFirst() {
        SpecPolicy p({.maxDraft = 8});
        QCOMPARE(p.draftLength(), 0);
        p.recordStep(0, 0, 1, 10.0);
        QCOMPARE(p.draftLength(), 0);
        p.recordStep(0, 0, 1, 10.0);
        QCOMPARE(p.draftLength(), 4);
    }

    void switchesOffWhenSlowerAndBackOnWhenRepetitive() {
        SpecPolicy p({.maxDraft = 8, .window = 4});
        p.recordStep(0, 0, 1, 10.0);
        p.recordStep(0, 0, 1, 10.0);
        for (int i = 0; i < 4; ++i) p.recordStep(3, 0, 1, 13.0);  // 13 ms per token > 10
        QVERIFY(!p.active());
        QCOMPARE(p.nSwitchedOff(), 1);
        QCOMPARE(p.draftLength(), 0);
        for (int i = 0; i < 12; ++i) p.recordGuess(i % 3 == 0);  // 4 of 12 right: not repetitive
        QVERIFY(!p.active());
        for (int i = 0; i < 6; ++i) p.recordGuess(true);
        QVERIFY(p.active());
        QCOMPARE(p.nSwitchedOn(), 1);
        QVERIFY(p.draftLength() > 0);
    }

    void staysOnWhenFaster() {
        SpecPolicy p({.maxDraft = 8, .window = 4});
        p.recordStep(0, 0, 1, 10.0);
        p.recordStep(0, 0, 1, 10.0);
        for (int i = 0; i < 40; ++i) p.recordStep(4, 3, 4, 14.0);  // 3.5 ms per token
        QVERIFY(p.active());
        QCOMPARE(p.nSwitchedOff(), 0);
    }

    void neverOffWhenNotAllowed() {
        SpecPolicy p({.maxDraft = 8, .allowSwitchOff = false, .window = 4});
        QCOMPARE(p.draftLength(), 4);  // no plain probes either
        for (int i = 0; i < 40; ++i) p.recordStep(4, 0, 1, 100.0);
        QVERIFY(p.active());
        QVERIFY(p.draftLength() > 0);
    }

    // Tree width: steps cost 10 ms + rowMs per row (the line the policy fits); branches that
    // add more tokens than their rows cost widen the tree, ones that add none narrow it to a
    // chain, and a probe now and then measures them again.
    void treeWidthFollowsGainAndRowCost() {
        const auto run = [](double rowCost, int gainEvery) {
            SpecPolicy p({.maxDraft = 4, .window = 1000, .maxTreeNodes = 16, .treeWindow = 8, .treeProbeEvery = 4});
            p.recordStep(0, 0, 1, 10.0 + rowCost);
            p.recordStep(0, 0, 1, 10.0 + rowCost);
            for (int i = 0; i < 64; ++i) {
                const int32_t nodes = p.treeNodes();
                const int32_t first = std::min(nodes, p.draftLength());
                const int32_t gain = nodes > first && i % gainEvery == 0 ? 1 : 0;
                p.recordStep(nodes, 1 + gain, 2 + gain, 10.0 + rowCost * (1 + nodes), false);
                p.recordTree(nodes, first, gain);
            }
            return p;
        };
        const SpecPolicy cheap = run(0.1, 1);  // a token per step for cheap rows: widest
        QCOMPARE(cheap.treeWidth(), 16);
        QVERIFY(std::abs(cheap.rowMs() - 0.1) < 1e-6);
        const SpecPolicy useless = run(0.1, 1000000);  // branches never kept: a chain
        QCOMPARE(useless.treeWidth(), 0);
        const SpecPolicy dear = run(8.0, 4);  // a token every 4 steps, rows costing most of a step
        QCOMPARE(dear.treeWidth(), 0);
        // A fresh policy drafts chains, and probes a tree of width 2 after treeProbeEvery of them.
        SpecPolicy fresh({.maxDraft = 4, .window = 1000, .maxTreeNodes = 16, .treeProbeEvery = 4});
        fresh.recordStep(0, 0, 1, 10.0);
        fresh.recordStep(0, 0, 1, 10.0);
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(fresh.treeWidth(), 0);
            QCOMPARE(fresh.treeNodes(), fresh.draftLength());
            fresh.recordStep(fresh.treeNodes(), 0, 1, 10.0);
            fresh.recordTree(fresh.treeNodes(), fresh.treeNodes(), 0);
        }
        QCOMPARE(fresh.treeNodes(), fresh.draftLength() + 2);
        SpecPolicy fixed({.maxDraft = 4, .allowSwitchOff = false, .maxTreeNodes = 12});
        QCOMPARE(fixed.treeNodes(), 12);  // no switching: the widest tree every step
        SpecPolicy none({.maxDraft = 4, .allowSwitchOff = false});
        QCOMPARE(none.treeNodes(), 4);  // no trees: the chain
    }

    void draftLengthFollowsAcceptance() {
        SpecPolicy p({.maxDraft = 8, .allowSwitchOff = false});
        QCOMPARE(p.draftLength(), 4);
        p.recordStep(4, 4, 5, 1.0);
        QCOMPARE(p.draftLength(), 6);
        p.recordStep(6, 6, 7, 1.0);
        QCOMPARE(p.draftLength(), 8);
        p.recordStep(8, 8, 9, 1.0);
        QCOMPARE(p.draftLength(), 8);  // capped
        p.recordStep(8, 2, 3, 1.0);
        QCOMPARE(p.draftLength(), 3);  // just past the last kept token
        p.recordStep(3, 0, 1, 1.0);
        QCOMPARE(p.draftLength(), 1);
    }
};

QTEST_GUILESS_MAIN(TestSpecPolicy)
#include "test_spec_policy.moc"

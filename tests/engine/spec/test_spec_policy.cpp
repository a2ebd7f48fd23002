// SpecPolicy with measured times fed in (label unit): plain speed is probed first, speculation
// switches off when its ms per output token exceed plain decoding's, back on after enough
// right n-gram guesses; the draft length follows acceptance.
#include <QtTest>

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

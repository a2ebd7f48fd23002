// Each sampler stage on fixed logits, and the chain's determinism under a seed.
#include <QtTest>
#include <vector>

#include "engine/sample/sampler.h"

using namespace hearth;

class TestSampler : public QObject {
    Q_OBJECT
private slots:
    void argmaxLowerIdWinsTie() {
        const std::vector<float> logits{1.0f, 3.0f, 3.0f, 2.0f};
        QCOMPARE(argmax(logits), 1);
    }
    void topKKeepsHighestSorted() {
        std::vector<TokenLogit> c{{0, 1.0f}, {1, 5.0f}, {2, 3.0f}, {3, 5.0f}, {4, -1.0f}};
        QCOMPARE(sampleTopK(c, 3), size_t{3});
        QCOMPARE(c[0].id, 1);  // tie at 5.0: lower id first
        QCOMPARE(c[1].id, 3);
        QCOMPARE(c[2].id, 2);
        QCOMPARE(sampleTopK(c, 0), c.size());
    }
    void topPKeepsSmallestPrefixReachingP() {
        // probabilities 0.5, 0.25, 0.125, 0.125 (logits ln of them)
        std::vector<TokenLogit> c{{0, std::log(0.5f)}, {1, std::log(0.25f)}, {2, std::log(0.125f)}, {3, std::log(0.125f)}};
        QCOMPARE(sampleTopP(c, 0.5f), size_t{1});
        QCOMPARE(sampleTopP(c, 0.7f), size_t{2});
        QCOMPARE(sampleTopP(c, 1.0f), size_t{4});
    }
    void minPDropsUnlikely() {
        std::vector<TokenLogit> c{{0, std::log(0.6f)}, {1, std::log(0.3f)}, {2, std::log(0.1f)}};
        QCOMPARE(sampleMinP(c, 0.4f), size_t{2});  // 0.1 < 0.4 * 0.6
        QCOMPARE(sampleMinP(c, 0.0f), size_t{3});
    }
    void temperatureScales() {
        std::vector<TokenLogit> c{{0, 2.0f}, {1, -4.0f}};
        applyTemperature(c, 2.0f);
        QCOMPARE(c[0].logit, 1.0f);
        QCOMPARE(c[1].logit, -2.0f);
    }
    void seededDrawIsRepeatableAndFollowsProbabilities() {
        const std::vector<float> logits{0.0f, std::log(3.0f), -100.0f};
        SamplingParams p{1.0f, 0, 1.0f, 0.0f, 42};
        Sampler a(p), b(p);
        int counts[3] = {0, 0, 0};
        for (int i = 0; i < 4000; ++i) {
            const int32_t x = a.sample(logits);
            QCOMPARE(b.sample(logits), x);
            counts[x]++;
        }
        QCOMPARE(counts[2], 0);
        QVERIFY(counts[1] > 2800 && counts[1] < 3200);  // p = 0.75
    }
    void validateRejectsOutOfRange() {
        QVERIFY(!validate(SamplingParams{-1.0f, 40, 0.9f, 0.0f, 0}));
        QVERIFY(!validate(SamplingParams{0.8f, -1, 0.9f, 0.0f, 0}));
        QVERIFY(!validate(SamplingParams{0.8f, 40, 0.0f, 0.0f, 0}));
        QVERIFY(!validate(SamplingParams{0.8f, 40, 0.9f, 1.5f, 0}));
        QVERIFY(!validate(SamplingParams{std::nanf(""), 40, 0.9f, 0.0f, 0}));
        QVERIFY(validate(SamplingParams{}));
    }
};

QTEST_APPLESS_MAIN(TestSampler)
#include "test_sampler.moc"

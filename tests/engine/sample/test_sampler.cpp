// Each sampler stage on fixed logits; the drawn distribution against the intended one (chi^2,
// fixed seed); seed reproducibility; validate()'s range checks.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "engine/sample/sampler.h"
#include "engine/spec/spec_sampler.h"

using namespace hearth;
using Cands = std::vector<TokenLogit>;

namespace {

Cands inIdOrder(const std::vector<float>& logits) {
    Cands c;
    for (size_t i = 0; i < logits.size(); ++i) c.push_back({static_cast<int32_t>(i), logits[i]});
    return c;
}

std::vector<int32_t> ids(const Cands& c, size_t n) {
    std::vector<int32_t> out;
    for (size_t i = 0; i < n; ++i) out.push_back(c[i].id);
    return out;
}

// Pearson's chi^2 of counts of draws against probabilities.
double chiSquare(const std::vector<int>& counts, const std::vector<double>& probs, int nDraws) {
    double chi2 = 0.0;
    for (size_t i = 0; i < probs.size(); ++i) {
        const double expected = probs[i] * nDraws;
        chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
    }
    return chi2;
}

std::vector<int> drawCounts(const SamplingParams& p, const std::vector<float>& logits, int nDraws) {
    Sampler sampler(p);
    std::vector<int> counts(logits.size(), 0);
    for (int i = 0; i < nDraws; ++i) counts[static_cast<size_t>(sampler.sample(logits))]++;
    return counts;
}

bool failsMentioning(const SamplingParams& p, const char* word, int32_t nVocab = 0) {
    const auto r = validate(p, nVocab);
    return !r && r.error().code == ErrorCode::InvalidArgument && r.error().message.find(word) != std::string::npos;
}

}  // namespace

class TestSampler : public QObject {
    Q_OBJECT
private slots:
    void argmaxLowerIdWinsTie() {
        const std::vector<float> logits{1.0f, 3.0f, 3.0f, 2.0f};
        QCOMPARE(argmax(logits), 1);
        const Cands c{{7, 3.0f}, {4, 3.0f}, {9, 1.0f}};
        QCOMPARE(argmax(std::span<const TokenLogit>(c)), 4);
    }
    // The two-pass argmax gives the index of the plain scan (best = i whenever logits[i] >
    // logits[best]) on random lengths (tails of every size past the 16 lanes) drawn from a few
    // values, so ties are common, with -0/+0, infinities and NaNs mixed in (a NaN first: 0).
    void argmaxEqualsTheScan() {
        const auto scan = [](const std::vector<float>& v) {
            size_t best = 0;
            for (size_t i = 1; i < v.size(); ++i)
                if (v[i] > v[best]) best = i;
            return static_cast<int32_t>(best);
        };
        const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
        const float pool[] = {-0.0f, 0.0f, 1.5f, -2.0f, 3.25f, 3.25f, -inf, inf, nan, -7.0f};
        std::mt19937 rng(3);
        for (int trial = 0; trial < 4000; ++trial) {
            std::vector<float> v(std::uniform_int_distribution<size_t>(1, 70)(rng));
            const int kinds = trial % 3 == 0 ? 6 : 10;  // a third without infinities and NaNs
            for (float& x : v) x = pool[std::uniform_int_distribution<int>(0, kinds - 1)(rng)];
            QCOMPARE(argmax(v), scan(v));
        }
        QCOMPARE(argmax(std::vector<float>{nan, 1.0f, 2.0f}), 0);
        QCOMPARE(argmax(std::vector<float>{-0.0f, 0.0f}), 0);
        QCOMPARE(argmax(std::vector<float>{0.0f, -0.0f}), 0);
    }
    // topKCandidates (the k best picked straight from the logits) leaves the candidates of the
    // whole chain over a candidate per id — biases, penalties, sampleTopK — bit for bit: random
    // lengths (block tails of every size), logits from a few values (ties at the k-th place),
    // ±0, infinities, NaNs (the whole chain runs), biases and penalty windows touching ids in and
    // out of the vocabulary, k from 1 past the vocabulary.
    void topKCandidatesEqualTheWholeChain() {
        const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
        const float pool[] = {-0.0f, 0.0f, 1.5f, -2.0f, 3.25f, 3.25f, 0.75f, -7.0f, 2.0f, -inf, inf, nan};
        std::mt19937 rng(5);
        const auto between = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        for (int trial = 0; trial < 3000; ++trial) {
            std::vector<float> logits(static_cast<size_t>(between(1, trial % 10 == 0 ? 700 : 90)));
            const int kinds = trial % 4 == 0 ? 12 : trial % 4 == 1 ? 11 : 9;  // NaNs in a quarter
            for (float& x : logits) x = pool[between(0, kinds - 1)];
            const int n = static_cast<int>(logits.size());
            SamplingParams p;
            const int ks[] = {1, 2, 3, 5, 16, 40, n - 1, n, n + 3, 0};
            p.topK = std::max(0, ks[between(0, 9)]);
            for (int b = between(0, 3); b > 0; --b)
                p.logitBias.push_back({between(0, n + 2), b == 1 && trial % 5 == 0 ? -inf : 0.5f * between(-6, 6)});
            if (trial % 2 == 0) {
                p.repeatPenalty = 1.3f;
                p.presencePenalty = 0.25f * between(-2, 2);
                p.frequencyPenalty = 0.25f * between(-2, 2);
                p.repeatLastN = between(-1, 8);
            }
            std::vector<int32_t> history(static_cast<size_t>(between(0, 12)));
            for (int32_t& id : history) id = between(0, n + 1);
            Cands whole = inIdOrder(logits);
            applyLogitBias(whole, p.logitBias);
            if (penaltiesActive(p))
                applyPenalties(whole, penaltyWindow(history, p.repeatLastN), p.repeatPenalty, p.presencePenalty,
                               p.frequencyPenalty);
            whole.resize(sampleTopK(whole, p.topK));
            std::vector<TokenLogit> storage;
            const std::span<TokenLogit> got = topKCandidates(logits, p, history, storage);
            QCOMPARE(got.size(), whole.size());
            for (size_t i = 0; i < whole.size(); ++i) {
                QCOMPARE(got[i].id, whole[i].id);
                QVERIFY(std::memcmp(&got[i].logit, &whole[i].logit, sizeof(float)) == 0 ||
                        (std::isnan(got[i].logit) && std::isnan(whole[i].logit)));
            }
        }
    }
    // Sampler::sampleTop, given a row's first candidatesNeeded() logits (Backend::topKRows'
    // order), chooses as Sampler::sample does from the whole row, draw for draw: greedy and
    // sampled, biases that lower or ban, penalties >= 1 over windows holding the row's best ids
    // (each step's chosen tokens get the next row's highest logits, so the penalties reorder the
    // top), ties and ±0. A raising bias or penalty, top-k off, or more than the cap asks for the
    // whole row (0).
    void sampleTopChoosesAsSample() {
        const float inf = std::numeric_limits<float>::infinity();
        const float pool[] = {-0.0f, 0.0f, 1.5f, -2.0f, 3.25f, 0.75f, -7.0f, 2.0f, 4.5f};
        std::mt19937 rng(11);
        const auto between = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        int fromTop = 0, whole = 0;
        for (int trial = 0; trial < 400; ++trial) {
            const int n = between(60, 700);
            SamplingParams p;
            p.seed = static_cast<uint64_t>(trial);
            p.temperature = trial % 3 == 0 ? 0.0f : 0.8f;
            const int ks[] = {1, 2, 5, 40, 0};
            p.topK = ks[between(0, 4)];
            p.topP = trial % 2 == 0 ? 0.95f : 1.0f;
            p.minP = trial % 4 == 0 ? 0.05f : 0.0f;
            bool raises = false;
            for (int b = between(0, 3); b > 0; --b) {
                const float bias = b == 1 && trial % 5 == 0 ? -inf : 0.5f * between(-6, trial % 7 == 0 ? 2 : 0);
                raises = raises || bias > 0.0f;
                p.logitBias.push_back({between(0, n - 1), bias});
            }
            if (trial % 4 != 3) {
                const float repeats[] = {1.0f, 1.1f, 1.5f, 0.9f};
                p.repeatPenalty = repeats[between(0, trial % 11 == 0 ? 3 : 2)];
                p.presencePenalty = 0.25f * between(trial % 13 == 0 ? -1 : 0, 2);
                p.frequencyPenalty = 0.25f * between(0, 2);
                p.repeatLastN = between(-1, 16);
                raises = raises || (penaltiesActive(p) && (p.repeatPenalty < 1.0f || p.presencePenalty < 0.0f));
            }
            Sampler whole_(p), top_(p);
            std::vector<int32_t> prompt(static_cast<size_t>(between(0, 10)));
            for (int32_t& id : prompt) id = between(0, n - 1);
            whole_.observe(prompt);
            top_.observe(prompt);
            std::vector<int32_t> recent = prompt;
            for (int t = 0; t < 30; ++t) {
                std::vector<float> logits(static_cast<size_t>(n));
                for (float& x : logits)
                    x = pool[between(0, 8)] + (trial % 2 == 0 ? 0.0f : 0.001f * static_cast<float>(between(0, 40)));
                for (size_t i = recent.size() > 6 ? recent.size() - 6 : 0; i < recent.size(); ++i)
                    logits[static_cast<size_t>(recent[i])] = 6.0f + 0.5f * static_cast<float>(i % 3);
                const int32_t needed = top_.candidatesNeeded(n, 256);
                const bool mayUseTop = !raises && (p.temperature <= 0.0f || p.topK > 0);
                if (!mayUseTop) QCOMPARE(needed, 0);
                int32_t got;
                if (needed > 0) {
                    std::vector<TokenLogit> first = inIdOrder(logits);
                    std::stable_sort(first.begin(), first.end(),
                                     [](const TokenLogit& a, const TokenLogit& b) { return a.logit > b.logit; });
                    first.resize(static_cast<size_t>(needed));
                    got = top_.sampleTop(first);
                    ++fromTop;
                } else {
                    got = top_.sample(logits);
                    ++whole;
                }
                const int32_t want = whole_.sample(logits);
                if (got != want)
                    QFAIL(qPrintable(QString("trial %1 step %2: %3 from %4 first logits, %5 from the row")
                                         .arg(trial)
                                         .arg(t)
                                         .arg(got)
                                         .arg(needed)
                                         .arg(want)));
                recent.push_back(want);
            }
        }
        qInfo("%d choices from the first logits, %d from the whole row", fromTop, whole);
        QVERIFY(fromTop > 6000 && whole > 1000);
        SamplingParams wide;
        wide.topK = 250;
        wide.repeatPenalty = 1.1f;
        Sampler s(wide);
        s.observe(std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7});
        QCOMPARE(s.candidatesNeeded(1000, 256), 0);  // 257 wanted: over the cap
        QCOMPARE(s.candidatesNeeded(257, 1000), 0);  // all of the vocabulary
        QCOMPARE(s.candidatesNeeded(1000, 257), 257);
    }
    // SpecSampler over a verify step's rows given as their first logits (TargetRow::first, as many
    // as candidatesNeeded(.., nDrafts) asked before the step) gives each row's greedy token and
    // distribution as over the whole rows, while the drafts are pushed row by row: the drafts lead
    // each later row's raw logits and fall behind once penalised, so the penalties the step adds
    // reorder its top (without the nDrafts allowance it fails).
    void specRowsFromFirstLogits() {
        std::mt19937 rng(21);
        const auto between = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        int compared = 0;
        for (int trial = 0; trial < 300; ++trial) {
            const int n = between(80, 500);
            SamplingParams p;
            p.seed = static_cast<uint64_t>(trial);
            p.temperature = trial % 2 == 0 ? 0.0f : 0.7f;
            p.topK = trial % 3 == 0 ? 1 : 8;
            p.repeatPenalty = 1.5f;
            p.presencePenalty = 1.0f;
            p.repeatLastN = 32;
            SpecSampler whole(p), first(p);
            std::vector<int32_t> prompt(static_cast<size_t>(between(1, 3)));
            for (int32_t& id : prompt) id = between(0, n - 1);
            whole.observe(prompt), first.observe(prompt);
            const int nDrafts = between(1, 6);
            const int32_t k = first.candidatesNeeded(n, 256, nDrafts);
            QVERIFY(k > 0);
            std::vector<std::vector<float>> rows(static_cast<size_t>(nDrafts + 1), std::vector<float>(size_t(n)));
            std::vector<int32_t> drafts;
            for (auto& row : rows) {
                for (float& x : row) x = 0.01f * static_cast<float>(between(0, 400));
                // The drafts so far lead the row, and fall behind the others once penalised.
                for (size_t d = 0; d < drafts.size(); ++d)
                    row[size_t(drafts[d])] = 4.1f + 0.05f * static_cast<float>(d);
                drafts.push_back(static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin()));
            }
            for (int i = 0; i <= nDrafts; ++i) {
                std::vector<TokenLogit> top = inIdOrder(rows[size_t(i)]);
                std::stable_sort(top.begin(), top.end(),
                                 [](const TokenLogit& a, const TokenLogit& b) { return a.logit > b.logit; });
                top.resize(static_cast<size_t>(k));
                if (p.temperature <= 0.0f) {
                    QCOMPARE(first.greedyToken(TargetRow::first(top)), whole.greedyToken(rows[size_t(i)]));
                } else {
                    const std::vector<TokenProb> a = first.distribution(TargetRow::first(top)),
                                                 b = whole.distribution(rows[size_t(i)]);
                    QCOMPARE(a.size(), b.size());
                    for (size_t j = 0; j < a.size(); ++j) QVERIFY(a[j].id == b[j].id && a[j].p == b[j].p);
                }
                ++compared;
                first.push(drafts[size_t(i)]), whole.push(drafts[size_t(i)]);
            }
        }
        qInfo("%d rows compared", compared);
    }
    // With top-k off every candidate is sorted (a radix sort where they come in id order without
    // NaNs): the order a heap sort by (logit descending, id ascending) gives, on vocabularies of
    // 257 to 3,000 ids drawn from a few values (ties everywhere), ±0 and infinities, and with NaNs
    // (the heap sort itself runs) or out of id order.
    void sortAllEqualsTheHeapSort() {
        const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
        const float pool[] = {-0.0f, 0.0f, 1.5f, -2.0f, 3.25f, 1e-30f, -1e-30f, 7.0e5f, -7.0f, inf, -inf, nan};
        const auto ranks = [](const TokenLogit& a, const TokenLogit& b) {
            return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
        };
        std::mt19937 rng(9);
        for (int trial = 0; trial < 300; ++trial) {
            const int n = std::uniform_int_distribution<int>(257, 3000)(rng);
            const int kinds = trial % 5 == 0 ? 12 : 11;  // NaNs in a fifth
            std::vector<float> logits(static_cast<size_t>(n));
            for (float& x : logits) x = pool[std::uniform_int_distribution<int>(0, kinds - 1)(rng)];
            if (trial % 3 == 0)
                for (float& x : logits) x += 0.001f * static_cast<float>(std::uniform_int_distribution<int>(0, 50)(rng));
            Cands c = inIdOrder(logits);
            if (trial % 7 == 0) std::swap(c[1], c[2]);  // not in id order
            Cands want = c;
            std::partial_sort(want.begin(), want.end(), want.end(), ranks);
            QCOMPARE(sampleTopK(c, 0), c.size());
            for (size_t i = 0; i < c.size(); ++i) {
                QCOMPARE(c[i].id, want[i].id);
                QVERIFY(std::memcmp(&c[i].logit, &want[i].logit, sizeof(float)) == 0);
            }
        }
    }
    void logitBiasAddsAndBans() {
        Cands c = inIdOrder({1.0f, 2.0f, 3.0f});
        const LogitBias biases[] = {{2, -1.5f}, {0, -std::numeric_limits<float>::infinity()}, {7, 5.0f}};
        applyLogitBias(c, biases);  // id 7 is not a candidate: ignored
        QVERIFY(std::isinf(c[0].logit) && c[0].logit < 0);
        QCOMPARE(c[1].logit, 2.0f);
        QCOMPARE(c[2].logit, 1.5f);
        Cands shuffled{{2, 3.0f}, {0, 1.0f}, {1, 2.0f}};  // not in id order: found by search
        const LogitBias one[] = {{1, 0.25f}};
        applyLogitBias(shuffled, one);
        QCOMPARE(shuffled[2].logit, 2.25f);
    }
    void penaltiesFollowLlamaCppSemantics() {
        Cands c = inIdOrder({2.0f, -1.0f, 0.5f, 1.0f});
        const int32_t window[] = {0, 1, 0, 3};
        applyPenalties(c, window, 2.0f, 0.5f, 0.25f);
        QCOMPARE(c[0].logit, 0.0f);  // 2 / 2 - (2 * 0.25 + 0.5)
        QCOMPARE(c[1].logit, -2.75f);  // -1 * 2 - (0.25 + 0.5)
        QCOMPARE(c[2].logit, 0.5f);  // absent: unchanged
        QCOMPARE(c[3].logit, -0.25f);  // 1 / 2 - 0.75
    }
    void topKKeepsHighestSorted() {
        Cands c{{0, 1.0f}, {1, 5.0f}, {2, 3.0f}, {3, 5.0f}, {4, -1.0f}};
        QCOMPARE(sampleTopK(c, 3), size_t{3});
        QCOMPARE(ids(c, 3), (std::vector<int32_t>{1, 3, 2}));  // tie at 5.0: lower id first
        QCOMPARE(sampleTopK(c, 0), c.size());
        QCOMPARE(ids(c, 5), (std::vector<int32_t>{1, 3, 2, 0, 4}));
    }
    void typicalPKeepsTokensNearTheEntropy() {
        // p = 0.5, 0.2, 0.2, 0.1; H = 1.2206 nats; |surprisal - H| = 0.528, 0.389, 0.389, 1.082
        const Cands sorted{{0, std::log(0.5f)}, {1, std::log(0.2f)}, {2, std::log(0.2f)}, {3, std::log(0.1f)}};
        Cands c = sorted;
        QCOMPARE(sampleTypicalP(c, 0.35f), size_t{2});  // the most likely token is not typical
        QCOMPARE(ids(c, 2), (std::vector<int32_t>{1, 2}));
        c = sorted;
        QCOMPARE(sampleTypicalP(c, 0.5f), size_t{3});
        QCOMPARE(ids(c, 3), (std::vector<int32_t>{0, 1, 2}));  // back in logit order
        c = sorted;
        QCOMPARE(sampleTypicalP(c, 1.0f), size_t{4});
    }
    void topPKeepsSmallestPrefixReachingP() {
        Cands c{{0, std::log(0.5f)}, {1, std::log(0.25f)}, {2, std::log(0.125f)}, {3, std::log(0.125f)}};
        QCOMPARE(sampleTopP(c, 0.5f), size_t{1});
        QCOMPARE(sampleTopP(c, 0.7f), size_t{2});
        QCOMPARE(sampleTopP(c, 1.0f), size_t{4});
    }
    void minPDropsUnlikely() {
        Cands c{{0, std::log(0.6f)}, {1, std::log(0.3f)}, {2, std::log(0.1f)}};
        QCOMPARE(sampleMinP(c, 0.4f), size_t{2});  // 0.1 < 0.4 * 0.6
        QCOMPARE(sampleMinP(c, 0.0f), size_t{3});
    }
    void temperatureScales() {
        Cands c{{0, 2.0f}, {1, -4.0f}};
        applyTemperature(c, 2.0f);
        QCOMPARE(c[0].logit, 1.0f);
        QCOMPARE(c[1].logit, -2.0f);
    }
    void drawIsTheInverseCdf() {
        const Cands c{{5, std::log(0.5f)}, {6, std::log(0.25f)}, {7, std::log(0.25f)}};
        QCOMPARE(drawIndex(c, 0.0), size_t{0});
        QCOMPARE(drawIndex(c, 0.49), size_t{0});
        QCOMPARE(drawIndex(c, 0.51), size_t{1});
        QCOMPARE(drawIndex(c, 0.74), size_t{1});
        QCOMPARE(drawIndex(c, 0.76), size_t{2});
        QCOMPARE(drawIndex(c, 1.0), size_t{2});  // past the end: the last likely candidate
        const Cands banned{{0, 0.0f}, {1, -std::numeric_limits<float>::infinity()}};
        QCOMPARE(drawIndex(banned, 0.999), size_t{0});
    }
    void greedyAppliesBiasAndPenalties() {
        const std::vector<float> logits{1.0f, 0.9f, 0.0f};
        SamplingParams p{.repeatPenalty = 2.0f, .temperature = 0.0f};
        Sampler penalised(p);
        penalised.observe(std::vector<int32_t>{0});
        QCOMPARE(penalised.sample(logits), 1);  // 1.0 / 2 < 0.9
        QCOMPARE(penalised.sample(logits), 0);  // 0 and 1 now both seen: 0.5 > 0.45
        Sampler biased(SamplingParams{.logitBias = {{2, 5.0f}}, .temperature = 0.0f});
        QCOMPARE(biased.sample(logits), 2);
        Sampler plain(SamplingParams{.temperature = 0.0f});
        QCOMPARE(plain.sample(logits), 0);
    }
    // Greedy with biases only takes a shortcut (no copy of the vocabulary): it must choose
    // what biasing every candidate and taking their argmax chooses — ties, bans, repeated and
    // out-of-range ids, id 0, NaN included.
    // Rows of 1 to 200 logits, so that the runs between biased ids fill the vectorised lanes and
    // leave tails of every length; ties, -0 and +0, NaNs.
    void greedyBiasShortcutEqualsCandidatePath() {
        std::mt19937 rng(7);
        for (int round = 0; round < 3000; ++round) {
            std::vector<float> logits(1 + rng() % (round % 2 == 0 ? 40 : 200));
            for (float& l : logits) l = static_cast<float>(static_cast<int>(rng() % 7)) * 0.5f;  // many ties
            if (round % 4 == 1)  // the largest a zero, of both signs
                for (float& l : logits) l = rng() % 3 == 0 ? (rng() % 2 == 0 ? -0.0f : 0.0f) : -l - 0.5f;
            if (round % 17 == 0) logits[rng() % logits.size()] = std::numeric_limits<float>::quiet_NaN();
            std::vector<LogitBias> biases;
            for (int k = static_cast<int>(rng() % 5); k > 0; --k) {
                const int32_t id = static_cast<int32_t>(rng() % (logits.size() + 2)) - (round % 3 == 0 ? 1 : 0);
                const float bias = rng() % 4 == 0 ? -std::numeric_limits<float>::infinity()
                                                  : static_cast<float>(static_cast<int>(rng() % 9) - 4) * 0.5f;
                biases.push_back({round % 5 == 0 ? 0 : id, bias});
            }
            Cands c = inIdOrder(logits);
            applyLogitBias(c, biases);
            Sampler s(SamplingParams{.logitBias = biases, .temperature = 0.0f});
            QCOMPARE(s.sample(logits), argmax(std::span<const TokenLogit>(c)));
        }
    }
    void penaltyWindowIsTheLastNTokens() {
        const std::vector<float> logits{1.0f, 0.9f};
        Sampler s(SamplingParams{.repeatPenalty = 2.0f, .repeatLastN = 2, .temperature = 0.0f});
        s.observe(std::vector<int32_t>{0, 1, 1});  // 0 has left the window
        QCOMPARE(s.sample(logits), 0);
    }
    void drawsFollowTemperatureTopKTopP() {
        const std::vector<float> logits{2.0f, 1.5f, 1.2f, 1.0f, 0.3f, 0.0f, -0.5f, -1.0f};
        const SamplingParams p{.topK = 6, .topP = 0.9f, .minP = 0.0f, .temperature = 0.7f, .seed = 1234};
        // The intended distribution, computed plainly: top 6, then the smallest prefix of
        // their softmax reaching 0.9, then softmax(logit / T) over those.
        double sum6 = 0.0;
        for (size_t i = 0; i < 6; ++i) sum6 += std::exp(logits[i]);
        size_t kept = 0;
        for (double cumulative = 0.0; cumulative < 0.9; ++kept) cumulative += std::exp(logits[kept]) / sum6;
        QCOMPARE(kept, size_t{5});
        std::vector<double> probs(logits.size(), 0.0);
        double sumT = 0.0;
        for (size_t i = 0; i < kept; ++i) sumT += probs[i] = std::exp(logits[i] / 0.7);
        for (double& x : probs) x /= sumT;
        const int nDraws = 20000;
        const std::vector<int> counts = drawCounts(p, logits, nDraws);
        for (size_t i = kept; i < logits.size(); ++i) QCOMPARE(counts[i], 0);
        const double chi2 = chiSquare(std::vector<int>(counts.begin(), counts.begin() + 5),
                                      std::vector<double>(probs.begin(), probs.begin() + 5), nDraws);
        QVERIFY2(chi2 < 18.47, qPrintable(QString("chi2 = %1 (4 df, p = 0.001 at 18.47)").arg(chi2)));
    }
    void drawsFollowTemperatureAlone() {
        const std::vector<float> logits{0.5f, 0.0f, -0.3f, 1.0f, 0.2f, -1.0f, 0.7f, 0.1f};
        const SamplingParams p{.topK = 0, .topP = 1.0f, .minP = 0.0f, .temperature = 1.5f, .seed = 99};
        std::vector<double> probs;
        double sum = 0.0;
        for (float x : logits) sum += probs.emplace_back(std::exp(x / 1.5));
        for (double& x : probs) x /= sum;
        const int nDraws = 20000;
        const double chi2 = chiSquare(drawCounts(p, logits, nDraws), probs, nDraws);
        QVERIFY2(chi2 < 24.32, qPrintable(QString("chi2 = %1 (7 df, p = 0.001 at 24.32)").arg(chi2)));
    }
    void sameSeedSameTokens() {
        const std::vector<float> logits{0.0f, 0.3f, 0.1f, -0.2f, 0.25f};
        const SamplingParams p{.topK = 0, .topP = 1.0f, .minP = 0.0f, .temperature = 1.0f, .seed = 42};
        Sampler a(p), b(p),
            other(SamplingParams{.topK = 0, .topP = 1.0f, .minP = 0.0f, .temperature = 1.0f, .seed = 43});
        bool differs = false;
        for (int i = 0; i < 1000; ++i) {
            const int32_t x = a.sample(logits);
            QCOMPARE(b.sample(logits), x);
            differs = differs || other.sample(logits) != x;
        }
        QVERIFY(differs);
        // Portable: std::mt19937_64 is fully specified and the draw is our own inverse CDF,
        // so these are the tokens on every standard library.
        Sampler golden(p);
        std::vector<int32_t> first;
        for (int i = 0; i < 12; ++i) first.push_back(golden.sample(logits));
        QCOMPARE(first, (std::vector<int32_t>{0, 2, 0, 1, 3, 1, 2, 4, 4, 4, 1, 2}));
    }
    void validateChecksEveryRange() {
        QVERIFY(validate(SamplingParams{}));
        QVERIFY(failsMentioning({.temperature = -1.0f}, "temperature"));
        QVERIFY(failsMentioning({.temperature = std::nanf("")}, "temperature"));
        QVERIFY(failsMentioning({.topK = -1}, "top-k"));
        QVERIFY(failsMentioning({.typicalP = 0.0f}, "typical-p"));
        QVERIFY(failsMentioning({.typicalP = 1.5f}, "typical-p"));
        QVERIFY(failsMentioning({.topP = 0.0f}, "top-p"));
        QVERIFY(failsMentioning({.minP = 1.5f}, "min-p"));
        QVERIFY(failsMentioning({.repeatPenalty = 0.0f}, "repeat penalty"));
        QVERIFY(failsMentioning({.repeatPenalty = std::nanf("")}, "repeat penalty"));
        QVERIFY(failsMentioning({.repeatLastN = -2}, "repeat-last-n"));
        QVERIFY(failsMentioning({.presencePenalty = 2.5f}, "presence penalty"));
        QVERIFY(failsMentioning({.frequencyPenalty = -3.0f}, "frequency penalty"));
        QVERIFY(failsMentioning({.logitBias = {{-1, 1.0f}}}, "token id -1"));
        QVERIFY(failsMentioning({.logitBias = {{10, 1.0f}}}, "outside the vocabulary", 10));
        QVERIFY(failsMentioning({.logitBias = {{1, 101.0f}}}, "logit bias"));
        QVERIFY(failsMentioning({.logitBias = {{1, std::nanf("")}}}, "logit bias"));
        QVERIFY(validate({.logitBias = {{9, -std::numeric_limits<float>::infinity()}}}, 10));
        QVERIFY(validate({.repeatPenalty = 1.1f,
                          .repeatLastN = -1,
                          .presencePenalty = -2.0f,
                          .frequencyPenalty = 2.0f,
                          .topK = 0,
                          .typicalP = 1.0f,
                          .topP = 1.0f,
                          .minP = 0.0f,
                          .temperature = 0.0f}));
    }
};

QTEST_APPLESS_MAIN(TestSampler)
#include "test_sampler.moc"

// KV pools per attention group on a tiny random Gemma 3 with a window of 32 positions (and a
// synthetic Gemma 2 for (a)), decoding past several windows: (a) logits bitwise equal to the
// all-positions layout, (b) the window
// group's blocks freed as the window slides and back to idle after the requests, (c) save ->
// restore -> the same next tokens as recomputing (and the all-positions layout's saves refused
// with a reason), (d) batch invariance.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <limits>
#include <map>
#include <random>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/model/synth.h"
#include "tests/support/tiny_gemma3.h"

using namespace hearth;
using Tokens = std::vector<TokenId>;

namespace {

constexpr int kWindow = 32, kBlock = 16;

Tokens randomTokens(uint32_t seed, int n) {
    std::mt19937 rng(seed);
    Tokens t;
    for (int i = 0; i < n; ++i) t.push_back(static_cast<TokenId>(12 + rng() % 200));  // no special pieces
    return t;
}

int32_t blocksFor(int32_t n) { return (n + kBlock - 1) / kBlock; }

size_t greedyToken(std::span<const float> v) {
    return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

class TestEngineKvGroups : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        test::TinyGemma3Shape shape;
        shape.slidingWindow = kWindow;
        shape.context = 512;
        path_ = dir_.filePath("gemma3-window32.gguf").toStdString();
        QVERIFY(test::tinyGemma3(shape).writeFile(path_));
        auto gemma2 = findSynthShape("tiny-gemma2");  // local layers 0 and 2 of 4
        QVERIFY(gemma2);
        gemma2->slidingWindow = kWindow;
        gemma2->contextLength = 512;
        gemma2Path_ = dir_.filePath("gemma2-window32.gguf").toStdString();
        QVERIFY(writeSynthModel(*gemma2, {.type = DType::Q8_0, .seed = 3}, gemma2Path_));
    }

    void logitsBitwiseEqualToAllPositions_data() {
        QTest::addColumn<bool>("gemma2");
        QTest::newRow("gemma3") << false;
        QTest::newRow("gemma2") << true;
    }

    // (a) and (b) through Model::forward: the same tokens into a per-group cache and an
    // all-positions cache, 40 prompt tokens then 200 decoded ones (7 windows).
    void logitsBitwiseEqualToAllPositions() {
        QFETCH(bool, gemma2);
        auto file = GgufFile::open(gemma2 ? gemma2Path_ : path_);
        QVERIFY(file);
        auto model = Model::load(**file);
        QVERIFY(model);
        Model& m = **model;
        QVERIFY(!m.config().slidingLayers.empty());
        auto backend = makeBestCpuBackend(2);
        KvCache grouped(m.kvLayout(kBlock), 512), all(m.kvLayout(kBlock, false), 512);
        QCOMPARE(grouped.nGroups(), 2);
        QCOMPARE(all.nGroups(), 1);
        KvSequence gs, as;
        const auto nVocab = static_cast<size_t>(m.config().nVocab);
        std::vector<float> gl(nVocab), al(nVocab);
        Tokens next = randomTokens(1, 40);
        for (int step = 0; step <= 200; ++step) {
            QVERIFY(m.forward(*backend, grouped, gs, next, gl));
            QVERIFY(m.forward(*backend, all, as, next, al));
            QVERIFY2(std::memcmp(gl.data(), al.data(), nVocab * sizeof(float)) == 0,
                     qPrintable(QString("logits differ at position %1").arg(gs.nTokens - 1)));
            // The last pass planned at position p = nTokens - next.size() dropped what its window
            // (p - 32, p] does not read.
            const int32_t p = gs.nTokens - static_cast<int32_t>(next.size());
            const int32_t held = blocksFor(gs.nTokens) - std::max(0, p / kBlock * kBlock + 1 - kWindow) / kBlock;
            QCOMPARE(grouped.nHeldBlocks(gs, 0), blocksFor(gs.nTokens));
            QCOMPARE(grouped.nHeldBlocks(gs, 1), held);
            QCOMPARE(grouped.nFreeBlocks(1), grouped.pool(1).nBlocks() - held);
            QCOMPARE(all.nHeldBlocks(as, 0), blocksFor(as.nTokens));
            next = {static_cast<TokenId>(greedyToken(gl))};
        }
        QVERIFY(grouped.nHeldBlocks(gs, 1) <= kWindow / kBlock + 1);
        QCOMPARE(all.heldBytes(as), size_t(blocksFor(as.nTokens)) * all.bytesPerBlock());
        QCOMPARE(grouped.heldBytes(gs),
                 size_t(blocksFor(gs.nTokens)) * grouped.bytesPerBlock(0) +
                     size_t(grouped.nHeldBlocks(gs, 1)) * grouped.bytesPerBlock(1));
        QVERIFY(grouped.heldBytes(gs) < all.heldBytes(as) / (gemma2 ? 1 : 2));
        grouped.release(gs);
        all.release(as);
        QCOMPARE(grouped.nFreeBlocks(0), grouped.pool(0).nBlocks());
        QCOMPARE(grouped.nFreeBlocks(1), grouped.pool(1).nBlocks());
    }

    // (c): a conversation of 160 + 60 tokens saved from one engine and restored into a fresh one
    // continues with the tokens a third engine computes from scratch.
    void saveRestoreGivesTheSameNextTokens() {
        auto a = load(true);
        const Tokens prompt = randomTokens(2, 160);
        const GenerateResult first = generate(*a, prompt, 60);
        QCOMPARE(first.tokens.size(), size_t(60));
        // The parked sequence holds every position but the last sampled token's.
        Tokens conversation = prompt;
        conversation.insert(conversation.end(), first.tokens.begin(), first.tokens.end() - 1);
        // Only its last window holds the window group: a few blocks, all at the end.
        const EngineMetrics held = a->metrics();
        QCOMPARE(held.blocksUsed, blocksFor(static_cast<int32_t>(conversation.size())));
        QVERIFY(held.windowBlocksUsed <= kWindow / kBlock + 1);
        const std::vector<KvBlockRecord> records = a->exportKv(conversation);
        QCOMPARE(std::ssize(records), blocksFor(static_cast<int32_t>(conversation.size())));
        int nWithWindow = 0;
        for (const KvBlockRecord& r : records)
            if (!isKvTail(r, kBlock) && r.data.size() == a->kvBytesPerBlock()) ++nWithWindow;
        QVERIFY(nWithWindow >= 1 && nWithWindow <= kWindow / kBlock + 1);
        QVERIFY(records.front().data.size() < a->kvBytesPerBlock());  // the full group's only

        const Tokens followUp = [&] {
            Tokens t = conversation;
            t.push_back(first.tokens.back());
            const Tokens more = randomTokens(3, 7);
            t.insert(t.end(), more.begin(), more.end());
            return t;
        }();
        auto restored = load(true);
        const KvImportResult imported = restored->importKv(a->kvRoot(), records, conversation);
        QVERIFY2(imported.refusal.empty(), imported.refusal.c_str());
        QCOMPARE(imported.nTokens + imported.tailRows, static_cast<int32_t>(conversation.size()));
        const GenerateResult fromRestore = generate(*restored, followUp, 24);
        QCOMPARE(fromRestore.timings.prefixCacheHitTokens, static_cast<int32_t>(conversation.size()));
        auto fresh = load(true);
        const GenerateResult recomputed = generate(*fresh, followUp, 24);
        QCOMPARE(recomputed.timings.prefixCacheHitTokens, 0);
        QCOMPARE(fromRestore.tokens, recomputed.tokens);
        QCOMPARE(fromRestore.topLogits, recomputed.topLogits);

        // Saved under the all-positions layout (kv-layout/v1): refused with its reason.
        auto old = load(false);
        const KvImportResult refused = old->importKv(a->kvRoot(), records, conversation);
        QCOMPARE(refused.nTokens, 0);
        QVERIFY2(QString::fromStdString(refused.refusal).contains("KV layout differs"), refused.refusal.c_str());
    }

    // (d) and (b): three requests of different lengths in one batch give each request's tokens
    // and logits alone, and afterwards only the parked sequence holds blocks.
    void batchInvariantAndBackToIdle() {
        const std::vector<Tokens> prompts{randomTokens(4, 50), randomTokens(5, 90), randomTokens(6, 130)};
        std::vector<GenerateResult> alone;
        for (const Tokens& p : prompts) {
            auto e = load(true);
            alone.push_back(generate(*e, p, 50));
        }
        auto e = load(true);
        std::map<RequestId, size_t> which;
        std::vector<Tokens> tokens(prompts.size());
        std::vector<std::vector<std::vector<std::pair<TokenId, float>>>> logits(prompts.size());
        for (size_t i = 0; i < prompts.size(); ++i) {
            auto id = e->submit(request(*e, prompts[i], 50));
            QVERIFY(id);
            which[*id] = i;
        }
        while (!e->idle())
            for (EngineEvent& ev : e->step()) {
                QVERIFY(!ev.error);
                if (ev.kind != EngineEvent::Kind::Token) continue;
                tokens[which[ev.request]].push_back(ev.token);
                logits[which[ev.request]].push_back(std::move(ev.topLogits));
            }
        for (size_t i = 0; i < prompts.size(); ++i) {
            QCOMPARE(tokens[i], alone[i].tokens);
            QCOMPARE(logits[i], alone[i].topLogits);
        }
        const EngineMetrics m = e->metrics();
        QCOMPARE(m.nRunning, 0);
        QCOMPARE(m.windowBlocksUsed + m.windowBlocksFree + m.windowBlocksCached, m.windowBlocksTotal);
        QVERIFY(m.windowBlocksUsed <= kWindow / kBlock + 1);  // the parked sequence's last window only
        QCOMPARE(m.blocksUsed, blocksFor(static_cast<int32_t>(prompts.back().size() + 49)));
    }

    // Beam search forks sequences per group: 3 beams over 80 tokens past a 40-token prompt (the
    // window slides under forked, shared blocks) give the all-positions layout's hypotheses.
    void beamSearchMatchesAllPositions() {
        BeamSearchParams params;
        params.nBeams = 3;
        params.maxTokens = 80;
        const Tokens prompt = randomTokens(7, 40);
        auto grouped = load(true), all = load(false);
        for (TokenId t = 0; t < grouped->tokenizer().nVocab(); ++t)  // every beam runs its length
            if (grouped->tokenizer().isEndOfGeneration(t))
                params.logitBias.push_back({t, -std::numeric_limits<float>::infinity()});
        auto a = grouped->beamSearch(prompt, params), b = all->beamSearch(prompt, params);
        QVERIFY(a && b);
        QCOMPARE(a->hypotheses.size(), b->hypotheses.size());
        for (size_t i = 0; i < a->hypotheses.size(); ++i) {
            QCOMPARE(a->hypotheses[i].tokens, b->hypotheses[i].tokens);
            QCOMPARE(a->hypotheses[i].logProb, b->hypotheses[i].logProb);
        }
        QCOMPARE(a->hypotheses.front().tokens.size(), size_t(80));
        const EngineMetrics m = grouped->metrics();
        QCOMPARE(m.blocksUsed, 0);  // every block the search took was released
        QCOMPARE(m.windowBlocksUsed, 0);
    }

private:
    std::unique_ptr<Engine> load(bool windowPools) {
        EngineOptions o;
        o.kvWindowPools = windowPools;
        o.nThreads = 2;
        auto e = Engine::load(path_, o);
        if (!e) qFatal("%s", e.error().message.c_str());
        return std::move(*e);
    }

    static GenerateRequest request(const Engine& e, const Tokens& prompt, int32_t n) {
        GenerateRequest req;
        req.prompt = prompt;
        req.maxTokens = n;
        req.sampling.temperature = 0;
        req.nTopLogits = 4;
        for (TokenId t = 0; t < e.tokenizer().nVocab(); ++t)
            if (e.tokenizer().isEndOfGeneration(t))
                req.sampling.logitBias.push_back({t, -std::numeric_limits<float>::infinity()});
        return req;
    }

    static GenerateResult generate(Engine& e, const Tokens& prompt, int32_t n) {
        auto r = e.generate(request(e, prompt, n), [](TokenId, std::string_view) { return true; });
        if (!r) qFatal("%s", r.error().message.c_str());
        return *r;
    }

    QTemporaryDir dir_;
    std::string path_, gemma2Path_;
};

QTEST_APPLESS_MAIN(TestEngineKvGroups)
#include "test_engine_kv_groups.moc"

// Batch and thread invariance deep into a conversation (the "Long conversations" issue): a tiny
// random Llama (tests/support/tiny_llama.h, Q8_0, 8,192 positions) prefills 8,000 tokens and
// decodes 32, alone and in a batch beside two other requests (one sharing a 3,000-token prefix
// of the prompt), on 1, 2 and 3 threads, and with K stored token-major as well as
// dimension-major. Every step's logits over the whole vocabulary are bitwise those of the
// single-thread run alone: attention reduces each row in the same pieces whatever the batch,
// the threads or the K order (kernels/cpu/attention_pieces.h). Skipped without AVX2/FMA/F16C.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <random>

#include "engine/engine.h"
#include "kernels/cpu/cpu_features.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;

namespace {

constexpr int kPromptTokens = 8000, kDecodeTokens = 32;

// Every decoded token of the target request with its logits over the whole vocabulary.
struct Trace {
    std::vector<TokenId> tokens;
    std::vector<std::vector<float>> logits;  // [step][vocab id]
};

}  // namespace

class TestLongInvariance : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        if (!cpuFeatures().canRunAvx2()) QSKIP("this CPU (or OS) lacks AVX2, FMA or F16C");
        test::TinyLlamaShape shape;
        shape.weightType = DType::Q8_0;
        shape.context = 8192;
        path_ = dir_.filePath("tiny-8k.gguf").toStdString();
        QVERIFY(test::tinyLlama(shape).writeFile(path_));
        std::mt19937 rng(8000);
        std::uniform_int_distribution<int32_t> id(3, 250);
        prompt_.push_back(1);  // BOS
        while (static_cast<int>(prompt_.size()) < kPromptTokens) prompt_.push_back(id(rng));
        alone_ = run(1, false, true);
        QCOMPARE(static_cast<int>(alone_.tokens.size()), kDecodeTokens);
        float spread = 0;
        for (float x : alone_.logits.back()) spread = std::max(spread, std::abs(x - alone_.logits.back()[0]));
        QVERIFY(spread > 0.0f);  // the model computes something that depends on the tokens
    }

    void sameBitsAloneAndInABatch_data() {
        QTest::addColumn<int>("threads");
        QTest::addColumn<bool>("batch");
        QTest::addColumn<bool>("cpuOrders");  // K dimension-major, V head-major; else both token-major
        for (int t : {1, 2, 3})
            for (bool batch : {false, true})
                if (t != 1 || batch)
                    QTest::addRow("%d thread(s)%s", t, batch ? ", in a batch" : ", alone") << t << batch << true;
        QTest::newRow("2 threads, in a batch, K and V token-major") << 2 << true << false;
    }

    void sameBitsAloneAndInABatch() {
        QFETCH(int, threads);
        QFETCH(bool, batch);
        QFETCH(bool, cpuOrders);
        const Trace got = run(threads, batch, cpuOrders);
        QCOMPARE(got.tokens, alone_.tokens);
        QCOMPARE(got.logits.size(), alone_.logits.size());
        for (size_t s = 0; s < got.logits.size(); ++s)
            QVERIFY2(got.logits[s].size() == alone_.logits[s].size() &&
                         std::memcmp(got.logits[s].data(), alone_.logits[s].data(),
                                     got.logits[s].size() * sizeof(float)) == 0,
                     ("decode step " + std::to_string(s) + " differs").c_str());
    }

private:
    Trace run(int threads, bool batch, bool cpuOrders) {
        EngineOptions options;
        options.nThreads = threads;
        options.contextLength = 8192;
        options.kvKDimMajor = cpuOrders;
        options.kvVHeadMajor = cpuOrders;
        auto engine = Engine::load(path_, options);
        if (!engine) {
            qWarning("%s", engine.error().message.c_str());
            return {};
        }
        Engine& e = **engine;
        const int nVocab = e.config().nVocab;
        const auto request = [&](std::vector<int32_t> prompt, int32_t maxTokens) {
            GenerateRequest r;
            r.prompt = std::move(prompt);
            r.maxTokens = maxTokens;
            r.sampling.temperature = 0;
            r.nTopLogits = nVocab;
            return r;
        };
        if (batch) {
            std::vector<int32_t> shared(prompt_.begin(), prompt_.begin() + 3000);
            shared.push_back(7);
            (void)e.submit(request(std::move(shared), 40));
            (void)e.submit(request({1, 40, 41, 42, 43}, 60));
        }
        auto target = e.submit(request(prompt_, kDecodeTokens));
        if (!target) return {};
        Trace trace;
        while (!e.idle())
            for (const EngineEvent& ev : e.step()) {
                if (ev.kind != EngineEvent::Kind::Token || ev.request != *target) continue;
                trace.tokens.push_back(ev.token);
                std::vector<float> logits(static_cast<size_t>(nVocab));
                for (const auto& [id, logit] : ev.topLogits) logits[static_cast<size_t>(id)] = logit;
                trace.logits.push_back(std::move(logits));
            }
        return trace;
    }

    QTemporaryDir dir_;
    std::string path_;
    std::vector<int32_t> prompt_;
    Trace alone_;
};

QTEST_APPLESS_MAIN(TestLongInvariance)
#include "test_long_invariance.moc"

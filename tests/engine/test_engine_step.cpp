// The step API on the tiny random Llama: a stop string split across tokens is caught and not
// shown, a time limit stops within one step, several requests stepped together give the same
// greedy tokens as each alone (batch invariance), cancel, metrics.
#include <QTemporaryDir>
#include <QtTest>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>

#include "engine/engine.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;
using Tokens = std::vector<TokenId>;
using Clock = std::chrono::steady_clock;

namespace {

GenerateRequest greedy(Tokens prompt, int32_t maxTokens) {
    GenerateRequest req;
    req.prompt = std::move(prompt);
    req.maxTokens = maxTokens;
    req.sampling.temperature = 0;
    req.sampling.logitBias.push_back({2, -std::numeric_limits<float>::infinity()});  // no </s>: full length
    return req;
}

Tokens promptOf(int i) {
    Tokens t{1};
    for (int k = 0; k < 5 + 7 * i; ++k) t.push_back(static_cast<TokenId>(3 + (k * 37 + i * 101) % 256));
    return t;
}

}  // namespace

class TestEngineStep : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        test::TinyLlamaShape shape;
        shape.context = 4096;
        path_ = dir_.filePath("tiny.gguf").toStdString();
        QVERIFY(test::tinyLlama(shape).writeFile(path_));
        auto engine = Engine::load(path_, {});
        QVERIFY2(engine, engine ? "" : engine.error().message.c_str());
        engine_ = std::move(*engine);
    }

    void stopStringAcrossTokensIsNotShown() {
        std::vector<std::string> pieces;
        auto free = engine_->generate(greedy(promptOf(0), 40), [&](TokenId, std::string_view t) {
            pieces.emplace_back(t);
            return true;
        });
        QVERIFY(free);
        std::string all;
        for (const std::string& p : pieces) all += p;
        // A stop string made of the end of one token's text and the start of the next one's.
        size_t k = 0, offset = 0;
        std::string stop;
        for (; k + 1 < pieces.size(); offset += pieces[k++].size()) {
            if (pieces[k].empty() || pieces[k + 1].empty()) continue;
            const std::string candidate = pieces[k] + pieces[k + 1];
            if (all.find(candidate) == offset) {
                stop = candidate;
                break;
            }
        }
        if (stop.empty()) QSKIP("the tiny model's greedy text has no two adjacent non-empty pieces");
        GenerateRequest req = greedy(promptOf(0), 40);
        req.stop = {"never-there", stop};
        std::string shown;
        auto stopped = engine_->generate(req, [&](TokenId, std::string_view t) {
            shown += t;
            return true;
        });
        QVERIFY(stopped);
        QCOMPARE(stopped->finishReason, FinishReason::Stop);
        QCOMPARE(shown, all.substr(0, offset));
        QCOMPARE(stopped->tokens.size(), k + 2);  // stopped on the token that completed it
    }

    void timeoutStopsWithinOneStep() {
        GenerateRequest req = greedy(promptOf(1), 4000);
        req.timeoutMs = 20;
        auto id = engine_->submit(req);
        QVERIFY(id);
        const auto deadline = Clock::now() + std::chrono::milliseconds(req.timeoutMs);
        std::vector<std::pair<Clock::time_point, Clock::time_point>> steps;  // start, end
        std::optional<EngineEvent> finish;
        while (!finish) {
            const auto start = Clock::now();
            for (EngineEvent& e : engine_->step())
                if (e.kind == EngineEvent::Kind::Finish) finish = e;
            steps.emplace_back(start, Clock::now());
        }
        QCOMPARE(finish->reason, FinishReason::Timeout);
        QVERIFY(steps.size() >= 2);
        // The step before the one that stopped it ended before the limit.
        QVERIFY(steps[steps.size() - 2].second < deadline);
    }

    void batchedEqualsAlone() {
        std::map<RequestId, int> idToIndex;
        std::vector<Tokens> alone(4), batched(4);
        for (int i = 0; i < 4; ++i) {
            auto r = engine_->generate(greedy(promptOf(i), 12), [](TokenId, std::string_view) { return true; });
            QVERIFY(r);
            alone[static_cast<size_t>(i)] = r->tokens;
        }
        for (int i = 0; i < 4; ++i) idToIndex[engine_->submit(greedy(promptOf(i), 12)).value()] = i;
        QCOMPARE(engine_->metrics().nWaiting, 4);
        int nFinished = 0;
        while (nFinished < 4) {
            for (const EngineEvent& e : engine_->step()) {
                if (e.kind == EngineEvent::Kind::Token)
                    batched[static_cast<size_t>(idToIndex.at(e.request))].push_back(e.token);
                else ++nFinished;
            }
        }
        QVERIFY(engine_->idle());
        for (int i = 0; i < 4; ++i) QCOMPARE(batched[static_cast<size_t>(i)], alone[static_cast<size_t>(i)]);
    }

    void preemptionUnderMemoryPressureKeepsTheTokens() {
        EngineOptions options;
        options.contextLength = 96;  // the KV cache too: 6 blocks for 4 requests of ~45 positions
        auto small = Engine::load(path_, options);
        QVERIFY(small);
        Engine& e = **small;
        std::vector<Tokens> alone(4), batched(4);
        for (int i = 0; i < 4; ++i)
            alone[static_cast<size_t>(i)] =
                e.generate(greedy(promptOf(i + 2), 20), [](TokenId, std::string_view) { return true; })->tokens;
        std::map<RequestId, int> idToIndex;
        for (int i = 0; i < 4; ++i) idToIndex[e.submit(greedy(promptOf(i + 2), 20)).value()] = i;
        while (!e.idle())
            for (const EngineEvent& ev : e.step()) {
                QVERIFY(ev.kind == EngineEvent::Kind::Token || ev.reason == FinishReason::Length);
                if (ev.kind == EngineEvent::Kind::Token)
                    batched[static_cast<size_t>(idToIndex.at(ev.request))].push_back(ev.token);
            }
        QVERIFY(e.metrics().nPreemptions > 0);
        for (int i = 0; i < 4; ++i) QCOMPARE(batched[static_cast<size_t>(i)], alone[static_cast<size_t>(i)]);
    }

    void aLongPromptDoesNotStallDecode() {
        EngineOptions options;
        options.scheduler.tokenBudget = 16;
        auto chunked = Engine::load(path_, options);
        QVERIFY(chunked);
        Engine& e = **chunked;
        const RequestId a = e.submit(greedy(promptOf(0), 40)).value();
        e.step();  // a's prompt (6 tokens) and its first token
        Tokens longPrompt;
        for (int i = 0; i < 200; ++i) longPrompt.push_back(static_cast<TokenId>(3 + (i * 13) % 256));
        const RequestId b = e.submit(greedy(longPrompt, 2)).value();
        int nSteps = 0;
        for (bool bStarted = false; !bStarted; ++nSteps) {
            int nTokensOfA = 0;
            for (const EngineEvent& ev : e.step()) {
                nTokensOfA += ev.request == a && ev.kind == EngineEvent::Kind::Token;
                bStarted = bStarted || ev.request == b;
            }
            QCOMPARE(nTokensOfA, 1);  // every step, while b's prompt is read 16 tokens at a time
        }
        QCOMPARE(nSteps, 13);  // ceil(200 / 16)
        e.cancel(a);
        while (!e.idle()) e.step();
    }

    void cancelFinishesAtTheNextStep() {
        const RequestId a = engine_->submit(greedy(promptOf(2), 50)).value();
        const RequestId b = engine_->submit(greedy(promptOf(3), 5)).value();
        engine_->step();
        engine_->cancel(a);
        const std::vector<EngineEvent> events = engine_->step();
        QVERIFY(!events.empty());
        QCOMPARE(events.front().kind, EngineEvent::Kind::Finish);
        QCOMPARE(events.front().request, a);
        QCOMPARE(events.front().reason, FinishReason::Cancelled);
        for (const EngineEvent& e : events) QVERIFY(e.request != a || e.kind == EngineEvent::Kind::Finish);
        while (!engine_->idle()) engine_->step();
        const EngineMetrics m = engine_->metrics();
        QCOMPARE(m.nRunning, 0);
        QCOMPARE(m.blocksUsed + m.blocksFree + m.blocksCached, m.blocksTotal);
        QVERIFY(m.blocksCached > 0);
        (void)b;
    }

    // logprobs: log-softmax of the raw logits. With every logit reported (nTopLogits = vocab)
    // the normaliser is computed here and compared; a sampled (not greedy) token's logprob is
    // its own row's, and a logit bias does not change what is reported.
    void logprobsAreTheLogSoftmaxOfTheRawLogits() {
        const int32_t nVocab = engine_->config().nVocab;
        GenerateRequest raw = greedy(promptOf(4), 6), logp = raw;
        raw.nTopLogits = nVocab;
        logp.nTopLogits = 3;
        logp.logprobs = true;
        const auto run = [&](const GenerateRequest& r) {
            const RequestId id = engine_->submit(r).value();
            std::vector<EngineEvent> tokens;
            while (!engine_->idle())
                for (EngineEvent& e : engine_->step())
                    if (e.request == id && e.kind == EngineEvent::Kind::Token) tokens.push_back(std::move(e));
            return tokens;
        };
        const std::vector<EngineEvent> a = run(raw), b = run(logp);
        QCOMPARE(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
            double sum = 0, chosen = 0;
            for (const auto& [id, logit] : a[i].topLogits) {
                sum += std::exp(static_cast<double>(logit) - a[i].topLogits[0].second);
                if (id == a[i].token) chosen = logit;
            }
            const double lse = a[i].topLogits[0].second + std::log(sum);
            QCOMPARE(b[i].token, a[i].token);
            QVERIFY(std::abs(b[i].logprob - (chosen - lse)) < 1e-4);
            QCOMPARE(b[i].topLogits.size(), size_t(3));
            for (size_t k = 0; k < 3; ++k) {
                QCOMPARE(b[i].topLogits[k].first, a[i].topLogits[k].first);
                QVERIFY(std::abs(b[i].topLogits[k].second - (a[i].topLogits[k].second - lse)) < 1e-4);
            }
            QCOMPARE(a[i].logprob, 0.0f);  // not asked for
        }
    }

private:
    QTemporaryDir dir_;
    std::string path_;
    std::unique_ptr<Engine> engine_;
};

QTEST_APPLESS_MAIN(TestEngineStep)
#include "test_engine_step.moc"

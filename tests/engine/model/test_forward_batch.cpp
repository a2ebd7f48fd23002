// Model::forwardBatch and the Runner's one pass per step, on tiny random Llama and Gemma 3
// models (tests/support): four sequences of different lengths — decode rows, a prefill chunk,
// a 3-row verify chunk — computed in one batch give bitwise each sequence's logits alone, with
// 1 and 2 threads; the runner calls forwardBatch once per step (a counting Model wrapper) and
// generates what each sequence generates alone; a bad chunk fails alone.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <map>

#include "engine/model/gguf.h"
#include "engine/runner/runner.h"
#include "tests/support/counting_model.h"
#include "tests/support/tiny_gemma3.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;
using Tokens = std::vector<int32_t>;

namespace {

bool sameBits(std::span<const float> a, std::span<const float> b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

using test::CountingModel;

// One sequence of the mixed batch: tokens already in the cache, the chunk computed in the
// batch with the logit rows it wants, then one decode token.
struct Case {
    Tokens history, chunk;
    int rows = 1;
    int32_t next = 0;
};

Tokens tokensOf(int n, int salt, int nVocab) {
    Tokens t{1};
    for (int k = 1; k < n; ++k) t.push_back(3 + (k * 37 + salt * 101) % (nVocab - 3));
    return t;
}

std::vector<Case> mixedCases(int nVocab) {
    const auto split = [&](int nHistory, int nChunk, int rows, int salt) {
        const Tokens all = tokensOf(nHistory + nChunk, salt, nVocab);
        return Case{Tokens(all.begin(), all.begin() + nHistory), Tokens(all.begin() + nHistory, all.end()), rows,
                    static_cast<int32_t>(5 + salt * 7)};
    };
    return {split(12, 1, 1, 0),  // decode after a 12-token prompt
            split(0, 21, 1, 1),  // a whole prompt's prefill
            split(7, 1, 1, 2),  // decode
            split(16, 9, 3, 3)};  // a chunk after a full block, wanting its last 3 rows (a verify)
}

GgufWriter tinyModel(const QString& arch) {
    if (arch == "llama") return test::tinyLlama();
    return test::tinyGemma3();  // window 5 < the prompts: local layers mask
}

}  // namespace

class TestForwardBatch : public QObject {
    Q_OBJECT
private slots:
    void batchEqualsEachAlone_data();
    void batchEqualsEachAlone();
    void runnerMakesOneForwardPerStep_data();
    void runnerMakesOneForwardPerStep();
    void badItemFailsAlone();
    void longBatchRunsInPasses_data() { batchEqualsEachAlone_data(); }
    void longBatchRunsInPasses();

private:
    std::unique_ptr<Model> load(const QString& arch);

    QTemporaryDir dir_;
    std::map<QString, std::unique_ptr<GgufFile>> files_;
};

std::unique_ptr<Model> TestForwardBatch::load(const QString& arch) {
    if (!files_.contains(arch)) {
        const std::string path = dir_.filePath(arch + ".gguf").toStdString();
        if (!tinyModel(arch).writeFile(path)) return nullptr;
        auto file = GgufFile::open(path);
        if (!file) return nullptr;
        files_[arch] = std::move(*file);
    }
    auto model = Model::load(*files_[arch]);
    return model ? std::move(*model) : nullptr;
}

void TestForwardBatch::batchEqualsEachAlone_data() {
    QTest::addColumn<QString>("arch");
    QTest::addColumn<int>("threads");
    for (const char* arch : {"llama", "gemma3"})
        for (int threads : {1, 2}) QTest::addRow("%s/%d", arch, threads) << QString(arch) << threads;
}

void TestForwardBatch::batchEqualsEachAlone() {
    QFETCH(QString, arch);
    QFETCH(int, threads);
    auto model = load(arch);
    QVERIFY(model);
    auto backend = makeBestCpuBackend(threads);
    const auto nVocab = static_cast<size_t>(model->config().nVocab);
    const std::vector<Case> cases = mixedCases(model->config().nVocab);
    // Alone: each sequence in its own cache. [case] -> chunk rows' logits, next token's logits.
    std::vector<std::vector<float>> aloneChunk, aloneNext;
    for (const Case& c : cases) {
        KvCache cache(model->kvLayout(16), 256);
        KvSequence seq;
        aloneChunk.emplace_back(static_cast<size_t>(c.rows) * nVocab);
        aloneNext.emplace_back(nVocab);
        QVERIFY(model->forward(*backend, cache, seq, c.history, {}));
        QVERIFY(model->forward(*backend, cache, seq, c.chunk, aloneChunk.back()));
        QVERIFY(model->forward(*backend, cache, seq, std::span(&c.next, 1), aloneNext.back()));
    }
    // Together: one cache; the histories, then every chunk in one forwardBatch, then every next token in one.
    KvCache cache(model->kvLayout(16), 1024);
    std::vector<KvSequence> seqs(cases.size());
    std::vector<std::vector<float>> chunkLogits, nextLogits;
    std::vector<ForwardItem> chunks, nexts;
    for (size_t i = 0; i < cases.size(); ++i) {
        QVERIFY(model->forward(*backend, cache, seqs[i], cases[i].history, {}));
        chunkLogits.emplace_back(static_cast<size_t>(cases[i].rows) * nVocab);
        nextLogits.emplace_back(nVocab);
    }
    for (size_t i = 0; i < cases.size(); ++i) {
        chunks.push_back({&seqs[i], cases[i].chunk, chunkLogits[i]});
        nexts.push_back({&seqs[i], std::span(&cases[i].next, 1), nextLogits[i]});
    }
    QVERIFY(model->forward(*backend, cache, chunks));
    QVERIFY(model->forward(*backend, cache, nexts));
    for (size_t i = 0; i < cases.size(); ++i) {
        QCOMPARE(seqs[i].nTokens, static_cast<int32_t>(cases[i].history.size() + cases[i].chunk.size() + 1));
        QVERIFY2(sameBits(chunkLogits[i], aloneChunk[i]),
                 qPrintable(QString("sequence %1's chunk logits differ").arg(i)));
        QVERIFY2(sameBits(nextLogits[i], aloneNext[i]), qPrintable(QString("sequence %1's next logits differ").arg(i)));
        // Distinct sequences give distinct logits, so a mixed-up row would show.
        if (i > 0) QVERIFY(!sameBits(nextLogits[i], nextLogits[i - 1]));
    }
}

void TestForwardBatch::runnerMakesOneForwardPerStep_data() {
    QTest::addColumn<QString>("arch");
    QTest::newRow("llama") << QString("llama");
    QTest::newRow("gemma3") << QString("gemma3");
}

// Four prompts through the scheduler (token budget 16: long prompts are chunked while the
// others decode): one forwardBatch per step with every planned chunk, and greedy tokens equal
// to each prompt generated alone with forward().
void TestForwardBatch::runnerMakesOneForwardPerStep() {
    QFETCH(QString, arch);
    auto inner = load(arch);
    QVERIFY(inner);
    CountingModel model(*inner);
    auto backend = makeBestCpuBackend(2);
    const int nVocab = model.config().nVocab, nNew = 6;
    const auto argmax = [&](std::span<const float> row) {
        return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
    };
    std::vector<Tokens> prompts;
    for (int i = 0; i < 4; ++i) prompts.push_back(tokensOf(3 + 13 * i, 10 + i, nVocab));
    std::vector<Tokens> alone;
    for (const Tokens& prompt : prompts) {
        KvCache cache(model.kvLayout(16), 256);
        KvSequence seq;
        std::vector<float> logits(static_cast<size_t>(nVocab));
        Tokens out;
        QVERIFY(inner->forward(*backend, cache, seq, prompt, logits));
        for (out.push_back(argmax(logits)); std::ssize(out) < nNew; out.push_back(argmax(logits)))
            QVERIFY(inner->forward(*backend, cache, seq, std::span(&out.back(), 1), logits));
        alone.push_back(out);
    }
    KvCache cache(model.kvLayout(16), 1024);
    Scheduler scheduler(cache, SchedulerConfig{.tokenBudget = 16, .maxRunning = 16});
    Runner runner(model, *backend, cache);
    std::map<SeqId, Tokens> generated;
    std::vector<SeqId> ids;
    for (const Tokens& prompt : prompts) ids.push_back(scheduler.add(prompt));
    bool mixed = false;  // some step held a prefill chunk and a decode row together
    for (int step = 0; !scheduler.idle() && step < 100; ++step) {
        const StepPlan plan = scheduler.schedule();
        const size_t callsBefore = model.itemsPerCall.size();
        const std::vector<ChunkOutput> outputs = runner.run(plan, scheduler);
        QCOMPARE(model.itemsPerCall.size(), callsBefore + (plan.chunks.empty() ? 0 : 1));
        if (!plan.chunks.empty()) QCOMPARE(model.itemsPerCall.back(), static_cast<int>(plan.chunks.size()));
        bool prefill = false, decode = false;
        StepResult result;
        for (size_t c = 0; c < plan.chunks.size(); ++c) {
            QVERIFY(!outputs[c].error);
            (plan.chunks[c].tokens.size() > 1 ? prefill : decode) = true;
            if (plan.chunks[c].sample) result.sampled.push_back({plan.chunks[c].seq, argmax(outputs[c].logits)});
        }
        mixed = mixed || (prefill && decode);
        scheduler.complete(plan, result);
        for (const SampledToken& t : result.sampled)
            if (generated[t.seq].push_back(t.token); std::ssize(generated[t.seq]) == nNew)
                scheduler.finish(t.seq, false);
    }
    QVERIFY(scheduler.idle());
    QVERIFY(mixed);
    for (size_t i = 0; i < ids.size(); ++i) QCOMPARE(generated[ids[i]], alone[i]);
}

// A chunk with a token outside the vocabulary fails alone: the others run in the step's one
// pass and give their logits alone; forwardBatch itself refuses the batch naming the item, and
// nothing advances.
void TestForwardBatch::badItemFailsAlone() {
    auto inner = load("llama");
    QVERIFY(inner);
    CountingModel model(*inner);
    auto backend = makeBestCpuBackend(2);
    const int nVocab = model.config().nVocab;
    KvCache cache(model.kvLayout(16), 1024);
    Scheduler scheduler(cache, SchedulerConfig{.tokenBudget = 256, .maxRunning = 16});
    for (int i = 0; i < 3; ++i) scheduler.add(tokensOf(4 + 5 * i, 20 + i, nVocab));
    StepPlan plan = scheduler.schedule();
    QCOMPARE(plan.chunks.size(), size_t{3});
    plan.chunks[1].tokens[2] = nVocab + 7;
    const std::vector<ChunkOutput> outputs = Runner(model, *backend, cache).run(plan, scheduler);
    QCOMPARE(model.itemsPerCall, std::vector<int>{2});
    QVERIFY(outputs[1].error);
    QVERIFY2(outputs[1].error->message.find("outside the vocabulary") != std::string::npos,
             outputs[1].error->message.c_str());
    QCOMPARE(scheduler.kvSequence(plan.chunks[1].seq).nTokens, 0);
    for (size_t c : {size_t{0}, size_t{2}}) {
        QVERIFY(!outputs[c].error);
        KvCache aloneCache(model.kvLayout(16), 256);
        KvSequence seq;
        std::vector<float> logits(static_cast<size_t>(nVocab));
        QVERIFY(inner->forward(*backend, aloneCache, seq, plan.chunks[c].tokens, logits));
        QVERIFY(sameBits(outputs[c].logits, logits));
    }
    // Directly: the whole batch is refused before anything is computed.
    KvSequence a, b;
    const Tokens good{1, 5, 6}, bad{1, -3};
    std::vector<float> logits(static_cast<size_t>(nVocab));
    const std::vector<ForwardItem> items{{&a, good, logits}, {&b, bad, {}}};
    auto r = inner->forwardBatch(*backend, cache, items);
    QVERIFY(!r);
    QVERIFY2(r.error().message.starts_with("item 1: token id -3"), r.error().message.c_str());
    QCOMPARE(a.nTokens, 0);
    const std::vector<ForwardItem> twice{{&a, good, {}}, {&a, good, {}}};
    QVERIFY(!inner->forwardBatch(*backend, cache, twice));
    cache.release(a);
}

// More rows than the backend's rowsPerPass: the batch runs as consecutive passes, cutting one
// sequence's rows (and the logit rows it wants) at a pass boundary; every wanted row is
// bitwise what feeding the tokens one at a time gives.
void TestForwardBatch::longBatchRunsInPasses() {
    QFETCH(QString, arch);
    QFETCH(int, threads);
    auto model = load(arch);
    QVERIFY(model);
    auto backend = makeBestCpuBackend(threads);
    const int nVocab = model->config().nVocab;
    const auto nMax = static_cast<int>(backend->rowsPerPass());
    const Tokens a = tokensOf(nMax + 22, 5, nVocab), b = tokensOf(90, 6, nVocab);
    const int aRows = 30, bRows = 2;  // a's wanted rows straddle the first pass boundary
    const auto oneByOne = [&](const Tokens& t) {
        KvCache cache(model->kvLayout(16), 512);
        KvSequence seq;
        std::vector<float> all(t.size() * static_cast<size_t>(nVocab));
        for (size_t i = 0; i < t.size(); ++i)
            if (!model->forward(*backend, cache, seq, std::span(&t[i], 1),
                                std::span(all).subspan(i * static_cast<size_t>(nVocab), static_cast<size_t>(nVocab))))
                return std::vector<float>();
        return all;
    };
    const std::vector<float> aAlone = oneByOne(a), bAlone = oneByOne(b);
    QVERIFY(!aAlone.empty() && !bAlone.empty());
    KvCache cache(model->kvLayout(16), 512);
    std::vector<KvSequence> seqs(2);
    std::vector<float> aLogits(static_cast<size_t>(aRows * nVocab)), bLogits(static_cast<size_t>(bRows * nVocab));
    const std::vector<ForwardItem> items{{&seqs[0], a, aLogits}, {&seqs[1], b, bLogits}};
    QVERIFY(model->forward(*backend, cache, items));
    QCOMPARE(seqs[0].nTokens, static_cast<int32_t>(a.size()));
    QCOMPARE(seqs[1].nTokens, static_cast<int32_t>(b.size()));
    const auto tail = [&](const std::vector<float>& all, int rows) {
        return std::span(all).subspan(all.size() - static_cast<size_t>(rows * nVocab));
    };
    QVERIFY2(sameBits(aLogits, tail(aAlone, aRows)), "the long sequence's logit rows differ");
    QVERIFY2(sameBits(bLogits, tail(bAlone, bRows)), "the second sequence's logit rows differ");
}

QTEST_APPLESS_MAIN(TestForwardBatch)
#include "test_forward_batch.moc"

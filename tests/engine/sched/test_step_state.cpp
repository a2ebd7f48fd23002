// The step-state rule (scheduler.h): the scheduler alone reserves a step's KV and advances its
// sequences; the runner and the model execute the plan and check it. On a tiny random Llama: a
// model that advances or reserves on its own fails its chunks, a chunk whose reservation is
// missing fails instead of being reserved, Model::forwardBatch refuses unreserved positions,
// and Model::forward (the convenience without a scheduler) reserves and advances.
#include <QTemporaryDir>
#include <QtTest>

#include "engine/model/gguf.h"
#include "engine/runner/runner.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;
using Tokens = std::vector<int32_t>;

namespace {

// How a wrapped model breaks the rule after its inner pass.
enum class Misstep { None, Advances, Reserves };

// Runs the inner model's pass, then changes each item's step state as Misstep says.
class MisbehavingModel final : public Model {
public:
    MisbehavingModel(Model& inner, Misstep misstep) : inner_(inner), misstep_(misstep) { config_ = inner.config(); }
    Result<void> forwardBatch(Backend& b, KvCache& cache, std::span<const ForwardItem> items) override {
        if (auto r = inner_.forwardBatch(b, cache, items); !r) return r;
        for (const ForwardItem& item : items) {
            const auto end = item.seq->nTokens + static_cast<int32_t>(item.tokens.size());
            if (misstep_ == Misstep::Advances) item.seq->nTokens = end;
            // A block past the plan's: what a model reserving "enough for the next step" would take.
            if (misstep_ != Misstep::Reserves) continue;
            if (auto r = cache.reserve(*item.seq, end + cache.layout().blockSize); !r) return r;
        }
        return {};
    }

private:
    Model& inner_;
    Misstep misstep_;
};

const Tokens kPromptA{1, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37};  // 19: two blocks
const Tokens kPromptB{1, 40, 41, 42};

}  // namespace

class TestStepState : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void aModelMustNotAdvanceOrReserve_data();
    void aModelMustNotAdvanceOrReserve();
    void aMissingReservationFailsTheChunk();
    void forwardBatchRefusesUnreservedPositions();

private:
    QTemporaryDir dir_;
    std::unique_ptr<GgufFile> file_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<Backend> backend_ = makeBestCpuBackend(1);
};

void TestStepState::initTestCase() {
    const std::string path = dir_.filePath("llama.gguf").toStdString();
    QVERIFY(test::tinyLlama().writeFile(path));
    auto file = GgufFile::open(path);
    QVERIFY(file);
    file_ = std::move(*file);
    auto model = Model::load(*file_);
    QVERIFY(model);
    model_ = std::move(*model);
}

void TestStepState::aModelMustNotAdvanceOrReserve_data() {
    QTest::addColumn<int>("misstep");
    QTest::addColumn<QString>("expected");  // in every chunk's error; empty: no error
    QTest::newRow("executes only") << int(Misstep::None) << QString();
    QTest::newRow("advances") << int(Misstep::Advances) << QString("only Scheduler::complete advances a sequence");
    QTest::newRow("reserves") << int(Misstep::Reserves) << QString("only Scheduler::schedule reserves");
}

// Two prompts in one step. The model that only executes leaves every sequence where the plan
// put it, and complete() advances them; one that advances or reserves fails both chunks.
void TestStepState::aModelMustNotAdvanceOrReserve() {
    QFETCH(int, misstep);
    QFETCH(QString, expected);
    MisbehavingModel model(*model_, static_cast<Misstep>(misstep));
    KvCache cache(model.kvLayout(16), 256);
    Scheduler scheduler(cache, SchedulerConfig{.tokenBudget = 64, .maxRunning = 4});
    const SeqId a = scheduler.add(kPromptA), b = scheduler.add(kPromptB);
    const StepPlan plan = scheduler.schedule();
    QCOMPARE(plan.chunks.size(), size_t{2});
    const int32_t nUsed = cache.pool().nUsed();
    QCOMPARE(nUsed, 3);  // reserved by the plan: two blocks for a, one for b
    const std::vector<ChunkOutput> outputs = Runner(model, *backend_, cache).run(plan, scheduler);
    for (const ChunkOutput& out : outputs) {
        if (expected.isEmpty()) {
            QVERIFY2(!out.error, out.error ? out.error->message.c_str() : "");
            QCOMPARE(scheduler.kvSequence(out.seq).nTokens, 0);  // the runner ran the chunk; it did not advance it
            continue;
        }
        QVERIFY(out.error);
        QVERIFY2(out.error->message.find(expected.toStdString()) != std::string::npos, out.error->message.c_str());
    }
    if (!expected.isEmpty()) return;
    QCOMPARE(cache.pool().nUsed(), nUsed);  // the runner reserved nothing
    StepResult result;
    for (const ChunkOutput& out : outputs) result.sampled.push_back({out.seq, 5});
    scheduler.complete(plan, result);
    QCOMPARE(scheduler.kvSequence(a).nTokens, static_cast<int32_t>(kPromptA.size()));
    QCOMPARE(scheduler.kvSequence(b).nTokens, static_cast<int32_t>(kPromptB.size()));
}

// The plan's KV is taken away after schedule(): the runner fails that chunk and reserves
// nothing for it; the other chunk runs.
void TestStepState::aMissingReservationFailsTheChunk() {
    KvCache cache(model_->kvLayout(16), 256);
    Scheduler scheduler(cache, SchedulerConfig{.tokenBudget = 64, .maxRunning = 4});
    const SeqId a = scheduler.add(kPromptA), b = scheduler.add(kPromptB);
    const StepPlan plan = scheduler.schedule();
    cache.release(scheduler.kvSequence(a));
    const std::vector<ChunkOutput> outputs = Runner(*model_, *backend_, cache).run(plan, scheduler);
    QCOMPARE(outputs.size(), size_t{2});
    QCOMPARE(outputs[0].seq, a);
    QVERIFY(outputs[0].error);
    QVERIFY2(outputs[0].error->message.find("the plan reserved") != std::string::npos,
             outputs[0].error->message.c_str());
    QVERIFY(scheduler.kvSequence(a).blockTable.empty());
    QCOMPARE(outputs[1].seq, b);
    QVERIFY(!outputs[1].error);
    QCOMPARE(cache.pool().nUsed(), 1);  // b's block alone
}

// Directly: forwardBatch names the positions nobody reserved and changes nothing; forward()
// reserves them itself and advances the sequence.
void TestStepState::forwardBatchRefusesUnreservedPositions() {
    KvCache cache(model_->kvLayout(16), 256);
    KvSequence seq;
    std::vector<float> logits(static_cast<size_t>(model_->config().nVocab));
    const ForwardItem item{&seq, kPromptA, logits};
    auto r = model_->forwardBatch(*backend_, cache, std::span(&item, 1));
    QVERIFY(!r);
    QVERIFY2(r.error().message.starts_with("KV positions [0, 19) are not reserved"), r.error().message.c_str());
    QVERIFY(seq.blockTable.empty());
    QCOMPARE(seq.nTokens, 0);
    QCOMPARE(cache.pool().nUsed(), 0);
    // Reserved, forwardBatch runs and still advances nothing.
    QVERIFY(cache.reserve(seq, static_cast<int32_t>(kPromptA.size())));
    QVERIFY(model_->forwardBatch(*backend_, cache, std::span(&item, 1)));
    QCOMPARE(seq.nTokens, 0);
    const std::vector<float> executed = logits;
    // The convenience: reserve, run, advance, in one call, with the same logits.
    KvSequence own;
    QVERIFY(model_->forward(*backend_, cache, own, kPromptA, logits));
    QCOMPARE(own.nTokens, static_cast<int32_t>(kPromptA.size()));
    QCOMPARE(logits, executed);
    cache.release(seq);
    cache.release(own);
}

QTEST_APPLESS_MAIN(TestStepState)
#include "test_step_state.moc"

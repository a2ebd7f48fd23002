// The Llama forward pass on tiny random models written by the project's own GGUF writer:
// batch invariance (a prompt prefilled at once gives bitwise the logits of token-by-token
// decode), KV prefix reuse across calls, and clear errors for out-of-range hyperparameters.
#include <QTemporaryDir>
#include <QtTest>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;

// One feature added to a tiny Llama that its forward pass does not compute.
enum class Extra { None, RopeFreqs, RopeScaling, QBias };

class TestLlamaForward : public QObject {
    Q_OBJECT
private slots:
    void prefillEqualsTokenByToken_data();
    void prefillEqualsTokenByToken();
    void reusedPrefixGivesSameTokens();
    void rejectsHugeBlockCount();
    void refusesWhatItDoesNotCompute_data();
    void refusesWhatItDoesNotCompute();

private:
    QTemporaryDir dir_;
};

void TestLlamaForward::prefillEqualsTokenByToken_data() {
    QTest::addColumn<int>("type");
    QTest::newRow("F32") << static_cast<int>(DType::F32);
    QTest::newRow("Q8_0") << static_cast<int>(DType::Q8_0);
}

void TestLlamaForward::prefillEqualsTokenByToken() {
    QFETCH(int, type);
    test::TinyLlamaShape shape;
    shape.weightType = static_cast<DType>(type);
    const QString path = dir_.filePath(QString("tiny-%1.gguf").arg(type));
    QVERIFY(test::tinyLlama(shape).writeFile(path.toStdString()));
    auto file = GgufFile::open(path.toStdString());
    QVERIFY2(file, file ? "" : file.error().message.c_str());
    auto model = Model::load(**file);
    QVERIFY2(model, model ? "" : model.error().message.c_str());
    auto backend = makeCpuReferenceBackend();
    const std::vector<int32_t> tokens{1, 262, 259, 100, 7, 263, 40, 41, 42, 200, 201, 202, 5, 6, 7, 8, 9, 10};
    const int nVocab = (*model)->config().nVocab;

    KvCache batchCache((*model)->kvLayout(4), 64), stepCache((*model)->kvLayout(16), 64);
    KvSequence batchSeq, stepSeq;
    std::vector<float> batchLogits(static_cast<size_t>(nVocab)), stepLogits(batchLogits.size());
    QVERIFY((*model)->forward(*backend, batchCache, batchSeq, tokens, batchLogits));
    for (int32_t t : tokens) QVERIFY((*model)->forward(*backend, stepCache, stepSeq, std::span(&t, 1), stepLogits));
    QCOMPARE(batchSeq.nTokens, static_cast<int32_t>(tokens.size()));
    QVERIFY(std::memcmp(batchLogits.data(), stepLogits.data(), batchLogits.size() * sizeof(float)) == 0);
    float spread = 0;
    for (float x : batchLogits) spread = std::max(spread, std::abs(x - batchLogits[0]));
    QVERIFY(spread > 0.0f);  // the model computes something that depends on the token
}

void TestLlamaForward::reusedPrefixGivesSameTokens() {
    const QString path = dir_.filePath("tiny-engine.gguf");
    QVERIFY(test::tinyLlama().writeFile(path.toStdString()));
    auto engine = Engine::load(path.toStdString(), {});
    QVERIFY2(engine, engine ? "" : engine.error().message.c_str());
    GenerateRequest req;
    req.prompt = (*engine)->rawPrompt(" the cat at the cat");
    req.maxTokens = 12;
    req.sampling.temperature = 0;
    const auto cb = [](TokenId, std::string_view) { return true; };
    auto first = (*engine)->generate(req, cb);
    QVERIFY(first);
    QCOMPARE(first->timings.prefillTokens, static_cast<int32_t>(req.prompt.size()));
    // The same prompt again: only its last token is computed; the reply is identical.
    auto second = (*engine)->generate(req, cb);
    QVERIFY(second);
    QCOMPARE(second->timings.prefillTokens, 1);
    QCOMPARE(second->tokens, first->tokens);
    // A fresh engine agrees.
    auto fresh = Engine::load(path.toStdString(), {});
    auto third = (*fresh)->generate(req, cb);
    QCOMPARE(third->tokens, first->tokens);
}

void TestLlamaForward::rejectsHugeBlockCount() {
    GgufWriter w = test::tinyLlama();
    w.set("llama.block_count", uint32_t{100000});
    const QString path = dir_.filePath("huge-blocks.gguf");
    QVERIFY(w.writeFile(path.toStdString()));
    auto engine = Engine::load(path.toStdString(), {});
    QVERIFY(!engine);
    QVERIFY2(engine.error().message.find("block_count") != std::string::npos, engine.error().message.c_str());
}

// A Llama 3.1+ file (per-dimension RoPE factors, llama3 scaling) or one with attention biases
// must be refused with the feature's name: run without it, it would give wrong logits. The
// same file without the feature (None) loads.
void TestLlamaForward::refusesWhatItDoesNotCompute_data() {
    QTest::addColumn<int>("extra");
    QTest::addColumn<QString>("named");
    QTest::newRow("none") << static_cast<int>(Extra::None) << QString();
    QTest::newRow("rope_freqs") << static_cast<int>(Extra::RopeFreqs) << "rope_freqs.weight";
    QTest::newRow("rope scaling") << static_cast<int>(Extra::RopeScaling) << "RoPE scaling 'linear'";
    QTest::newRow("q bias") << static_cast<int>(Extra::QBias) << "blk.0.attn_q.bias";
}

void TestLlamaForward::refusesWhatItDoesNotCompute() {
    QFETCH(int, extra);
    QFETCH(QString, named);
    test::TinyLlamaShape shape;
    GgufWriter w = test::tinyLlama(shape);
    switch (static_cast<Extra>(extra)) {
    case Extra::None: break;
    case Extra::RopeFreqs: {
        const int64_t half = shape.nEmbd / shape.nHeads / 2;
        w.addTensor("rope_freqs.weight", {half}, DType::F32, test::onesF32(half));
        break;
    }
    case Extra::RopeScaling:
        w.set("llama.rope.scaling.type", std::string("linear"));
        w.set("llama.rope.scaling.factor", 4.0f);
        break;
    case Extra::QBias:
        w.addTensor("blk.0.attn_q.bias", {shape.nEmbd}, DType::F32, test::onesF32(shape.nEmbd));
        break;
    }
    const QString path = dir_.filePath(QString("tiny-extra-%1.gguf").arg(extra));
    QVERIFY(w.writeFile(path.toStdString()));
    auto file = GgufFile::open(path.toStdString());
    QVERIFY2(file, file ? "" : file.error().message.c_str());
    auto model = Model::load(**file);
    if (named.isEmpty()) {
        QVERIFY2(model, model ? "" : model.error().message.c_str());
        return;
    }
    QVERIFY(!model);
    QCOMPARE(model.error().code, ErrorCode::Unsupported);
    QVERIFY2(QString::fromStdString(model.error().message).contains(named), model.error().message.c_str());
}

QTEST_APPLESS_MAIN(TestLlamaForward)
#include "test_llama_forward.moc"

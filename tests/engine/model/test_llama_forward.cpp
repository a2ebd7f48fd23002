// The Llama forward pass on tiny random models written by the project's own GGUF writer:
// batch invariance (a prompt prefilled at once gives bitwise the logits of token-by-token
// decode), KV prefix reuse across calls, and clear errors for out-of-range hyperparameters.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;

// One feature added to a tiny Llama that its forward pass does not compute.
enum class Extra { None, RopeScaling, OutputBias };

class TestLlamaForward : public QObject {
    Q_OBJECT
private slots:
    void prefillEqualsTokenByToken_data();
    void prefillEqualsTokenByToken();
    void reusedPrefixGivesSameTokens();
    void rejectsHugeBlockCount();
    void refusesWhatItDoesNotCompute_data();
    void refusesWhatItDoesNotCompute();
    void ropeFreqFactorsTurnTheAngles();

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

// A file with RoPE scaling by a factor or with a bias on the attention output must be refused
// with the feature's name: run without it, it would give wrong logits. The same file without the
// feature (None) loads.
void TestLlamaForward::refusesWhatItDoesNotCompute_data() {
    QTest::addColumn<int>("extra");
    QTest::addColumn<QString>("named");
    QTest::newRow("none") << static_cast<int>(Extra::None) << QString();
    QTest::newRow("rope scaling") << static_cast<int>(Extra::RopeScaling) << "RoPE scaling 'linear'";
    QTest::newRow("attention output bias") << static_cast<int>(Extra::OutputBias) << "blk.0.attn_output.bias";
}

void TestLlamaForward::refusesWhatItDoesNotCompute() {
    QFETCH(int, extra);
    QFETCH(QString, named);
    test::TinyLlamaShape shape;
    GgufWriter w = test::tinyLlama(shape);
    switch (static_cast<Extra>(extra)) {
    case Extra::None: break;
    case Extra::RopeScaling:
        w.set("llama.rope.scaling.type", std::string("linear"));
        w.set("llama.rope.scaling.factor", 4.0f);
        break;
    case Extra::OutputBias:
        w.addTensor("blk.0.attn_output.bias", {shape.nEmbd}, DType::F32, test::onesF32(shape.nEmbd));
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

// Llama 3.1's rope_freqs.weight: factors of 1 give bitwise the logits of the file without them;
// other factors change them, and prefill still equals token-by-token decode. (Agreement with
// llama.cpp: test_conformance_rope_freqs.) Factors that are not positive are refused.
void TestLlamaForward::ropeFreqFactorsTurnTheAngles() {
    test::TinyLlamaShape shape;
    const int64_t half = shape.nEmbd / shape.nHeads / 2;
    const auto logitsOf = [&](const std::vector<float>* factors, const QString& name, bool byToken) {
        GgufWriter w = test::tinyLlama(shape);
        if (factors != nullptr) w.addTensor("rope_freqs.weight", {half}, DType::F32, test::f32Bytes(*factors));
        const QString path = dir_.filePath(name);
        std::vector<float> logits;
        if (!w.writeFile(path.toStdString())) return logits;
        auto file = GgufFile::open(path.toStdString());
        if (!file) return logits;
        auto model = Model::load(**file);
        if (!model) return logits;
        auto backend = makeCpuReferenceBackend();
        const std::vector<int32_t> tokens{1, 262, 259, 100, 7, 263, 40, 41, 42, 200, 201, 202, 5, 6, 7, 8, 9, 10};
        KvCache cache((*model)->kvLayout(4), 64);
        KvSequence seq;
        logits.resize(static_cast<size_t>((*model)->config().nVocab));
        if (!byToken) {
            if (!(*model)->forward(*backend, cache, seq, tokens, logits)) logits.clear();
        } else {
            for (int32_t t : tokens)
                if (!(*model)->forward(*backend, cache, seq, std::span(&t, 1), logits)) logits.clear();
        }
        return logits;
    };
    std::vector<float> ones(static_cast<size_t>(half), 1.0f), slowed(ones);
    for (size_t i = 0; i < slowed.size(); ++i) slowed[i] = i < slowed.size() / 4 ? 1.0f : 8.0f;
    const std::vector<float> plain = logitsOf(nullptr, "plain.gguf", false);
    const std::vector<float> withOnes = logitsOf(&ones, "ones.gguf", false);
    const std::vector<float> withSlowed = logitsOf(&slowed, "slowed.gguf", false);
    const std::vector<float> slowedByToken = logitsOf(&slowed, "slowed-by-token.gguf", true);
    QVERIFY(!plain.empty() && !withOnes.empty() && !withSlowed.empty() && !slowedByToken.empty());
    QVERIFY(std::memcmp(plain.data(), withOnes.data(), plain.size() * sizeof(float)) == 0);
    QVERIFY(std::memcmp(plain.data(), withSlowed.data(), plain.size() * sizeof(float)) != 0);
    QVERIFY(std::memcmp(withSlowed.data(), slowedByToken.data(), plain.size() * sizeof(float)) == 0);

    std::vector<float> bad = ones;
    bad[3] = 0.0f;
    GgufWriter w = test::tinyLlama(shape);
    w.addTensor("rope_freqs.weight", {half}, DType::F32, test::f32Bytes(bad));
    const QString path = dir_.filePath("bad-factors.gguf");
    QVERIFY(w.writeFile(path.toStdString()));
    auto file = GgufFile::open(path.toStdString());
    QVERIFY(file);
    auto model = Model::load(**file);
    QVERIFY(!model);
    QVERIFY2(model.error().message.find("rope_freqs.weight") != std::string::npos, model.error().message.c_str());
}

QTEST_APPLESS_MAIN(TestLlamaForward)
#include "test_llama_forward.moc"

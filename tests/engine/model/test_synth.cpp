// Synthetic models (engine/model/synth.h): every weight type's quantizer round-trips within its
// precision through the reference dequantizer; the tiny shapes written in every type load in
// the engine and give finite, varied logits; shapes a type cannot hold are refused.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <map>
#include <random>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/model/synth.h"
#include "engine/tokenizer/tokenizer.h"
#include "kernels/cpu/reference/quants.h"
#include "tests/support/test_env.h"

using namespace hearth;

namespace {

const DType kTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                        DType::Q5_1, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};

// Relative RMS error a type's rounding may leave on normal data: about 1.5× what these
// quantizers measured (Q4_0 0.085, Q5_0 0.042, Q8_0 0.0053, Q4_K 0.077, Q6_K 0.019). A block
// layout written wrongly reads back as noise (errors near 1), far outside these.
double rmsBound(DType t) {
    switch (t) {
    case DType::F32: return 0;
    case DType::F16: return 1e-3;
    case DType::BF16: return 8e-3;
    case DType::Q8_0: return 0.01;
    case DType::Q6_K: return 0.03;
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q5_K: return 0.06;
    default: return 0.12;  // the 4-bit types
    }
}

}  // namespace

class TestSynth : public QObject {
    Q_OBJECT
private slots:
    void quantizersRoundTrip_data();
    void quantizersRoundTrip();
    void tinyModelsLoadAndRun_data();
    void tinyModelsLoadAndRun();
    void refusesWhatItCannotWrite();
    void realVocabulary();

private:
    QTemporaryDir dir_;
};

void TestSynth::quantizersRoundTrip_data() {
    QTest::addColumn<int>("type");
    for (const DType t : kTypes) QTest::newRow(dtypeInfo(t).name) << static_cast<int>(t);
}

void TestSynth::quantizersRoundTrip() {
    QFETCH(int, type);
    const auto t = static_cast<DType>(type);
    constexpr int64_t n = 4096;
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> x(n), y(n, -1.0f);
    for (float& v : x) v = normal(rng);
    x[5] = 0.0f, x[300] = 0.1f;  // an exact zero and an outlier
    std::vector<uint8_t> q(rowBytes(t, n));
    synthQuantizeRow(t, x.data(), q.data(), n);
    ref::dequantizeRow(t, q.data(), y.data(), n);
    double err = 0, ref = 0;
    for (int64_t i = 0; i < n; ++i) err += (x[i] - y[i]) * double(x[i] - y[i]), ref += x[i] * double(x[i]);
    const double rel = std::sqrt(err / ref);
    qInfo("%s: relative RMS error %.5f (bound %.3f)", dtypeInfo(t).name, rel, rmsBound(t));
    QVERIFY2(rel <= rmsBound(t), qPrintable(QStringLiteral("relative RMS error %1").arg(rel)));
    if (t != DType::F32) QVERIFY(rel > 0);  // it did quantize
}

void TestSynth::tinyModelsLoadAndRun_data() {
    QTest::addColumn<QString>("shape");
    QTest::addColumn<int>("type");
    for (const DType t : kTypes)
        QTest::newRow(qPrintable(QStringLiteral("tiny %1").arg(dtypeInfo(t).name))) << "tiny" << static_cast<int>(t);
    for (const char* shape : {"tiny-gemma3", "tiny-qwen2", "tiny-qwen3", "tiny-phi3", "tiny-gemma2"})
        for (const DType t : {DType::F16, DType::Q8_0, DType::Q4_K})
            QTest::newRow(qPrintable(QStringLiteral("%1 %2").arg(shape, dtypeInfo(t).name)))
                << shape << static_cast<int>(t);
}

void TestSynth::tinyModelsLoadAndRun() {
    QFETCH(QString, shape);
    QFETCH(int, type);
    auto s = findSynthShape(shape.toStdString());
    QVERIFY(s.has_value());
    const std::string path = dir_.filePath(shape + QString::number(type) + ".gguf").toStdString();
    QVERIFY(writeSynthModel(*s, {.type = static_cast<DType>(type), .seed = 5}, path).has_value());
    auto engine = Engine::load(path, EngineOptions{});
    QVERIFY2(engine.has_value(), engine ? "" : engine.error().message.c_str());
    Engine& e = **engine;
    QCOMPARE(e.config().nLayers, s->nLayers);
    QCOMPARE(QString::fromStdString(e.config().architecture), QString::fromStdString(s->architecture));
    QCOMPARE(e.config().headDim, s->headDim > 0 ? s->headDim : s->nEmbd / s->nHeads);
    // The family's layout was bound as such (ModelConfig::features, what `hearth-cli info` shows).
    const std::map<QString, std::string> feature{
        {"tiny", "RoPE on pairs"},
        {"tiny-qwen2", "Q/K/V biases"},
        {"tiny-qwen3", "QK norm"},
        {"tiny-phi3", "fused QKV, fused gate/up"},
        {"tiny-gemma2", "sliding window 64 on 2 of 4 layers, attention soft-cap 50, final soft-cap 30"},
        {"tiny-gemma3", "sliding window 64 on 6 of 7 layers"}};
    QVERIFY2(e.config().features.find(feature.at(shape)) != std::string::npos, e.config().features.c_str());
    QCOMPARE(e.config().nVocab, s->nVocab);
    QCOMPARE(e.tokenizer().nVocab(), s->nVocab);
    uint64_t dataBytes = 0;
    for (const GgufTensorInfo& t : e.file().tensors()) dataBytes += t.nBytes;
    QCOMPARE(dataBytes, synthTensorBytes(*s, static_cast<DType>(type)));
    GenerateRequest req;
    req.prompt = e.rawPrompt("the cat sat on the mat");
    req.maxTokens = 4;
    req.sampling.temperature = 0;
    req.nTopLogits = s->nVocab;  // every logit
    auto result = e.generate(req, [](TokenId, std::string_view) { return true; });
    QVERIFY(result.has_value());
    QVERIFY(!result->topLogits.empty());
    for (const auto& logits : result->topLogits) {
        QCOMPARE(std::ssize(logits), s->nVocab);
        for (const auto& [id, logit] : logits) QVERIFY2(std::isfinite(logit), "a logit is not finite");
        QVERIFY(logits.front().second > logits.back().second);  // not all equal
    }
}

void TestSynth::refusesWhatItCannotWrite() {
    auto smol = findSynthShape("smollm2-135m");
    QVERIFY(smol.has_value());
    const std::string path = dir_.filePath("refused.gguf").toStdString();
    auto r = writeSynthModel(*smol, {.type = DType::Q4_K, .seed = 1}, path);  // rows of 576: not a multiple of 256
    QVERIFY(!r.has_value());
    QCOMPARE(r.error().code, ErrorCode::InvalidArgument);
    QVERIFY(!QFileInfo::exists(QString::fromStdString(path)));
    QVERIFY(!writeSynthModel(*smol, {.type = DType::Q8_K, .seed = 1}, path).has_value());  // an activation type
    QVERIFY(!findSynthShape("no-such-shape").has_value());
    auto tiny = findSynthShape("tiny");
    QVERIFY(!writeSynthModel(*tiny, {.type = DType::Q8_0, .seed = 1}, dir_.filePath("no/such/dir.gguf").toStdString())
                 .has_value());
}

// --vocab: a tiny Qwen 2 with llama.cpp's real Qwen 2 vocabulary (151,643 pieces) takes its size
// for the embedding and tokenizes as the vocabulary file does.
void TestSynth::realVocabulary() {
    const QString vocabPath = hearth::test::llamaVocabDir() + "/ggml-vocab-qwen2.gguf";
    HEARTH_REQUIRE_FILE(vocabPath);
    auto s = findSynthShape("tiny-qwen2");
    QVERIFY(s.has_value());
    const std::string path = dir_.filePath("qwen2-real-vocab.gguf").toStdString();
    auto written = writeSynthModel(*s, {DType::Q4_0, 3, vocabPath.toStdString()}, path);
    QVERIFY2(written, written ? "" : written.error().message.c_str());
    auto vocabFile = GgufFile::open(vocabPath.toStdString());
    QVERIFY(vocabFile.has_value());
    auto vocab = Tokenizer::fromGguf(**vocabFile);
    QVERIFY(vocab.has_value());
    auto engine = Engine::load(path, EngineOptions{});
    QVERIFY2(engine.has_value(), engine ? "" : engine.error().message.c_str());
    QCOMPARE((*engine)->config().nVocab, (*vocab)->nVocab());
    QVERIFY((*vocab)->nVocab() > 150000);
    const std::string text = "Hello world, it's 2026! 你好，世界 <|im_start|>user";
    QCOMPARE((*engine)->tokenizer().encode(text, false, true), (*vocab)->encode(text, false, true));
    QVERIFY(!writeSynthModel(*s, {DType::Q4_0, 3, dir_.filePath("none.gguf").toStdString()}, path).has_value());
}

QTEST_GUILESS_MAIN(TestSynth)
#include "test_synth.moc"

// The Gemma 3 forward pass on tiny random models written by the project's own GGUF writer:
// batch invariance past the sliding window (prefill gives bitwise the logits of token-by-token
// decode), the window masking exactly the positions it should, the local/global layer pattern
// from metadata, and clear errors for what is not supported.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "tests/support/tiny_gemma3.h"

using namespace hearth;

namespace {

struct Loaded {
    std::unique_ptr<GgufFile> file;
    std::unique_ptr<Model> model;
};

Result<Loaded> load(const GgufWriter& w, const QString& path) {
    if (auto r = w.writeFile(path.toStdString()); !r) return std::unexpected(r.error());
    auto file = GgufFile::open(path.toStdString());
    if (!file) return std::unexpected(file.error());
    auto model = Model::load(**file);
    if (!model) return std::unexpected(model.error());
    return Loaded{std::move(*file), std::move(*model)};
}

std::vector<float> lastLogits(Model& model, std::span<const int32_t> tokens) {
    auto backend = makeCpuReferenceBackend();
    KvCache cache(model.kvLayout(), 256);
    KvSequence seq;
    std::vector<float> logits(static_cast<size_t>(model.config().nVocab));
    if (!model.forward(*backend, cache, seq, tokens, logits)) return {};
    return logits;
}

const std::vector<int32_t> kTokens{2, 262, 263, 100, 7, 264, 40, 41, 42, 200, 201, 202, 5, 6, 7, 8, 9, 10};

}  // namespace

class TestGemma3Forward : public QObject {
    Q_OBJECT
private slots:
    void prefillEqualsTokenByToken_data();
    void prefillEqualsTokenByToken();
    void windowMasksOnlyOlderPositions();
    void layerPatternFromMetadata_data();
    void layerPatternFromMetadata();
    void rejectsUnsupportedMetadata_data();
    void rejectsUnsupportedMetadata();
    void engineRunsChat();

private:
    QTemporaryDir dir_;
};

void TestGemma3Forward::prefillEqualsTokenByToken_data() {
    QTest::addColumn<int>("type");
    QTest::newRow("F32") << static_cast<int>(DType::F32);
    QTest::newRow("Q8_0") << static_cast<int>(DType::Q8_0);
}

void TestGemma3Forward::prefillEqualsTokenByToken() {
    QFETCH(int, type);
    test::TinyGemma3Shape shape;
    shape.weightType = static_cast<DType>(type);
    auto m = load(test::tinyGemma3(shape), dir_.filePath(QString("tiny-%1.gguf").arg(type)));
    QVERIFY2(m, m ? "" : m.error().message.c_str());
    Model& model = *m->model;
    auto backend = makeCpuReferenceBackend();
    // 18 tokens against a window of 5: the local layers drop positions in both runs.
    KvCache batchCache(model.kvLayout(4), 64), stepCache(model.kvLayout(16), 64);
    KvSequence batchSeq, stepSeq;
    std::vector<float> batchLogits(static_cast<size_t>(model.config().nVocab)), stepLogits(batchLogits.size());
    QVERIFY(model.forward(*backend, batchCache, batchSeq, kTokens, batchLogits));
    for (int32_t t : kTokens) QVERIFY(model.forward(*backend, stepCache, stepSeq, std::span(&t, 1), stepLogits));
    QCOMPARE(batchSeq.nTokens, static_cast<int32_t>(kTokens.size()));
    QVERIFY(std::memcmp(batchLogits.data(), stepLogits.data(), batchLogits.size() * sizeof(float)) == 0);
    float spread = 0;
    for (float x : batchLogits) spread = std::max(spread, std::abs(x - batchLogits[0]));
    QVERIFY(spread > 0.0f);
}

void TestGemma3Forward::windowMasksOnlyOlderPositions() {
    // The same weights with a window of 5 and a window longer than any prompt here: identical
    // while the prompt fits in the window (a query at p sees p-4..p), different after.
    test::TinyGemma3Shape narrow, wide;
    wide.slidingWindow = 64;
    auto a = load(test::tinyGemma3(narrow), dir_.filePath("narrow.gguf"));
    auto b = load(test::tinyGemma3(wide), dir_.filePath("wide.gguf"));
    QVERIFY(a && b);
    const auto fits = std::span(kTokens).first(5), exceeds = std::span(kTokens).first(6);
    QVERIFY(lastLogits(*a->model, fits) == lastLogits(*b->model, fits));
    QVERIFY(lastLogits(*a->model, exceeds) != lastLogits(*b->model, exceeds));
}

void TestGemma3Forward::layerPatternFromMetadata_data() {
    QTest::addColumn<int>("window");
    QTest::addColumn<int>("pattern");  // -1: no key
    QTest::addColumn<QString>("expected");  // per layer: L local, G global
    QTest::newRow("default 6") << 5 << -1 << "LLLLLGL";
    QTest::newRow("period 2") << 5 << 2 << "LGLGLGL";
    QTest::newRow("period 1: all global") << 5 << 1 << "GGGGGGG";
    QTest::newRow("period 0: all local") << 5 << 0 << "LLLLLLL";
    QTest::newRow("no window") << 0 << -1 << "GGGGGGG";
}

void TestGemma3Forward::layerPatternFromMetadata() {
    QFETCH(int, window);
    QFETCH(int, pattern);
    QFETCH(QString, expected);
    test::TinyGemma3Shape shape;
    shape.slidingWindow = window;
    shape.slidingPattern = pattern;
    auto m = load(test::tinyGemma3(shape), dir_.filePath("pattern.gguf"));
    QVERIFY2(m, m ? "" : m.error().message.c_str());
    const ModelConfig& c = m->model->config();
    QString layers;
    for (int il = 0; il < c.nLayers; ++il)
        layers += !c.slidingLayers.empty() && c.slidingLayers[static_cast<size_t>(il)] ? 'L' : 'G';
    QCOMPARE(layers, expected);
    QCOMPARE(c.slidingWindow, window);
    QCOMPARE(c.headDim, 32);
    QVERIFY(c.ropeStyle == RopeStyle::HalfSplit);
}

void TestGemma3Forward::rejectsUnsupportedMetadata_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("message");
    QTest::newRow("rope scaling") << "gemma3.rope.scaling.type"
                                  << "RoPE scaling";
    QTest::newRow("pattern array length") << "gemma3.attention.sliding_window_pattern"
                                          << "sliding_window_pattern";
    QTest::newRow("value_length") << "gemma3.attention.value_length"
                                  << "value_length";
}

void TestGemma3Forward::rejectsUnsupportedMetadata() {
    QFETCH(QString, key);
    QFETCH(QString, message);
    GgufWriter w = test::tinyGemma3();
    if (key.endsWith("scaling.type")) {
        w.set(key.toStdString(), "linear");
        w.set("gemma3.rope.scaling.factor", 8.0f);
    } else if (key.endsWith("pattern")) {
        w.set(key.toStdString(), std::vector<bool>{true, false});  // 2 entries for 7 layers
    } else {
        w.set(key.toStdString(), uint32_t{16});
    }
    auto m = load(w, dir_.filePath("bad.gguf"));
    QVERIFY(!m);
    QVERIFY2(QString::fromStdString(m.error().message).contains(message), m.error().message.c_str());
}

void TestGemma3Forward::engineRunsChat() {
    // Through the engine: the Gemma chat format (no template in the file) and a greedy reply
    // that reuses the prompt's KV when asked twice.
    const QString path = dir_.filePath("engine.gguf");
    QVERIFY(test::tinyGemma3().writeFile(path.toStdString()));
    auto engine = Engine::load(path.toStdString(), {});
    QVERIFY2(engine, engine ? "" : engine.error().message.c_str());
    QCOMPARE(std::string((*engine)->chatFormat().name()), std::string("gemma"));
    GenerateRequest req;
    req.prompt = (*engine)->chatPrompt({{ChatRole::User, "the cat"}});
    QCOMPARE(req.prompt.front(), 2);  // one BOS
    QVERIFY(req.prompt[1] != 2);
    req.maxTokens = 10;
    req.sampling.temperature = 0;
    const auto cb = [](TokenId, std::string_view) { return true; };
    auto first = (*engine)->generate(req, cb);
    QVERIFY(first);
    auto second = (*engine)->generate(req, cb);
    QVERIFY(second);
    QCOMPARE(second->timings.prefillTokens, 1);
    QCOMPARE(second->tokens, first->tokens);
}

QTEST_APPLESS_MAIN(TestGemma3Forward)
#include "test_gemma3_forward.moc"

// Conformance: perplexity of Hearth and the oracle on the same token ids. One protocol for both
// models: the text of /usr/share/common-licenses/GPL-3 (read at test time), tokenized once by
// Hearth; chunks of 512 tokens, each BOS then the next 511 text tokens; positions 256-511 of each
// chunk scored; 8 chunks (2,048 scored tokens). The oracle runs llama.cpp with logits_all.
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QtTest>
#include <cmath>

#include "engine/engine.h"
#include "engine/eval/perplexity.h"
#include "tests/support/python_json.h"
#include "tests/support/test_env.h"

using namespace hearth;
using namespace hearth::test;

namespace {

constexpr int kChunkTokens = 512;
constexpr int kFirstScored = 256;
constexpr int kChunks = 8;
const char* const kTextPath = "/usr/share/common-licenses/GPL-3";

QJsonObject readJson(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject{};
}

}  // namespace

class TestConformancePerplexity : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void perplexity_data();
    void perplexity();

private:
    QJsonObject tolerances_;
    QByteArray text_;
};

void TestConformancePerplexity::initTestCase() {
    HEARTH_REQUIRE_FILE(oraclePython());
    HEARTH_REQUIRE_FILE(kTextPath);
    QFile f(kTextPath);
    QVERIFY(f.open(QIODevice::ReadOnly));
    text_ = f.readAll();
    tolerances_ = readJson(sourceDir() + "/tests/conformance/tolerances.json");
    QVERIFY(tolerances_.contains("perplexity_relative"));
}

void TestConformancePerplexity::perplexity_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("type");
    QTest::newRow("SmolLM2-135M") << modelFile("SmolLM2-135M-Instruct.Q4_1.gguf") << "Q4_1";
    QTest::newRow("gemma-3-270m") << modelFile("gemma-3-270m-q4_k_m.gguf") << "Q4_K_M";
}

void TestConformancePerplexity::perplexity() {
    QFETCH(QString, model);
    QFETCH(QString, type);
    HEARTH_REQUIRE_FILE(model);
    auto engine = Engine::load(model.toStdString(), {});
    QVERIFY2(engine, engine ? "" : engine.error().message.c_str());
    const Tokenizer& tok = (*engine)->tokenizer();
    QVERIFY(tok.bos() >= 0);
    const std::vector<int32_t> text =
        tok.encode(std::string_view(text_.constData(), static_cast<size_t>(text_.size())), false, false);
    QVERIFY2(text.size() >= static_cast<size_t>(kChunks * (kChunkTokens - 1)), "the text is too short");
    std::vector<std::vector<int32_t>> chunks;
    QJsonArray ids;  // the chunks back to back: the oracle cuts them at the same boundaries
    for (int c = 0; c < kChunks; ++c) {
        std::vector<int32_t> chunk{tok.bos()};
        const auto from = text.begin() + static_cast<ptrdiff_t>(c) * (kChunkTokens - 1);
        chunk.insert(chunk.end(), from, from + (kChunkTokens - 1));
        for (int32_t id : chunk) ids.append(id);
        chunks.push_back(std::move(chunk));
    }

    QElapsedTimer timer;
    timer.start();
    const QJsonObject oracle = askPython(
        oraclePython(), sourceDir() + "/tests/conformance/oracle.py",
        {{"op", "perplexity"}, {"model", model}, {"tokens", ids}, {"n_ctx", kChunkTokens}, {"first", kFirstScored}});
    const qint64 oracleMs = timer.restart();
    QVERIFY2(!oracle.contains("error"), qPrintable(oracle["error"].toString()));

    auto loaded = Model::load((*engine)->file());
    QVERIFY(loaded);
    auto backend = makeBestCpuBackend();
    auto ours = hearth::perplexity(**loaded, *backend, chunks, kFirstScored);
    const qint64 hearthMs = timer.elapsed();
    QVERIFY2(ours, ours ? "" : ours.error().message.c_str());

    QCOMPARE(ours->nScored(), static_cast<int64_t>(oracle["n_scored"].toInteger()));
    QVERIFY(ours->nScored() >= 2000);
    const double h = ours->perplexity(), o = oracle["ppl"].toDouble();
    const double relative = std::abs(h - o) / o;
    const double limit = tolerances_["perplexity_relative"].toObject()["value"].toDouble();
    const QByteArray tag = QTest::currentDataTag();
    qInfo("| model | type | metric | hearth | oracle | difference | limit |");
    qInfo("| %s | %s | perplexity, GPL-3, %d chunks x %d, %lld scored | %.4f | %.4f | %+.3f%% | <= %.2f%% |",
          tag.constData(), qPrintable(type), kChunks, kChunkTokens, static_cast<long long>(ours->nScored()), h, o,
          100.0 * (h - o) / o, 100.0 * limit);
    const QJsonArray oracleChunks = oracle["chunks"].toArray();
    for (size_t c = 0; c < ours->chunkNll.size() && c < static_cast<size_t>(oracleChunks.size()); ++c) {
        const double n = static_cast<double>(ours->chunkScored[c]);
        qInfo("|   chunk %zu | | mean NLL | %.5f | %.5f | %+.5f | |", c, ours->chunkNll[c] / n,
              oracleChunks[static_cast<qsizetype>(c)]["nll"].toDouble() / n,
              (ours->chunkNll[c] - oracleChunks[static_cast<qsizetype>(c)]["nll"].toDouble()) / n);
    }
    qInfo("  time: hearth %.1f s, oracle %.1f s (cached when fast)", hearthMs / 1000.0, oracleMs / 1000.0);
    QVERIFY2(relative <= limit, "perplexity differs from the oracle's more than the tolerance");
}

QTEST_GUILESS_MAIN(TestConformancePerplexity)
#include "test_conformance_perplexity.moc"

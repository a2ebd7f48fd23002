// hearth-cli synth and bench as a user runs them: a tiny synthetic model written by the CLI,
// then bench --json on it with tiny token counts. Checks the report's fields are present and
// consistent (weight bytes counted independently from the shape), not how fast anything ran.
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "engine/model/synth.h"
#include "tests/support/cli_runner.h"

using namespace hearth;
using namespace hearth::test;

class TestBenchCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void usageErrors();
    void jsonReport();

private:
    QTemporaryDir dir_;
    QString model_;
};

void TestBenchCli::initTestCase() {
    QVERIFY(QFileInfo::exists(cliExe()));
    model_ = dir_.filePath("tiny-q8_0.gguf");
    const CliRun r = runCli({"synth", "--shape", "tiny", "--type", "q8_0", "--out", model_, "--seed", "3"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(QFileInfo::exists(model_));
}

void TestBenchCli::usageErrors() {
    QCOMPARE(runCli({"bench"}).exitCode, 2);
    QCOMPARE(runCli({"bench", "--model", model_, "--gen-tokens", "1"}).exitCode, 2);
    QCOMPARE(runCli({"synth", "--shape", "tiny", "--type", "Q9_9", "--out", dir_.filePath("x.gguf")}).exitCode, 2);
    QCOMPARE(runCli({"synth", "--shape", "nope", "--type", "Q8_0", "--out", dir_.filePath("x.gguf")}).exitCode, 2);
    const CliRun k = runCli({"synth", "--shape", "smollm2-135m", "--type", "Q4_K", "--out", dir_.filePath("x.gguf")});
    QCOMPARE(k.exitCode, 1);
    QVERIFY(k.err.contains("not a multiple"));
    const CliRun missing = runCli({"bench", "--model", dir_.filePath("missing.gguf")});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY(!missing.crashed);
}

void TestBenchCli::jsonReport() {
    const CliRun r = runCli({"bench", "--model", model_, "--threads", "1", "--prompt-tokens", "24", "--gen-tokens", "6",
                             "--repeat", "3", "--probe-mb", "16", "--json"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(r.out.count('\n'), 1);  // one line
    const QJsonObject j = r.json();
    for (const char* key :
         {"threads", "bandwidth_gb_s", "fma_peak_gflops", "weight_bytes_per_token", "decode_tokens_per_s",
          "decode_pct_of_bandwidth", "prefill_tokens_per_s", "prefill_pct_of_fma_peak", "peak_rss_mb"}) {
        QVERIFY2(j.contains(key), key);
        QVERIFY2(std::isfinite(j[key].toDouble()) && j[key].toDouble() > 0, key);
    }
    QCOMPARE(j["threads"].toInt(), 1);
    QCOMPARE(j["prompt_tokens"].toInt(), 24);
    QCOMPARE(j["repeat"].toInt(), 3);
    // The tiny shape in Q8_0 (34 bytes per 32 elements), counted from its dimensions: per layer
    // q, k, v, o, gate, up, down; the output matrix; one row of the embedding table.
    const SynthShape s = *findSynthShape("tiny");
    const int64_t kv = int64_t{s.nEmbd} / s.nHeads * s.nKvHeads;
    const int64_t perLayer = s.nEmbd * (2 * int64_t{s.nEmbd} + 2 * kv) + 3 * int64_t{s.nEmbd} * s.nFf;
    const int64_t elements = s.nLayers * perLayer + int64_t{s.nVocab} * s.nEmbd + s.nEmbd;
    QCOMPARE(static_cast<int64_t>(j["weight_bytes_per_token"].toDouble()), elements / 32 * 34);
    // The bandwidth used is the larger of the two medians; the spreads are ordered.
    const QJsonObject read = j["read_gb_s"].toObject(), triad = j["triad_gb_s"].toObject();
    QCOMPARE(j["bandwidth_gb_s"].toDouble(), std::max(read["median"].toDouble(), triad["median"].toDouble()));
    for (const char* key : {"read_gb_s", "triad_gb_s", "decode", "prefill"}) {
        const QJsonObject o = j[key].toObject();
        QVERIFY2(o["min"].toDouble() <= o["median"].toDouble() && o["median"].toDouble() <= o["max"].toDouble(), key);
        QVERIFY2(o["min"].toDouble() > 0, key);
    }
    QVERIFY(j["fma_plain_loop_gflops"].toDouble() > 0);
    QVERIFY(j["peak_rss_mb"].toDouble() < 1000);  // the probe's buffer is not counted; the model is ~1 MB
    QVERIFY(!j.contains("oracle"));
}

QTEST_GUILESS_MAIN(TestBenchCli)
#include "test_bench_cli.moc"

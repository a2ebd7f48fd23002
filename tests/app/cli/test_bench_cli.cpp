// hearth-cli synth and bench as a user runs them: a tiny synthetic model written by the CLI,
// then bench --json on it with tiny token counts, and bench --depth's argument handling and
// report (text and JSON). Checks the report's fields are present and consistent (weight and KV
// bytes counted independently from the shape), not how fast anything ran. No llama.cpp runs:
// --compare-oracle is checked only where llama-bench is missing. bench-spec --dump: the replies
// and the store written as JSON for tests/perf/spec_ceiling.py; --modes for the history workload.
#include <QJsonArray>
#include <QJsonDocument>
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
    void depthUsageErrors();
    void depthJsonReport();
    void depthTextReport();
    void depthLlamaBenchMissing();
    void benchSpecDump();

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

namespace {

// The common arguments of a quick depth run on the tiny model.
QStringList depthArgs(const QString& model, const QString& depths) {
    return {"bench", model.isEmpty() ? QString() : "--model",
            model,   "--depth",
            depths,  "--threads",
            "1",     "--prompt-tokens",
            "24",    "--gen-tokens",
            "6",     "--repeat",
            "2",     "--probe-mb",
            "16"};
}

}  // namespace

void TestBenchCli::depthUsageErrors() {
    for (const char* bad : {"x", "16,", "0", "-16", "16,,32"}) {
        const CliRun r = runCli(depthArgs(model_, bad));
        QVERIFY2(r.exitCode == 2, bad);
        QVERIFY2(r.err.contains("--depth"), r.err.constData());
    }
    // The tiny shape is trained for 2048 positions: 6 tokens decoded at 2043 would reach 2048.
    QCOMPARE(findSynthShape("tiny")->contextLength, 2048);
    const CliRun deep = runCli(depthArgs(model_, "16,2043"));
    QCOMPARE(deep.exitCode, 1);
    QVERIFY2(deep.err.contains("trained context of 2048") && deep.err.contains("2042"), deep.err.constData());
    QVERIFY(deep.out.isEmpty());  // refused before anything ran
    const CliRun missing = runCli(depthArgs(dir_.filePath("missing.gguf"), "16"));
    QCOMPARE(missing.exitCode, 1);
    QVERIFY(!missing.crashed);
}

void TestBenchCli::depthJsonReport() {
    // 2042 is the deepest decode allowed; its 24-token prefill would pass the context.
    const CliRun r = runCli(depthArgs(model_, "16,40,2042") << "--json");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(r.out.count('\n'), 1);
    const QJsonObject j = r.json();
    QCOMPARE(j["threads"].toInt(), 1);
    QCOMPARE(j["gen_tokens"].toInt(), 6);
    QCOMPARE(j["prefill_tokens"].toInt(), 24);
    QCOMPARE(j["trained_context"].toInt(), 2048);
    QVERIFY(!j["host"].toObject()["cpu"].toString().isEmpty());
    QVERIFY(j["bandwidth_gb_s"].toDouble() > 0);
    QVERIFY(!j.contains("llama_cpp") && !j.contains("llama_cpp_missing"));
    const QJsonArray depths = j["depths"].toArray();
    QCOMPARE(depths.size(), 3);
    const SynthShape s = *findSynthShape("tiny");
    const double headDim = double(s.nEmbd) / s.nHeads;
    const double bw = j["bandwidth_gb_s"].toDouble() * 1e9;
    for (int i = 0; i < 3; ++i) {
        const QJsonObject d = depths[i].toObject();
        const int n = d["depth"].toInt();
        const int expected[] = {16, 40, 2042};
        QCOMPARE(n, expected[i]);
        // The timed decode steps compute positions n .. n+4; each reads K and V (F16) of every
        // position up to its own, in every layer.
        double positions = 0;
        for (int p = n; p < n + 5; ++p) positions += p + 1;
        const double kv = s.nLayers * 2.0 * s.nKvHeads * headDim * 2 * positions / 5;
        QCOMPARE(d["kv_bytes_per_token"].toDouble(), kv);
        QCOMPARE(d["weight_bytes_per_token"].toDouble(), j["weight_bytes_per_token"].toDouble());
        const double bound = bw / (d["weight_bytes_per_token"].toDouble() + kv);
        QVERIFY(qAbs(d["bandwidth_bound_tokens_per_s"].toDouble() - bound) <= 1e-9 * bound);
        const double decode = d["decode_tokens_per_s"].toDouble();
        QVERIFY(decode > 0);
        QVERIFY(qAbs(d["decode_pct_of_bandwidth_bound"].toDouble() - 100 * decode / bound) <= 1e-9 * decode);
        const QJsonObject spread = d["decode"].toObject();
        QVERIFY(spread["min"].toDouble() <= decode && decode <= spread["max"].toDouble());
        QCOMPARE(d["prefill_measured"].toBool(), n + 24 < 2048);
        QCOMPARE(d.contains("prefill_tokens_per_s"), n + 24 < 2048);
        if (n + 24 < 2048) QVERIFY(d["prefill_tokens_per_s"].toDouble() > 0);
        QVERIFY(!d.contains("llama_cpp"));
    }
}

void TestBenchCli::depthTextReport() {
    const CliRun r = runCli(depthArgs(model_, "16,32"));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QList<QByteArray> lines = r.out.split('\n');
    QVERIFY(lines.value(0).startsWith("model: "));
    QVERIFY(lines.value(1).startsWith("host: "));
    QVERIFY(
        r.out.contains("| depth | decode t/s hearth | weights MB/token | KV MB/token | bound t/s | decode % of bound"));
    QCOMPARE(r.out.count("\n| 16 | "), 1);
    QCOMPARE(r.out.count("\n| 32 | "), 1);
    // Progress on stderr: one line per repeat and depth.
    QCOMPARE(r.err.count("run 1/2, depth 16:"), 1);
    QCOMPARE(r.err.count("run 2/2, depth 32:"), 1);
}

void TestBenchCli::depthLlamaBenchMissing() {
    qputenv("HEARTH_LLAMA_BENCH", dir_.filePath("no-llama-bench").toUtf8());
    const CliRun r = runCli(depthArgs(model_, "16") << "--compare-oracle"
                                                    << "--json");
    qunsetenv("HEARTH_LLAMA_BENCH");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QJsonObject j = r.json();
    QVERIFY(j["llama_cpp_missing"].toString().contains("build-llama-tools.sh"));
    QVERIFY(!j.contains("llama_cpp"));
    QCOMPARE(j["depths"].toArray().size(), 1);
    QVERIFY(r.err.contains("llama-bench is missing"));
}

namespace {

QJsonObject readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

}  // namespace

void TestBenchCli::benchSpecDump() {
    const QString out = dir_.filePath("dump");
    const QStringList common{"bench-spec", "--model", model_, "--runs", "1", "--max-tokens", "8", "--dump", out};
    CliRun r = runCli(QStringList(common) << "--modes"
                                          << "ngram"
                                          << "--prompts"
                                          << "code,chat");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QString name = QFileInfo(model_).fileName();
    for (const char* prompt : {"code", "chat"}) {
        const QJsonObject j = readJson(out + "/" + name + "." + prompt + ".json");
        QVERIFY2(!j["prompt_tokens"].toArray().isEmpty(), prompt);
        const qsizetype n = j["tokens"].toArray().size();
        QVERIFY2(n >= 1 && n <= 8, prompt);
    }
    QVERIFY(!QFileInfo::exists(out + "/" + name + ".passage.json"));  // left out by --prompts
    r = runCli(QStringList(common) << "--workload"
                                   << "history"
                                   << "--instances"
                                   << "1"
                                   << "--modes"
                                   << "history");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(r.out.contains("all        history") && r.out.contains("all        plain"));
    QVERIFY(!r.out.contains("ngram") && !r.out.contains("auto"));  // --modes: history alone
    QCOMPARE(readJson(out + "/" + name + ".store.json")["messages"].toArray().size(), 6);  // 3 prompts, 3 replies
    for (const char* task : {"B0-code-edit", "B1-summary", "B2-qa"})
        QVERIFY2(!readJson(out + "/" + name + "." + task + ".json")["tokens"].toArray().isEmpty(), task);
    r = runCli({"bench-spec", "--model", model_, "--workload", "history", "--modes", "tree"});
    QCOMPARE(r.exitCode, 2);  // a standard workload's mode
    QVERIFY(r.err.contains("not a mode of the history workload"));
    QFile blocker(dir_.filePath("a-file"));
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    r = runCli({"bench-spec", "--model", model_, "--dump", dir_.filePath("a-file/sub")});
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.contains("cannot create"));
}

QTEST_GUILESS_MAIN(TestBenchCli)
#include "test_bench_cli.moc"

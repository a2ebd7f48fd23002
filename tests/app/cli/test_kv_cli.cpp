// hearth-cli's KV and search options on tiny random Llamas: --kv-type (accepted with head size
// 32, refused with a clear error otherwise), generate --beams K --json (sampling-only options
// refused), and bench-kv (with a tiny Gemma 3 for the per-group pools).
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/support/cli_runner.h"
#include "tests/support/tiny_gemma3.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;
using test::CliRun;

class TestKvCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        test::TinyLlamaShape shape;
        shape.nEmbd = 128;  // head size 32: Q8_0 KV works
        shape.context = 8192;
        model32_ = dir_.filePath("tiny32.gguf");
        QVERIFY(test::tinyLlama(shape).writeFile(model32_.toStdString()));
        model16_ = dir_.filePath("tiny16.gguf");
        QVERIFY(test::tinyLlama().writeFile(model16_.toStdString()));
    }

    void kvTypeQ8() {
        const CliRun r =
            generate(model32_, {"--kv-type", "q8_0", "--temp", "0", "--max-tokens", "8", "--logit-bias", "2=-inf"});
        QVERIFY2(!r.crashed && r.exitCode == 0, r.err.constData());
        QCOMPARE(r.json()["tokens"].toArray().size(), 8);
    }

    void kvTypeErrors() {
        const CliRun bad = generate(model32_, {"--kv-type", "q4_0"});
        QVERIFY(!bad.crashed && bad.exitCode != 0);
        QVERIFY2(bad.err.contains("--kv-type must be f16 or q8_0"), bad.err.constData());
        const CliRun head16 = generate(model16_, {"--kv-type", "q8_0"});
        QVERIFY(!head16.crashed);
        QCOMPARE(head16.exitCode, 1);
        QVERIFY2(head16.err.contains("head size") && head16.err.contains("16"), head16.err.constData());
    }

    void beamsJson() {
        const CliRun r = generate(model32_, {"--beams", "3", "--beam-length-norm", "1", "--max-tokens", "6"});
        QVERIFY2(!r.crashed && r.exitCode == 0, r.err.constData());
        const QJsonObject o = r.json();
        QCOMPARE(o["beams"].toInt(), 3);
        const QJsonArray hyps = o["hypotheses"].toArray();
        QVERIFY(!hyps.isEmpty());
        QCOMPARE(hyps.first().toObject()["tokens"].toArray(), o["tokens"].toArray());
        for (qsizetype i = 0; i < hyps.size(); ++i) {
            const QJsonObject h = hyps[i].toObject();
            const double len = h["tokens"].toArray().size();
            QVERIFY(len >= 1 && len <= 6);
            QVERIFY(std::abs(h["score"].toDouble() - h["log_prob"].toDouble() / len) < 1e-9);
            if (i > 0) QVERIFY(h["score"].toDouble() <= hyps[i - 1].toObject()["score"].toDouble());
        }
        QCOMPARE(generate(model32_, {"--beams", "0"}).exitCode, 2);
    }

    // Sampling-only options are refused by name unless left at their defaults; the
    // per-hypothesis finish reason and the forward passes reach --json.
    void beamsRefuseSamplingOptions() {
        const CliRun temp = generate(model32_, {"--beams", "2", "--temp", "0.5"});
        QVERIFY(!temp.crashed);
        QCOMPARE(temp.exitCode, 2);
        QVERIFY2(temp.err.contains("--temp has no meaning for beam search"), temp.err.constData());
        const CliRun seed = generate(model32_, {"--beams", "2", "--seed", "7"});
        QCOMPARE(seed.exitCode, 2);
        QVERIFY2(seed.err.contains("--seed"), seed.err.constData());
        const CliRun def = generate(model32_, {"--beams", "2", "--temp", "0.8", "--max-tokens", "3"});
        QVERIFY2(!def.crashed && def.exitCode == 0, def.err.constData());
        const QJsonObject o = def.json();
        QCOMPARE(o["forward_passes"].toInt(), 3);  // the prompt, then one pass per step before the last
        for (const QJsonValue h : o["hypotheses"].toArray())
            QVERIFY(QStringList({"eos", "length"}).contains(h.toObject()["finish_reason"].toString()));
    }

    void benchKv() {
        const CliRun r = test::runCli({"bench-kv", "--model", model32_, "--seed", "5"});
        QVERIFY2(!r.crashed && r.exitCode == 0, r.err.constData());
        QVERIFY(r.out.contains("seed 5"));
        // 2 layers, K and V rows of 64 elements: 512 bytes per token in F16, 2 * 2 * 2 * 34 in Q8_0.
        // (F16 K is stored dimension-major and V head by head on the CPU: the layout says so.)
        QVERIFY2(r.out.contains("type=f16 k=dim-major v=head-major/32: 512 bytes per token"), r.out.constData());
        QVERIFY2(r.out.contains("type=q8_0: 272 bytes per token"), r.out.constData());
        QCOMPARE(r.out.count("paged layout, 8 sequences"), 2);
        QCOMPARE(r.out.count("no sliding-window layers here"), 2);
    }

    // One sequence of 8192 tokens on a Gemma 3 of 7 layers (layer 5 global, a window of 32
    // elsewhere), rows of 64 F16 elements: every position of every layer is 512 blocks of
    // 7 * 2 * 16 * 128 bytes; per-group pools hold the 512 blocks of the global layer and the
    // window layers' 3 blocks from the window of position 8176 (8145 on, block 509) on.
    void benchKvPerGroupPools() {
        test::TinyGemma3Shape shape;
        shape.slidingWindow = 32;
        shape.context = 8192;
        const QString path = dir_.filePath("gemma3-window32.gguf");
        QVERIFY(test::tinyGemma3(shape).writeFile(path.toStdString()));
        const CliRun r =
            test::runCli({"bench-kv", "--model", path, "--seed", "5", "--kv-type", "f16", "--ctx", "8192"});
        QVERIFY2(!r.crashed && r.exitCode == 0, r.err.constData());
        QVERIFY2(r.out.contains("kv-layout/v2 layers=7 row=64 block=16 type=f16 k=dim-major v=head-major/32 "
                                "window=32 window_layers=0,1,2,3,4,6"),
                 r.out.constData());
        QVERIFY2(r.out.contains("one sequence of 8192 tokens: all positions 14.0 MiB (512 blocks of every layer); "
                                "per-group pools 2.1 MiB (512 blocks of the 1 full-attention layers, 3 of the 6 "
                                "window layers): 14.8% of all positions"),
                 r.out.constData());
    }

private:
    CliRun generate(const QString& model, QStringList extra) {
        return test::runCli(QStringList{"generate", "--model", model, "--prompt", "the cat", "--raw", "--json"} +
                            extra);
    }

    QTemporaryDir dir_;
    QString model32_, model16_;
};

QTEST_GUILESS_MAIN(TestKvCli)
#include "test_kv_cli.moc"

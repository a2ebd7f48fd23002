// hearth-cli generate's sampler options and timings.prefix_cache_hit_tokens, on a tiny random
// Llama written by the test.
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/support/cli_runner.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;
using test::CliRun;

class TestCliSampling : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        model_ = dir_.filePath("tiny.gguf");
        QVERIFY(test::tinyLlama().writeFile(model_.toStdString()));
    }
    void everySamplerOptionIsAccepted() {
        const CliRun r = run({"--temp",
                              "0.9",
                              "--top-k",
                              "20",
                              "--typical-p",
                              "0.95",
                              "--top-p",
                              "0.9",
                              "--min-p",
                              "0.02",
                              "--repeat-penalty",
                              "1.1",
                              "--repeat-last-n",
                              "16",
                              "--presence-penalty",
                              "0.3",
                              "--frequency-penalty",
                              "0.2",
                              "--logit-bias",
                              "5=-inf",
                              "--logit-bias",
                              "6=1.5",
                              "--seed",
                              "7"});
        QVERIFY2(!r.crashed && r.exitCode == 0, r.err.constData());
        const QJsonObject t = r.json()["timings"].toObject();
        QVERIFY(t.contains("prefix_cache_hit_tokens"));
        QCOMPARE(t["prefix_cache_hit_tokens"].toInt() + t["prefill_tokens"].toInt(),
                 r.json()["prompt_tokens"].toArray().size());
        for (const auto& id : r.json()["tokens"].toArray()) QVERIFY(id.toInt() != 5);  // banned
    }
    void logitBiasSteersGreedy() {
        const int greedyFirst = run({"--temp", "0"}).json()["tokens"].toArray().first().toInt();
        const QString ban = QString("%1=-inf").arg(greedyFirst);
        QVERIFY(run({"--temp", "0", "--logit-bias", ban}).json()["tokens"].toArray().first().toInt() != greedyFirst);
        QCOMPARE(run({"--temp", "0", "--logit-bias", "200=100"}).json()["tokens"].toArray().first().toInt(), 200);
    }
    void badValuesAreNamed_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("bias syntax") << QStringList{"--logit-bias", "5"} << 2 << "--logit-bias";
        QTest::newRow("bias id") << QStringList{"--logit-bias", "9999=1"} << 1 << "outside the vocabulary";
        QTest::newRow("repeat penalty") << QStringList{"--repeat-penalty", "0"} << 1 << "repeat penalty";
        QTest::newRow("repeat last n") << QStringList{"--repeat-last-n", "-5"} << 1 << "repeat-last-n";
        QTest::newRow("typical-p") << QStringList{"--typical-p", "2"} << 1 << "typical-p";
        QTest::newRow("min-p") << QStringList{"--min-p", "x"} << 2 << "--min-p";
        QTest::newRow("presence") << QStringList{"--presence-penalty", "3"} << 1 << "presence penalty";
        QTest::newRow("frequency") << QStringList{"--frequency-penalty", "-3"} << 1 << "frequency penalty";
    }
    void badValuesAreNamed() {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, mentions);
        const CliRun r = run(args);
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY2(r.err.contains(mentions.toUtf8()), r.err.constData());
    }

private:
    CliRun run(const QStringList& extra) {
        return test::runCli(QStringList{"generate", "--model", model_, "--prompt", " the cat at", "--raw",
                                        "--max-tokens", "6", "--json"} +
                            extra);
    }

    QTemporaryDir dir_;
    QString model_;
};

QTEST_APPLESS_MAIN(TestCliSampling)
#include "test_cli_sampling.moc"

// hearth-cli generate --spec (label tiny, stories260K): the same token ids as without, the
// counts in --json, and clear errors for a bad --spec value or a draft with another vocabulary.
#include <QJsonArray>
#include <QtTest>

#include "tests/support/cli_runner.h"
#include "tests/support/test_env.h"

using namespace hearth;

class TestCliSpec : public QObject {
    Q_OBJECT
private slots:
    void sameTokensWithCounts() {
        const QString model = test::testDataFile("stories260K.gguf");
        HEARTH_REQUIRE_FILE(model);
        const QStringList base{
            "generate", "--model", model,          "--raw", "--prompt", "The cat sat on the mat. The cat sat on the",
            "--temp",   "0",       "--max-tokens", "40",    "--json"};
        const test::CliRun plain = test::runCli(base);
        QCOMPARE(plain.exitCode, 0);
        for (const QString& spec : {QString("ngram"), QString("auto"), "draft:" + model}) {
            const test::CliRun sp = test::runCli(base + QStringList{"--spec", spec, "--spec-max", "4"});
            QCOMPARE(sp.exitCode, 0);
            QCOMPARE(sp.json().value("tokens").toArray(), plain.json().value("tokens").toArray());
            const QJsonObject counts = sp.json().value("spec").toObject();
            std::printf("%s: %s\n", qPrintable(spec), QJsonDocument(counts).toJson(QJsonDocument::Compact).constData());
            QVERIFY(counts.value("drafted").toInt() > 0);
            QVERIFY(counts.contains("accepted") && counts.contains("bonus") && counts.contains("rejected"));
            QVERIFY(counts.value("target_forwards").toInt() <= plain.json().value("tokens").toArray().size());
        }
    }

    void badValues() {
        const QString model = test::testDataFile("stories260K.gguf"),
                      other = test::testDataFile("llama-2-tiny-random.gguf");
        HEARTH_REQUIRE_FILE(model);
        HEARTH_REQUIRE_FILE(other);
        const QStringList base{"generate", "--model", model, "--prompt", "Once", "--max-tokens", "4"};
        const test::CliRun bogus = test::runCli(base + QStringList{"--spec", "bogus"});
        QCOMPARE(bogus.exitCode, 2);
        QVERIFY(bogus.err.contains("--spec must be ngram, auto or draft:PATH"));
        const test::CliRun tooLong = test::runCli(base + QStringList{"--spec", "ngram", "--spec-max", "99"});
        QCOMPARE(tooLong.exitCode, 2);
        const test::CliRun vocab = test::runCli(base + QStringList{"--spec", "draft:" + other});
        QCOMPARE(vocab.exitCode, 1);
        QVERIFY(!vocab.crashed);
        QVERIFY(vocab.err.contains("vocabulary"));
    }
};

QTEST_GUILESS_MAIN(TestCliSpec)
#include "test_cli_spec.moc"

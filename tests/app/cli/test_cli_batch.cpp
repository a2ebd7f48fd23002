// hearth-cli batch (several requests in one engine) and generate's --stop and --timeout-ms,
// on a tiny random Llama written by the test.
#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/support/cli_runner.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;
using test::CliRun;

namespace {

const QStringList kPrompts{" the cat", " a cat at the", " at a", " the the cat at a cat"};

QList<QJsonObject> jsonLines(const QByteArray& out) {
    QList<QJsonObject> lines;
    for (const QByteArray& line : out.split('\n'))
        if (!line.trimmed().isEmpty()) lines.push_back(QJsonDocument::fromJson(line).object());
    return lines;
}

}  // namespace

class TestCliBatch : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        model_ = dir_.filePath("tiny.gguf");
        QVERIFY(test::tinyLlama().writeFile(model_.toStdString()));
    }

    void batchedEqualsEachAlone() {
        QStringList lines;
        for (const QString& prompt : kPrompts)
            lines << QJsonDocument(QJsonObject{{"prompt", prompt},
                                               {"raw", true},
                                               {"temp", 0},
                                               {"max_tokens", 8},
                                               {"logit_bias", QJsonArray{"2=-inf"}}})
                         .toJson(QJsonDocument::Compact);
        const QString file = writeRequests("four.jsonl", lines);
        const CliRun batch = test::runCli({"batch", "--model", model_, "--requests", file, "--json"});
        QVERIFY2(!batch.crashed && batch.exitCode == 0, batch.err.constData());
        const QList<QJsonObject> results = jsonLines(batch.out);
        QCOMPARE(results.size(), kPrompts.size());
        for (qsizetype i = 0; i < kPrompts.size(); ++i) {
            const CliRun alone = generate({"--prompt", kPrompts[i], "--logit-bias", "2=-inf"});
            QVERIFY2(alone.exitCode == 0, alone.err.constData());
            QCOMPARE(results[i]["prompt_tokens"], alone.json()["prompt_tokens"]);
            QCOMPARE(results[i]["tokens"], alone.json()["tokens"]);
            QCOMPARE(results[i]["tokens"].toArray().size(), 8);
            QCOMPARE(results[i]["finish_reason"].toString(), QString("length"));
        }
    }

    void sequentialRequestsReuseASharedPrefix() {
        const QString shared = " the cat at a cat the cat at the a cat at the cat a the at cat the a cat at";
        QStringList lines;
        for (const char* tail : {" the", " a cat"})
            lines << QJsonDocument(
                         QJsonObject{{"prompt", shared + tail}, {"raw", true}, {"temp", 0}, {"max_tokens", 4}})
                         .toJson(QJsonDocument::Compact);
        const CliRun r = test::runCli(
            {"batch", "--model", model_, "--requests", writeRequests("shared.jsonl", lines), "--sequential", "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QList<QJsonObject> results = jsonLines(r.out);
        QCOMPARE(results.size(), 2);
        const QJsonObject second = results[1]["timings"].toObject();
        QCOMPARE(results[0]["timings"].toObject()["prefix_cache_hit_tokens"].toInt(), 0);
        QVERIFY(second["prefix_cache_hit_tokens"].toInt() > 0);
        QCOMPARE(second["prefix_cache_hit_tokens"].toInt() + second["prefill_tokens"].toInt(),
                 results[1]["prompt_tokens"].toArray().size());
    }

    void stopStringIsNotShown() {
        const QString text = generate({"--prompt", kPrompts[0], "--max-tokens", "24", "--logit-bias", "2=-inf"})
                                 .json()["text"]
                                 .toString();
        if (text.size() < 6) QSKIP("the tiny model's greedy text is too short");
        const QString stop = text.mid(3, 2);
        const CliRun r =
            generate({"--prompt", kPrompts[0], "--max-tokens", "24", "--logit-bias", "2=-inf", "--stop", stop});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(r.json()["finish_reason"].toString(), QString("stop"));
        QCOMPARE(r.json()["text"].toString(), text.left(text.indexOf(stop)));
    }

    void badBatchLinesAreNamed() {
        const CliRun r = test::runCli({"batch", "--model", model_, "--requests",
                                       writeRequests("bad.jsonl", {R"({"prompt": "x", "temp": -1})", "nope"})});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("line 2"), r.err.constData());
        QCOMPARE(test::runCli({"generate", "--model", model_, "--prompt", "x", "--timeout-ms", "x"}).exitCode, 2);
    }

private:
    CliRun generate(const QStringList& extra) {
        return test::runCli(
            QStringList{"generate", "--model", model_, "--raw", "--temp", "0", "--max-tokens", "8", "--json"} + extra);
    }
    QString writeRequests(const QString& name, const QStringList& lines) {
        const QString path = dir_.filePath(name);
        QFile f(path);
        if (f.open(QIODevice::WriteOnly)) f.write((lines.join('\n') + '\n').toUtf8());
        return path;
    }

    QTemporaryDir dir_;
    QString model_;
};

QTEST_APPLESS_MAIN(TestCliBatch)
#include "test_cli_batch.moc"

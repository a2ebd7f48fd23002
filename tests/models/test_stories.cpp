// Conformance on stories260K against llama.cpp's reference outputs (../shared/testdata):
// prompt ids from `tokenize`, greedy continuation from `generate --raw --temp 0`, and the top-5
// logits of the first positions within 0.02 with the same ids.
#include <QFile>
#include <QJsonArray>
#include <QtTest>

#include "tests/support/cli_runner.h"

using namespace hearth::test;

class TestStories : public QObject {
    Q_OBJECT
private slots:
    void matchesReference();
};

void TestStories::matchesReference() {
    const QString model = testDataFile("stories260K.gguf");
    const QString refPath = testDataFile("stories260K.json");
    HEARTH_REQUIRE_FILE(model);
    HEARTH_REQUIRE_FILE(refPath);
    QFile refFile(refPath);
    QVERIFY(refFile.open(QIODevice::ReadOnly));
    const QJsonObject ref = QJsonDocument::fromJson(refFile.readAll()).object();
    const QJsonArray cases = ref["cases"].toArray();
    QVERIFY(cases.size() >= 5);
    int nLogitsChecked = 0;
    double worstLogitDiff = 0.0;
    for (const QJsonValue& cv : cases) {
        const QJsonObject c = cv.toObject();
        const QString prompt = c["prompt"].toString();
        const CliRun tok = runCli({"tokenize", "--model", model, "--text", prompt, "--json"});
        QVERIFY2(!tok.crashed && tok.exitCode == 0, tok.err.constData());
        QCOMPARE(tok.json()["tokens"].toArray(), c["prompt_tokens"].toArray());

        const CliRun gen =
            runCli({"generate", "--model", model, "--prompt", prompt, "--raw", "--temp", "0", "--max-tokens",
                    QString::number(ref["max_new_tokens"].toInt()), "--json", "--top-logits", "5"});
        QVERIFY2(!gen.crashed && gen.exitCode == 0, gen.err.constData());
        const QJsonObject out = gen.json();
        QCOMPARE(out["prompt_tokens"].toArray(), c["prompt_tokens"].toArray());
        QCOMPARE(out["tokens"].toArray(), c["greedy_tokens"].toArray());
        QCOMPARE(out["text"].toString(), c["greedy_text"].toString());
        const QJsonArray refTop = c["top5_logits"].toArray();
        const QJsonArray ourTop = out["top_logits"].toArray();
        for (qsizetype pos = 0; pos < refTop.size(); ++pos) {
            const QJsonArray r = refTop[pos].toArray(), o = ourTop[pos].toArray();
            QCOMPARE(o.size(), r.size());
            for (qsizetype k = 0; k < r.size(); ++k) {
                QCOMPARE(o[k].toArray()[0].toInt(), r[k].toArray()[0].toInt());
                const double diff = std::abs(o[k].toArray()[1].toDouble() - r[k].toArray()[1].toDouble());
                worstLogitDiff = std::max(worstLogitDiff, diff);
                QVERIFY2(diff <= 0.02,
                         qPrintable(QString("prompt '%1' position %2 rank %3: logit differs by %4")
                                        .arg(prompt)
                                        .arg(pos)
                                        .arg(k)
                                        .arg(diff)));
                ++nLogitsChecked;
            }
        }
    }
    qInfo("stories260K: %lld reference prompts, %d logits compared, largest difference %.5f",
          static_cast<long long>(cases.size()), nLogitsChecked, worstLogitDiff);
}

QTEST_GUILESS_MAIN(TestStories)
#include "test_stories.moc"

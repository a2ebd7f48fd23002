// Conformance: Hearth's tokenizers against the oracle (llama.cpp through llama-cpp-python) on
// the corpus in tokenizer_corpus.json, for SmolLM2 (byte-level BPE), Gemma 3 and stories260K
// (SentencePiece). BOS as the vocabulary asks; special-token text stays plain text.
#include <QFile>
#include <QJsonArray>
#include <QtTest>

#include "engine/model/gguf.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/support/python_json.h"
#include "tests/support/test_env.h"

using namespace hearth;
using namespace hearth::test;

class TestConformanceTokenizer : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void matchesOracle_data();
    void matchesOracle();

private:
    QJsonArray corpus_;
};

void TestConformanceTokenizer::initTestCase() {
    HEARTH_REQUIRE_FILE(oraclePython());
    QFile f(sourceDir() + "/tests/conformance/tokenizer_corpus.json");
    QVERIFY(f.open(QIODevice::ReadOnly));
    corpus_ = QJsonDocument::fromJson(f.readAll()).object()["cases"].toArray();
    QVERIFY(corpus_.size() >= 300);
}

void TestConformanceTokenizer::matchesOracle_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("stories260K") << testDataFile("stories260K.gguf");
    QTest::newRow("SmolLM2-135M") << modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
    QTest::newRow("gemma-3-270m") << modelFile("gemma-3-270m-q4_k_m.gguf");
}

void TestConformanceTokenizer::matchesOracle() {
    QFETCH(QString, model);
    HEARTH_REQUIRE_FILE(model);
    auto file = GgufFile::open(model.toStdString());
    QVERIFY(file);
    auto tokenizer = Tokenizer::fromGguf(**file);
    QVERIFY2(tokenizer, tokenizer ? "" : tokenizer.error().message.c_str());
    const QJsonObject answer = askPython(oraclePython(), sourceDir() + "/tests/conformance/oracle.py",
                                         {{"op", "tokenize"}, {"model", model}, {"texts", corpus_}});
    QVERIFY2(!answer.contains("error"), qPrintable(answer["error"].toString()));
    const QJsonArray expected = answer["tokens"].toArray();
    QCOMPARE(expected.size(), corpus_.size());
    QStringList mismatches;
    for (qsizetype i = 0; i < corpus_.size(); ++i) {
        const std::string text = corpus_[i].toString().toStdString();
        const std::vector<TokenId> ours = (*tokenizer)->encode(text, (*tokenizer)->addBosByDefault(), false);
        QJsonArray oursJson;
        for (TokenId id : ours) oursJson.append(id);
        if (oursJson != expected[i].toArray())
            mismatches << QString("  #%1 %2: hearth %3 oracle %4")
                              .arg(i)
                              .arg(QString(QJsonDocument(QJsonArray{corpus_[i]}).toJson(QJsonDocument::Compact)))
                              .arg(QString(QJsonDocument(oursJson).toJson(QJsonDocument::Compact)))
                              .arg(QString(QJsonDocument(expected[i].toArray()).toJson(QJsonDocument::Compact)));
    }
    qInfo("| %s | tokenization | %lld strings | %lld identical | %lld differ |", QTest::currentDataTag(),
          static_cast<long long>(corpus_.size()), static_cast<long long>(corpus_.size() - mismatches.size()),
          static_cast<long long>(mismatches.size()));
    QVERIFY2(mismatches.isEmpty(), qPrintable("\n" + mismatches.join("\n")));
}

QTEST_GUILESS_MAIN(TestConformanceTokenizer)
#include "test_conformance_tokenizer.moc"

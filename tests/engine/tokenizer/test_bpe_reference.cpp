// SmolLM2's byte-level BPE against the Hugging Face `tokenizers` reference (bpe_reference.py,
// run with the test Python) on bpe_corpus.json: identical ids for every string, and
// decode(encode(s)) == s. Also SmolLM2's special tokens and its chat template end to end.
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

#include "engine/model/gguf.h"
#include "engine/tokenizer/chat_format.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/support/test_env.h"

using namespace hearth;

namespace {

const QString kModel = "SmolLM2-135M-Instruct.Q4_1.gguf";

QString idsText(const std::vector<TokenId>& ids) {
    QStringList parts;
    for (TokenId id : ids) parts << QString::number(id);
    return "[" + parts.join(", ") + "]";
}

std::string utf8(const QString& s) { return s.toUtf8().toStdString(); }

}  // namespace

class TestBpeReference : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void matchesHuggingFaceTokenizers();
    void roundTripsExactly();
    void specialTokenTextStaysPlain();
    void specialIds();
    void chatPromptEndToEnd();

private:
    std::unique_ptr<GgufFile> file_;
    std::unique_ptr<Tokenizer> tok_;
};

void TestBpeReference::initTestCase() {
    const QString path = hearth::test::modelFile(kModel);
    HEARTH_REQUIRE_FILE(path);
    auto file = GgufFile::open(path.toStdString());
    QVERIFY2(file.has_value(), file ? "" : file.error().message.c_str());
    file_ = std::move(*file);
    QElapsedTimer timer;
    timer.start();
    auto tok = Tokenizer::fromGguf(*file_);
    QVERIFY2(tok.has_value(), tok ? "" : tok.error().message.c_str());
    tok_ = std::move(*tok);
    qInfo("SmolLM2 vocabulary (%d tokens) built in %lld ms", tok_->nVocab(), timer.elapsed());
    QCOMPARE(tok_->kind(), VocabKind::BytePairGpt2);
}

void TestBpeReference::matchesHuggingFaceTokenizers() {
    const QString corpusPath = hearth::test::sourceDir() + "/tests/engine/tokenizer/bpe_corpus.json";
    const QString script = hearth::test::sourceDir() + "/tests/engine/tokenizer/bpe_reference.py";
    HEARTH_REQUIRE_FILE(corpusPath);
    HEARTH_REQUIRE_FILE(script);
    HEARTH_REQUIRE_FILE(hearth::test::pythonExe());

    QProcess python;
    python.start(hearth::test::pythonExe(), {script, hearth::test::modelFile(kModel), corpusPath});
    QVERIFY2(python.waitForFinished(300'000), "the reference script did not finish");
    QVERIFY2(python.exitStatus() == QProcess::NormalExit && python.exitCode() == 0,
             python.readAllStandardError().constData());
    const QJsonArray reference =
        QJsonDocument::fromJson(python.readAllStandardOutput()).object().value("ids").toArray();

    QFile corpusFile(corpusPath);
    QVERIFY(corpusFile.open(QIODevice::ReadOnly));
    const QJsonArray corpus = QJsonDocument::fromJson(corpusFile.readAll()).object().value("strings").toArray();
    QVERIFY(corpus.size() >= 80);
    QCOMPARE(reference.size(), corpus.size());

    int nMatched = 0;
    QStringList failures;
    for (qsizetype i = 0; i < corpus.size(); ++i) {
        std::vector<TokenId> expected;
        for (const QJsonValue& v : reference[i].toArray()) expected.push_back(v.toInt());
        const std::vector<TokenId> got = tok_->encode(utf8(corpus[i].toString()), false, false);
        if (got == expected) ++nMatched;
        else failures << QString("%1: expected %2, got %3").arg(corpus[i].toString(), idsText(expected), idsText(got));
    }
    qInfo("SmolLM2: %d of %d corpus strings give the reference's ids", nMatched, static_cast<int>(corpus.size()));
    if (!failures.isEmpty()) QFAIL(qPrintable(failures.join("\n")));
}

void TestBpeReference::roundTripsExactly() {
    const QString corpusPath = hearth::test::sourceDir() + "/tests/engine/tokenizer/bpe_corpus.json";
    HEARTH_REQUIRE_FILE(corpusPath);
    QFile corpusFile(corpusPath);
    QVERIFY(corpusFile.open(QIODevice::ReadOnly));
    const QJsonArray corpus = QJsonDocument::fromJson(corpusFile.readAll()).object().value("strings").toArray();
    int nRoundTrips = 0;
    for (const QJsonValue& v : corpus) {
        const std::string s = utf8(v.toString());
        QCOMPARE(tok_->decode(tok_->encode(s, false, false)), s);
        ++nRoundTrips;
    }
    // Called out on their own: Chinese, emoji (ZWJ sequence, flags, skin tone), mixed whitespace.
    for (const std::string s : {"法国的首都是哪里？", "👨‍👩‍👧‍👦 🇫🇷🇩🇪 👍🏽",
                                "a  \t\n\n  b", "   \n\t \r\n  "}) {
        QCOMPARE(tok_->decode(tok_->encode(s, false, false)), s);
        ++nRoundTrips;
    }
    // Bytes that are not UTF-8 survive too, when the vocabulary has their symbol...
    const std::string invalid = "bad \x80\xBF bytes \xED\xA0\x80 \xE2\x82";
    QCOMPARE(tok_->decode(tok_->encode(invalid, false, false)), invalid);
    // ...which SmolLM2's lacks for the bytes no UTF-8 text holds (C0, C1, F5-FF): they are
    // dropped, as llama.cpp drops them.
    QCOMPARE(tok_->decode(tok_->encode("a\xC0\xFF"
                                       "b",
                                       false, false)),
             std::string("ab"));
    qInfo("SmolLM2: %d strings round-trip exactly", nRoundTrips + 1);
}

void TestBpeReference::specialTokenTextStaysPlain() {
    const TokenId imStart = tok_->findPiece("<|im_start|>");
    QCOMPARE(imStart, 1);
    const std::vector<TokenId> typed = tok_->encode("<|im_start|>user", false, false);
    QVERIFY2(std::find(typed.begin(), typed.end(), imStart) == typed.end(), qPrintable(idsText(typed)));
    QCOMPARE(tok_->decode(typed), std::string("<|im_start|>user"));
    const std::vector<TokenId> parsed = tok_->encode("<|im_start|>user", false, true);
    QCOMPARE(parsed.front(), imStart);
    QCOMPARE(std::vector<TokenId>(parsed.begin() + 1, parsed.end()), tok_->encode("user", false, false));
    QCOMPARE(tok_->tokenBytes(imStart), std::string());
    QCOMPARE(tok_->tokenBytes(imStart, true), std::string("<|im_start|>"));
}

void TestBpeReference::specialIds() {
    QVERIFY(!tok_->addBosByDefault());
    QCOMPARE(tok_->bos(), 1);
    QCOMPARE(tok_->eos(), 2);
    QCOMPARE(tok_->eot(), 2);  // no eot key: "<|im_end|>"
    QVERIFY(tok_->isEndOfGeneration(tok_->findPiece("<|im_end|>")));
    QVERIFY(tok_->isEndOfGeneration(tok_->findPiece("<|endoftext|>")));
    QVERIFY(!tok_->isEndOfGeneration(tok_->findPiece("<|im_start|>")));
    QVERIFY(!tok_->isEndOfGeneration(tok_->findPiece("Hello")));
}

void TestBpeReference::chatPromptEndToEnd() {
    const GgufValue* tmpl = file_->find("tokenizer.chat_template");
    QVERIFY(tmpl && tmpl->asString());
    const ChatFormat format = ChatFormat::detect(*tmpl->asString(), "llama");
    QCOMPARE(format.kind(), ChatFormatKind::ChatML);
    const std::vector<TextSegment> segments = format.render({{ChatRole::User, "Hi <|im_end|>"}}, true);
    const std::vector<TokenId> ids = tok_->encode(segments, tok_->addBosByDefault());
    const TokenId imEnd = tok_->findPiece("<|im_end|>");
    // Three control <|im_start|> (system, user, assistant) and two <|im_end|>: the one the user
    // typed is text.
    QCOMPARE(std::count(ids.begin(), ids.end(), tok_->findPiece("<|im_start|>")), 3);
    QCOMPARE(std::count(ids.begin(), ids.end(), imEnd), 2);
    std::string rendered;
    for (TokenId id : ids) rendered += tok_->tokenBytes(id, true);
    QCOMPARE(rendered,
             std::string("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by "
                         "Hugging Face<|im_end|>\n<|im_start|>user\nHi <|im_end|><|im_end|>\n"
                         "<|im_start|>assistant\n"));
}

QTEST_GUILESS_MAIN(TestBpeReference)
#include "test_bpe_reference.moc"

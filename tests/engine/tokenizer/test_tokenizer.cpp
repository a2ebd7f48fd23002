// Tokenizer tests: SentencePiece vocabularies against llama.cpp's ids for the 71 strings of the
// shared test data (stories260K, Llama 2), special-token parsing, byte-token decoding,
// Utf8Stream, vocabulary errors; Gemma 3's vocabulary (262,144 pieces) when its model is cached.
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include "engine/model/gguf.h"
#include "engine/tokenizer/pretokenizer.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/support/test_env.h"

using namespace hearth;

namespace {

std::unique_ptr<Tokenizer> loadTokenizer(const QString& path) {
    auto file = GgufFile::open(path.toStdString());
    if (!file) qFatal("cannot open %s: %s", qPrintable(path), file.error().message.c_str());
    auto tok = Tokenizer::fromGguf(**file);
    if (!tok) qFatal("cannot build the tokenizer of %s: %s", qPrintable(path), tok.error().message.c_str());
    return std::move(*tok);
}

QString idsText(const std::vector<TokenId>& ids) {
    QStringList parts;
    for (TokenId id : ids) parts << QString::number(id);
    return "[" + parts.join(", ") + "]";
}

std::vector<TokenId> idsOf(const QJsonArray& array) {
    std::vector<TokenId> ids;
    for (const QJsonValue& v : array) ids.push_back(v.toInt());
    return ids;
}

QString utf8ToQString(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// A small vocabulary for the error paths, without a file.
VocabSpec tinyVocab(std::string model) {
    VocabSpec v;
    v.model = std::move(model);
    v.tokens = {"<unk>", "<s>", "</s>", "a", "b", "ab"};
    v.tokenTypes = {2, 3, 3, 1, 1, 1};
    v.scores = {0, 0, 0, -1, -2, -0.5f};
    v.merges = {"a b"};
    return v;
}

}  // namespace

class TestTokenizer : public QObject {
    Q_OBJECT

private:
    void checkTokenizeFile(const QString& modelName, const QString& jsonName);

private slots:
    void stories260KMatchesLlamaCpp() { checkTokenizeFile("stories260K.gguf", "stories260K-tokenize.json"); }
    void llama2MatchesLlamaCpp() { checkTokenizeFile("llama-2-tiny-random.gguf", "llama-2-tiny-random-tokenize.json"); }
    void specialTokensOnlyWhenAllowed();
    void userDefinedPiecesAlwaysSplit();
    void phi3SpecialsSwallowWhitespace();
    void decodesByteAndSpecialTokens();
    void specialIds();
    void gemmaVocabulary();
    void utf8StreamSplitsEmojiAtEveryBoundary();
    void utf8StreamInvalidBytes();
    void vocabularyErrors();
    void preTokenizerPieces_data();
    void preTokenizerPieces();
};

void TestTokenizer::checkTokenizeFile(const QString& modelName, const QString& jsonName) {
    const QString modelPath = hearth::test::testDataFile(modelName);
    const QString jsonPath = hearth::test::testDataFile(jsonName);
    HEARTH_REQUIRE_FILE(modelPath);
    HEARTH_REQUIRE_FILE(jsonPath);
    const auto tok = loadTokenizer(modelPath);
    QCOMPARE(tok->kind(), VocabKind::SentencePiece);
    QVERIFY(tok->addBosByDefault());

    QFile json(jsonPath);
    QVERIFY(json.open(QIODevice::ReadOnly));
    const QJsonArray cases = QJsonDocument::fromJson(json.readAll()).object().value("cases").toArray();
    QVERIFY(cases.size() >= 71);
    int nMatched = 0;
    QStringList failures;
    for (const QJsonValue& c : cases) {
        const QByteArray text = c.toObject().value("text").toString().toUtf8();
        const std::vector<TokenId> expected = idsOf(c.toObject().value("tokens").toArray());
        const std::vector<TokenId> got = tok->encode(std::string_view(text.constData(), text.size()), true, false);
        if (got != expected) {
            failures
                << QString("%1: expected %2, got %3").arg(QString::fromUtf8(text), idsText(expected), idsText(got));
            continue;
        }
        // SentencePiece's dummy prefix comes back as a leading space; BOS decodes to nothing.
        const std::string decoded = tok->decode(got);
        if (decoded != " " + text.toStdString()) {
            failures << QString("%1: decodes to \"%2\"").arg(QString::fromUtf8(text), utf8ToQString(decoded));
            continue;
        }
        ++nMatched;
    }
    qInfo("%s: %d of %d cases match llama.cpp's ids and decode back", qPrintable(modelName), nMatched,
          static_cast<int>(cases.size()));
    if (!failures.isEmpty()) QFAIL(qPrintable(failures.join("\n")));
}

void TestTokenizer::specialTokensOnlyWhenAllowed() {
    const QString path = hearth::test::testDataFile("llama-2-tiny-random.gguf");
    HEARTH_REQUIRE_FILE(path);
    const auto tok = loadTokenizer(path);
    // From llama-2-tiny-random-tokenize.json: "<s>" typed by a user is "▁<", "s", ">".
    QCOMPARE(tok->encode("<s>", false, false), (std::vector<TokenId>{529, 29879, 29958}));
    QCOMPARE(tok->encode("<s>", false, true), (std::vector<TokenId>{1}));
    QCOMPARE(tok->encode("</s>", false, true), (std::vector<TokenId>{2}));

    // Template text may hold control tokens; the user's text in between never does.
    const std::vector<TextSegment> segments = {{"<s>", true}, {"<s>", false}, {"</s>", true}};
    QCOMPARE(tok->encode(segments, false), (std::vector<TokenId>{1, 529, 29879, 29958, 2}));
    // Adjacent plain segments are one text: "Hello world" split anywhere gives the same ids.
    const std::vector<TextSegment> split = {{"Hel", false}, {"lo wor", true}, {"ld", false}};
    QCOMPARE(tok->encode(split, true), tok->encode("Hello world", true, false));
    QCOMPARE(tok->encode("Hello world", true, false), (std::vector<TokenId>{1, 15043, 3186}));
}

void TestTokenizer::userDefinedPiecesAlwaysSplit() {
    VocabSpec v;
    v.model = "llama";
    v.tokens = {"<unk>", "<s>", "</s>", "<br>", "\xE2\x96\x81", "x", "\xE2\x96\x81x"};
    v.tokenTypes = {2, 3, 3, 4, 1, 1, 1};
    v.scores = {0, 0, 0, 0, -1, -2, -0.5f};
    v.addSpacePrefix = false;
    auto tok = Tokenizer::fromVocab(v);
    QVERIFY2(tok.has_value(), tok ? "" : tok.error().message.c_str());
    // A user-defined piece is split out of plain text too; control pieces only when allowed.
    QCOMPARE((*tok)->encode("x<br>x", false, false), (std::vector<TokenId>{5, 3, 5}));
    QCOMPARE((*tok)->encode(" x<s>", false, false).front(), 6);
    QCOMPARE((*tok)->encode("x<s>", false, true), (std::vector<TokenId>{5, 1}));
    QCOMPARE((*tok)->tokenBytes(3), std::string("<br>"));
    QCOMPARE((*tok)->tokenBytes(6), std::string(" x"));
}

// Phi-3 (VocabSpec::rightStripSpecials): the whitespace after a control or user-defined piece
// is dropped, across segments too, but not after <s> or <unk>; without the flag it stays.
void TestTokenizer::phi3SpecialsSwallowWhitespace() {
    VocabSpec v;
    v.model = "llama";
    v.tokens = {"<unk>", "<s>", "</s>", "<|end|>", "\xE2\x96\x81", "x", "\xE2\x96\x81x"};
    v.tokenTypes = {2, 3, 3, 3, 1, 1, 1};
    v.scores = {0, 0, 0, 0, -1, -2, -0.5f};
    v.addSpacePrefix = false;
    v.rightStripSpecials = true;
    auto tok = Tokenizer::fromVocab(v);
    QVERIFY2(tok.has_value(), tok ? "" : tok.error().message.c_str());
    QCOMPARE((*tok)->encode("<|end|>\n x", false, true), (std::vector<TokenId>{3, 5}));
    const std::vector<TextSegment> segments = {{"<|end|>\n", true}, {"  x", false}};
    QCOMPARE((*tok)->encode(segments, false), (std::vector<TokenId>{3, 5}));
    QCOMPARE((*tok)->encode("</s> x", false, true), (std::vector<TokenId>{2, 5}));
    QCOMPARE((*tok)->encode("<s> x", false, true), (std::vector<TokenId>{1, 6}));
    v.rightStripSpecials = false;
    auto plain = Tokenizer::fromVocab(v);
    QVERIFY(plain.has_value());
    QCOMPARE((*plain)->encode("<|end|>\n x", false, true), (std::vector<TokenId>{3, 0, 6}));  // "\n": <unk> here
}

void TestTokenizer::decodesByteAndSpecialTokens() {
    const QString path = hearth::test::testDataFile("stories260K.gguf");
    HEARTH_REQUIRE_FILE(path);
    const auto tok = loadTokenizer(path);
    QCOMPARE(tok->pieceText(13), std::string("<0x0A>"));
    QCOMPARE(tok->tokenBytes(13), std::string("\n"));
    QCOMPARE(tok->tokenBytes(3 + 0xE4), std::string("\xE4"));  // byte tokens: <0x00> is id 3
    QCOMPARE(tok->tokenBytes(1), std::string());
    QCOMPARE(tok->tokenBytes(1, true), std::string("<s>"));
    QCOMPARE(tok->tokenBytes(-1), std::string());
    QCOMPARE(tok->tokenBytes(tok->nVocab()), std::string());
    // "你好" has no pieces in a 512-token vocabulary: it falls back to bytes and comes back whole.
    const std::vector<TokenId> ids = tok->encode("你好", false, false);
    QVERIFY(ids.size() >= 6);
    QCOMPARE(tok->decode(ids), std::string(" 你好"));
    // The space mark is a space; a leading one is kept for the caller to drop.
    QCOMPARE(tok->tokenBytes(410), std::string(" "));
}

void TestTokenizer::specialIds() {
    const QString path = hearth::test::testDataFile("stories260K.gguf");
    HEARTH_REQUIRE_FILE(path);
    const auto tok = loadTokenizer(path);
    QCOMPARE(tok->bos(), 1);
    QCOMPARE(tok->eos(), 2);
    QCOMPARE(tok->eot(), -1);
    QVERIFY(tok->isEndOfGeneration(2));
    QVERIFY(!tok->isEndOfGeneration(1));
    QVERIFY(tok->isControl(1));
    QCOMPARE(tok->findPiece("<s>"), 1);
    QCOMPARE(tok->findPiece("no such piece"), -1);
    QCOMPARE(tok->encode("", true, false), (std::vector<TokenId>{1}));
    QVERIFY(tok->encode("", false, false).empty());
}

void TestTokenizer::gemmaVocabulary() {
    const QString path = hearth::test::modelFile("gemma-3-270m-q4_k_m.gguf");
    HEARTH_REQUIRE_FILE(path);
    auto file = GgufFile::open(path.toStdString());
    QVERIFY(file.has_value());
    QElapsedTimer timer;
    timer.start();
    auto built = Tokenizer::fromGguf(**file);
    QVERIFY2(built.has_value(), built ? "" : built.error().message.c_str());
    qInfo("Gemma 3 vocabulary (%d pieces) built in %lld ms", (*built)->nVocab(), timer.elapsed());
    const Tokenizer& tok = **built;
    QCOMPARE(tok.bos(), 2);
    QCOMPARE(tok.eos(), 1);
    QVERIFY(tok.addBosByDefault());
    const TokenId endOfTurn = tok.findPiece("<end_of_turn>");
    QVERIFY(endOfTurn >= 0);
    QCOMPARE(tok.eot(), endOfTurn);
    QVERIFY(tok.isEndOfGeneration(endOfTurn));

    const TokenId startOfTurn = tok.findPiece("<start_of_turn>");
    QCOMPARE(tok.encode("<start_of_turn>user\n", false, true).front(), startOfTurn);
    const std::vector<TokenId> typed = tok.encode("<start_of_turn>user", false, false);
    QVERIFY(std::find(typed.begin(), typed.end(), startOfTurn) == typed.end());
    // add_space_prefix is false: no dummy prefix; "\n\n" is a user-defined piece.
    const std::vector<TokenId> ids = tok.encode("Hi\n\nthere", false, false);
    QVERIFY(std::find(ids.begin(), ids.end(), tok.findPiece("\n\n")) != ids.end());
    for (const std::string s : {"Hello world", "  two  spaces\tand tab", "法国的首都是哪里？",
                                "🙂 👨‍👩‍👧‍👦 🇫🇷", "<b>bold</b>\n\n\n"})
        QCOMPARE(tok.decode(tok.encode(s, false, false)), s);
    QCOMPARE(tok.decode(tok.encode("Hello", true, false)), std::string("Hello"));
}

void TestTokenizer::utf8StreamSplitsEmojiAtEveryBoundary() {
    const std::string text = "a🙂b€c";  // 1 + 4 + 1 + 3 + 1 bytes
    for (size_t cut1 = 0; cut1 <= text.size(); ++cut1) {
        for (size_t cut2 = cut1; cut2 <= text.size(); ++cut2) {
            Utf8Stream stream;
            std::string out;
            for (const auto& part : {text.substr(0, cut1), text.substr(cut1, cut2 - cut1), text.substr(cut2)}) {
                const std::string emitted = stream.push(part);
                // Whatever is emitted is whole characters: it round-trips through QString.
                QCOMPARE(QString::fromUtf8(emitted.data(), static_cast<qsizetype>(emitted.size())).toStdString(),
                         emitted);
                out += emitted;
            }
            out += stream.flush();
            QCOMPARE(out, text);
        }
    }
    // One byte at a time: nothing until the emoji's last byte.
    Utf8Stream stream;
    const std::string emoji = "🙂";
    for (size_t i = 0; i + 1 < emoji.size(); ++i) QCOMPARE(stream.push(emoji.substr(i, 1)), std::string());
    QCOMPARE(stream.push(emoji.substr(3, 1)), emoji);
    QCOMPARE(stream.flush(), std::string());
}

void TestTokenizer::utf8StreamInvalidBytes() {
    const std::string fffd = "\xEF\xBF\xBD";
    Utf8Stream s1;
    QCOMPARE(s1.push("a\xFF"
                     "b"),
             "a" + fffd + "b");
    QCOMPARE(s1.push("\x80"), fffd);  // a lone continuation byte
    QCOMPARE(s1.push("\xC0\xAF"), fffd + fffd);  // overlong: both bytes invalid
    QCOMPARE(s1.push("\xED\xA0\x80"), fffd + fffd + fffd);  // a surrogate
    QCOMPARE(s1.push("\xE2\x82"
                     "x"),
             fffd + "x");  // truncated 3-byte sequence, then ASCII
    Utf8Stream s2;
    QCOMPARE(s2.push("ok\xF0\x9F"), std::string("ok"));
    QCOMPARE(s2.flush(), fffd);  // an incomplete tail at the end
    QCOMPARE(s2.flush(), std::string());
    QCOMPARE(s2.push("z"), std::string("z"));
}

void TestTokenizer::vocabularyErrors() {
    VocabSpec unknownModel = tinyVocab("wordpiece");
    auto r1 = Tokenizer::fromVocab(unknownModel);
    QVERIFY(!r1);
    QCOMPARE(r1.error().code, ErrorCode::Unsupported);

    // An unknown pre-tokenizer is refused by name, with the names that would work; "gpt2" is
    // not llama.cpp's name for GPT-2's ("gpt-2"), and llama.cpp refuses it too.
    for (const char* name : {"falcon", "gpt2"}) {
        VocabSpec badPre = tinyVocab("gpt2");
        badPre.pre = name;
        auto r2 = Tokenizer::fromVocab(badPre);
        QVERIFY(!r2);
        QCOMPARE(r2.error().code, ErrorCode::Unsupported);
        QVERIFY2(r2.error().message.find(std::string("\"") + name + "\"") != std::string::npos,
                 r2.error().message.c_str());
        QVERIFY2(r2.error().message.find("\"gpt-2\"") != std::string::npos, r2.error().message.c_str());
    }

    VocabSpec badByte = tinyVocab("llama");
    badByte.tokens[3] = "<0x-1>";
    badByte.tokenTypes[3] = 6;
    auto r3 = Tokenizer::fromVocab(badByte);
    QVERIFY(!r3);
    QCOMPARE(r3.error().code, ErrorCode::InvalidFormat);

    VocabSpec shortScores = tinyVocab("llama");
    shortScores.scores.pop_back();
    QVERIFY(!Tokenizer::fromVocab(shortScores));

    // Ids that mean "none" (u32 max) or lie outside the vocabulary are no token.
    VocabSpec ids = tinyVocab("gpt2");
    ids.bosId = 4294967295;
    ids.eosId = 6;
    auto r4 = Tokenizer::fromVocab(ids);
    QVERIFY(r4.has_value());
    QCOMPARE((*r4)->bos(), -1);
    QCOMPARE((*r4)->eos(), -1);
    QVERIFY(!(*r4)->addBosByDefault());
    QCOMPARE((*r4)->encode("ab", true, false), (std::vector<TokenId>{5}));
}

// The pieces of each pre-tokenizer on what tells them apart; test_llama_vocab_files checks the
// resulting ids against llama.cpp on real vocabularies.
void TestTokenizer::preTokenizerPieces_data() {
    QTest::addColumn<QString>("pre");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("pieces");
    QTest::newRow("default breaks punctuation off first") << "default"
                                                          << "We'd've" << QStringList{"We", "'", "d", "'", "ve"};
    QTest::newRow("gpt-2 keeps contractions") << "gpt-2"
                                              << "We'd've" << QStringList{"We", "'d", "'ve"};
    QTest::newRow("default numbers and symbols")
        << ""
        << "$100+200 = 1234567" << QStringList{"$", "100", "+", "200", " ", "=", " ", "123", "456", "7"};
    QTest::newRow("smollm digits alone") << "smollm"
                                         << "a12 b" << QStringList{"a", "1", "2", " b"};
    QTest::newRow("llama-bpe contractions in capitals, digits in threes")
        << "llama-bpe"
        << "HE'S 12345\n\n"
        << QStringList{"HE", "'S", " ", "123", "45", "\n\n"};
    QTest::newRow("llama-bpe punctuation takes line breaks")
        << "llama-bpe"
        << "x.\n\ny  z" << QStringList{"x", ".\n\n", "y", " ", " z"};
    QTest::newRow("qwen2 digits alone") << "qwen2"
                                        << "12345" << QStringList{"1", "2", "3", "4", "5"};
    QTest::newRow("qwen2 a mark leads the next word") << "qwen2"
                                                      << "e\u0301te" << QStringList{"e", "\u0301te"};
    QTest::newRow("qwen35 marks are letters") << "qwen35"
                                              << "e\u0301te" << QStringList{"e\u0301te"};
}

void TestTokenizer::preTokenizerPieces() {
    QFETCH(QString, pre);
    QFETCH(QString, text);
    QFETCH(QStringList, pieces);
    const auto kind = preTokenizerFromName(pre.toStdString());
    QVERIFY(kind);
    const std::string utf8 = text.toStdString();
    std::vector<std::string_view> out;
    preTokenize(kind->kind, utf8, out);
    QStringList got;
    for (std::string_view piece : out) got << QString::fromUtf8(piece.data(), static_cast<qsizetype>(piece.size()));
    QCOMPARE(got, pieces);
}

QTEST_GUILESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"

// llama.cpp's own tokenizer cases against Hearth: every ggml-vocab-NAME.gguf in
// HEARTH_LLAMA_VOCAB with its .inp/.out. The .out ids are Hugging Face's (convert_hf_to_gguf_update.py:
// encode(text, add_special_tokens=False)), which llama.cpp's test-tokenizer-0 checks with no BOS
// and special-token text kept as plain text; Hearth is asked the same. A vocabulary Hearth claims
// must give every case exactly; any other must be refused as Unsupported, naming what is missing.
// Pre-tokenizer names without a vocabulary file (deepseek-r1-qwen, default, no key) are checked
// on renamed copies, against the oracle (llama.cpp by name) where it is installed.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

#include <set>

#include "engine/model/gguf.h"
#include "engine/model/gguf_writer.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/support/python_json.h"
#include "tests/support/test_env.h"

using namespace hearth;
using namespace hearth::test;

namespace {

// (tokenizer.ggml.model, tokenizer.ggml.pre) pairs Hearth claims; "" is a missing key.
const std::set<std::pair<std::string, std::string>> kClaimed = {
    {"llama", ""},      {"llama", "default"},  {"gpt2", ""},      {"gpt2", "default"},
    {"gpt2", "gpt-2"},  {"gpt2", "llama-bpe"}, {"gpt2", "qwen2"}, {"gpt2", "deepseek-r1-qwen"},
    {"gpt2", "qwen35"}, {"gpt2", "smollm"},
};

// Beyond the .inp cases: contractions in capitals, digit runs, line breaks after punctuation,
// combining marks, no-break and ideographic spaces, and the default split's symbols.
const QStringList kExtraCases = {"We'd've",
                                 "HE'S HERE, I'LL GO; YOU'RE 'RIGHT'",
                                 "1234567 12.5% $100+200=300 a^b ~c |x| `tick`",
                                 "line one.\r\nline two!\n\n\tindented",
                                 "e\u0301te\u0301 na\u0308ive \u0915\u093F\u0924\u093E\u092C",
                                 "a\u00A0b\u3000c \u2028d",
                                 "\u00ABquoted\u00BB \u2014 dash\u2026 \u00BFque?",
                                 "\u0661\u0662\u0663 \u00BD x\u00B2",
                                 "    indented code()\n        more",
                                 "emoji \U0001F642\U0001F642 !?"};

struct VocabCase {
    std::string text;
    std::vector<TokenId> ids;
};

QString readString(const GgufFile& file, const char* key) {
    const GgufValue* v = file.find(key);
    const std::string* s = v ? v->asString() : nullptr;
    return s ? QString::fromStdString(*s) : QString();
}

// The .inp file is the cases, each followed by "\n__ggml_vocab_test__\n"; the .out file one line
// of space-separated ids per case (test-tokenizer-0 reads them the same way).
std::vector<VocabCase> readCases(const QString& gguf) {
    QFile inp(gguf + ".inp"), out(gguf + ".out");
    if (!inp.open(QIODevice::ReadOnly) || !out.open(QIODevice::ReadOnly)) return {};
    const std::string raw = inp.readAll().toStdString();
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<VocabCase> cases;
    for (size_t pos = 0; pos < raw.size();) {
        const size_t next = raw.find(sep, pos);
        cases.push_back({raw.substr(pos, next == std::string::npos ? std::string::npos : next - pos), {}});
        if (next == std::string::npos) break;
        pos = next + sep.size();
    }
    const QList<QByteArray> lines = out.readAll().split('\n');
    if (lines.size() < static_cast<qsizetype>(cases.size())) return {};
    for (size_t i = 0; i < cases.size(); ++i)
        for (const QByteArray& id : lines[static_cast<qsizetype>(i)].trimmed().split(' '))
            if (!id.isEmpty()) cases[i].ids.push_back(id.toInt());
    return cases;
}

QJsonArray toJson(const std::vector<TokenId>& ids) {
    QJsonArray out;
    for (TokenId id : ids) out.append(id);
    return out;
}

QString quoted(const std::string& text) {
    return QString(QJsonDocument(QJsonArray{QString::fromStdString(text)}).toJson(QJsonDocument::Compact));
}

}  // namespace

class TestLlamaVocabFiles : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void matchesVocabFile_data();
    void matchesVocabFile();
    void renamedPreTokenizer_data();
    void renamedPreTokenizer();

private:
    QDir dir_;
    QTemporaryDir tmp_;
};

void TestLlamaVocabFiles::initTestCase() {
    // packaging/scripts/setup-oracle.sh extracts the files; CMake passes the folder to CTest.
    const QString dir = llamaVocabDir().isEmpty() ? "$HEARTH_LLAMA_VOCAB (not set)" : llamaVocabDir();
    HEARTH_REQUIRE_FILE(dir);
    dir_ = QDir(dir);
    QVERIFY(tmp_.isValid());
    qInfo("| file | model | pre | result |");
    qInfo("|---|---|---|---|");
}

void TestLlamaVocabFiles::matchesVocabFile_data() {
    QTest::addColumn<QString>("path");
    int n = 0;
    for (const QString& name : dir_.entryList({"ggml-vocab-*.gguf"}, QDir::Files, QDir::Name)) {
        if (!dir_.exists(name + ".inp") || !dir_.exists(name + ".out")) continue;
        QTest::newRow(qPrintable(name)) << dir_.filePath(name);
        ++n;
    }
    // llama.cpp 0.3.36's archive has 15 such files; far fewer means a broken download.
    QVERIFY2(n >= 10, qPrintable(QString("only %1 vocab files with cases in %2").arg(n).arg(dir_.path())));
}

void TestLlamaVocabFiles::matchesVocabFile() {
    QFETCH(QString, path);
    const std::vector<VocabCase> cases = readCases(path);
    QVERIFY2(!cases.empty(), qPrintable("cannot read the cases of " + path));
    auto file = GgufFile::open(path.toStdString());
    QVERIFY2(file, file ? "" : file.error().message.c_str());
    const QString model = readString(**file, "tokenizer.ggml.model");
    const QString pre = readString(**file, "tokenizer.ggml.pre");
    const bool claimed = kClaimed.contains({model.toStdString(), pre.toStdString()});
    auto row = [&](const QString& result) {
        qInfo("| %s | %s | %s | %s |", qPrintable(QFileInfo(path).fileName()), qPrintable(model),
              qPrintable(pre.isEmpty() ? "(none)" : pre), qPrintable(result));
    };

    auto tokenizer = Tokenizer::fromGguf(**file);
    if (!tokenizer) {
        const Error& e = tokenizer.error();
        row("unsupported: " + QString::fromStdString(e.message));
        QVERIFY2(!claimed, e.message.c_str());
        QCOMPARE(e.code, ErrorCode::Unsupported);
        // The refusal names what Hearth lacks: the pre-tokenizer of a BPE vocabulary, else the model.
        const QString named =
            model == "gpt2" ? "tokenizer.ggml.pre \"" + pre + "\"" : "tokenizer.ggml.model \"" + model + "\"";
        QVERIFY2(QString::fromStdString(e.message).contains(named), e.message.c_str());
        return;
    }
    QVERIFY2(claimed, "Hearth built a tokenizer for a vocabulary it does not claim; add it to kClaimed once checked");
    QStringList mismatches;
    for (const VocabCase& c : cases) {
        const std::vector<TokenId> ours = (*tokenizer)->encode(c.text, false, false);
        if (ours != c.ids)
            mismatches << QString("  %1: hearth %2 llama.cpp %3")
                              .arg(quoted(c.text), QJsonDocument(toJson(ours)).toJson(QJsonDocument::Compact),
                                   QJsonDocument(toJson(c.ids)).toJson(QJsonDocument::Compact));
    }
    const qsizetype nSame = static_cast<qsizetype>(cases.size()) - mismatches.size();
    row(QString("%1 %2/%3").arg(mismatches.isEmpty() ? "identical" : "DIFFERENT").arg(nSame).arg(cases.size()));
    QVERIFY2(mismatches.isEmpty(), qPrintable("\n" + mismatches.join("\n")));
}

// A copy of a vocabulary file with tokenizer.ggml.pre rewritten ("" removes the key). Where the
// pre-type is the file's own, its .out still holds; the oracle, which picks the regex by the
// name, is asked too, also on kExtraCases.
void TestLlamaVocabFiles::renamedPreTokenizer_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("pre");
    QTest::addColumn<bool>("samePreType");
    QTest::newRow("deepseek-r1-qwen") << "ggml-vocab-qwen2.gguf"
                                      << "deepseek-r1-qwen" << true;
    QTest::newRow("default") << "ggml-vocab-gpt-2.gguf"
                             << "default" << false;
    QTest::newRow("no key") << "ggml-vocab-gpt-2.gguf"
                            << "" << false;
    QTest::newRow("gpt-2") << "ggml-vocab-gpt-2.gguf"
                           << "gpt-2" << true;
    QTest::newRow("llama-bpe") << "ggml-vocab-llama-bpe.gguf"
                               << "llama-bpe" << true;
    QTest::newRow("qwen2") << "ggml-vocab-qwen2.gguf"
                           << "qwen2" << true;
    QTest::newRow("qwen35") << "ggml-vocab-qwen35.gguf"
                            << "qwen35" << true;
}

void TestLlamaVocabFiles::renamedPreTokenizer() {
    QFETCH(QString, source);
    QFETCH(QString, pre);
    QFETCH(bool, samePreType);
    const QString sourcePath = dir_.filePath(source);
    HEARTH_REQUIRE_FILE(sourcePath);
    auto original = GgufFile::open(sourcePath.toStdString());
    QVERIFY(original);
    GgufWriter w;
    for (const auto& [key, value] : (*original)->metadata()) w.setValue(key, value);
    if (pre.isEmpty()) w.remove("tokenizer.ggml.pre");
    else w.set("tokenizer.ggml.pre", pre.toStdString());
    const QString path = tmp_.filePath(QString(QTest::currentDataTag()).replace(' ', '-') + ".gguf");
    QVERIFY(w.writeFile(path.toStdString()));
    auto file = GgufFile::open(path.toStdString());
    QVERIFY(file);
    auto tokenizer = Tokenizer::fromGguf(**file);
    QVERIFY2(tokenizer, tokenizer ? "" : tokenizer.error().message.c_str());

    const std::vector<VocabCase> cases = readCases(sourcePath);
    QVERIFY(!cases.empty());
    QJsonArray texts;
    for (const VocabCase& c : cases) {
        texts.append(QString::fromStdString(c.text));
        if (samePreType) QCOMPARE((*tokenizer)->encode(c.text, false, false), c.ids);
    }
    for (const QString& extra : kExtraCases) texts.append(extra);

    if (!QFileInfo::exists(oraclePython())) {
        if (underCi()) QFAIL("no oracle (HEARTH_ORACLE_PYTHON)");
        qInfo("%s: no oracle here; %s", QTest::currentDataTag(),
              samePreType ? "checked against the .out ids only" : "nothing to compare with");
        if (!samePreType) QSKIP("no oracle: the default split is checked against llama.cpp only");
        return;
    }
    const QJsonObject answer = askPython(
        oraclePython(), sourceDir() + "/tests/conformance/oracle.py",
        {{"op", "tokenize"}, {"model", path}, {"texts", texts}, {"vocab_only", true}, {"add_special", false}});
    QVERIFY2(!answer.contains("error"), qPrintable(answer["error"].toString()));
    const QJsonArray expected = answer["tokens"].toArray();
    QCOMPARE(expected.size(), texts.size());
    QStringList mismatches;
    for (qsizetype i = 0; i < texts.size(); ++i) {
        const std::string text = texts[i].toString().toStdString();
        const QJsonArray ours = toJson((*tokenizer)->encode(text, false, false));
        if (ours != expected[i].toArray())
            mismatches << QString("  %1: hearth %2 oracle %3")
                              .arg(quoted(text), QJsonDocument(ours).toJson(QJsonDocument::Compact),
                                   QJsonDocument(expected[i].toArray()).toJson(QJsonDocument::Compact));
    }
    // BOS by default as llama.cpp decides it from the name when add_bos_token is absent (llama-bpe).
    const QJsonObject withBos =
        askPython(oraclePython(), sourceDir() + "/tests/conformance/oracle.py",
                  {{"op", "tokenize"}, {"model", path}, {"texts", QJsonArray{"Hello"}}, {"vocab_only", true}});
    QVERIFY2(!withBos.contains("error"), qPrintable(withBos["error"].toString()));
    QCOMPARE(toJson((*tokenizer)->encode("Hello", (*tokenizer)->addBosByDefault(), false)),
             withBos["tokens"].toArray().first().toArray());
    qInfo("| %s (pre %s) | oracle | %lld strings | %lld identical |", qPrintable(source),
          qPrintable(pre.isEmpty() ? "(none)" : pre), static_cast<long long>(texts.size()),
          static_cast<long long>(texts.size() - mismatches.size()));
    QVERIFY2(mismatches.isEmpty(), qPrintable("\n" + mismatches.join("\n")));
}

QTEST_GUILESS_MAIN(TestLlamaVocabFiles)
#include "test_llama_vocab_files.moc"

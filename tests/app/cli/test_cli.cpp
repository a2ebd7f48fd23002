// hearth-cli's contract: usage, version, JSON output on a tiny model, and hostile GGUF files —
// each a clear one-line error on stderr and exit code 1, never a signal.
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>

#include "engine/model/gguf.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/app/chat/thinking_model.h"
#include "tests/support/cli_runner.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;
using namespace hearth::test;

namespace {

void putU64(std::vector<uint8_t>& b, uint64_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }
void putU32(std::vector<uint8_t>& b, uint64_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }

}  // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void versionAndHelp();
    void everySubcommandHasItsOwnHelp();
    void usageErrors();
    void generateJsonOnTinyModel();
    void noThinkClosesTheReasoningSpan();
    void tokenizeWithAndWithoutTensors();
    void hostileFiles_data();
    void hostileFiles();

private:
    QString writeImage(const QString& name, const std::vector<uint8_t>& bytes);
    QTemporaryDir dir_;
    QString tiny_;
    GgufImage image_;
};

void TestCli::initTestCase() {
    QVERIFY(QFileInfo::exists(cliExe()));
    image_ = tinyLlama().toBytes();
    tiny_ = writeImage("tiny.gguf", image_.bytes);
}

QString TestCli::writeImage(const QString& name, const std::vector<uint8_t>& bytes) {
    QFile f(dir_.filePath(name));
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<qint64>(bytes.size()));
    return f.fileName();
}

void TestCli::versionAndHelp() {
    const CliRun v = runCli({"--version"});
    QCOMPARE(v.exitCode, 0);
    QVERIFY(v.out.startsWith("hearth-cli " HEARTH_VERSION));
    const CliRun h = runCli({"--help"});
    QCOMPARE(h.exitCode, 0);
    for (const char* cmd : {"generate", "tokenize", "chat", "info"}) QVERIFY(h.out.contains(cmd));
    const CliRun info = runCli({"info"});
    QCOMPARE(info.exitCode, 0);
    QVERIFY(info.out.contains("CUDA: unavailable ("));
}

// `hearth-cli NAME --help` for every command the global help lists: the command's own usage and
// each option its usage line names, described; never the global text.
void TestCli::everySubcommandHasItsOwnHelp() {
    const CliRun global = runCli({"--help"});
    QCOMPARE(global.exitCode, 0);
    const QRegularExpression commandLine("^  ([a-z][a-z-]*) ");
    const QRegularExpression optionName("--([a-z][a-z0-9-]*)");
    QMap<QString, QStringList> optionsOf;  // command -> the options its usage lines name
    QString current;
    for (const QString& l : QString::fromUtf8(global.out).split('\n')) {
        if (const auto m = commandLine.match(l); m.hasMatch()) current = m.captured(1);
        else if (!l.startsWith("    ")) current.clear();  // "Sampling ...", "Options: ..."
        if (current.isEmpty()) continue;
        optionsOf[current];
        for (auto it = optionName.globalMatch(l); it.hasNext();) optionsOf[current] << it.next().captured(1);
    }
    QCOMPARE(optionsOf.size(), 14);  // every command of cli.cpp's table
    for (auto it = optionsOf.constBegin(); it != optionsOf.constEnd(); ++it) {
        const QString& name = it.key();
        const CliRun h = runCli({name, "--help"});
        QVERIFY2(!h.crashed && h.exitCode == 0, qPrintable(name + ": " + h.err));
        const QString out = QString::fromUtf8(h.out);
        QVERIFY2(out.startsWith("Usage: hearth-cli " + name + " "), qPrintable(out));
        QVERIFY2(h.out != global.out && !out.contains("Commands:"), qPrintable(name));
        const QString options = out.mid(out.indexOf("\nOptions:\n"));
        QVERIFY2(options.size() > 10, qPrintable(name + ": no Options section"));
        for (const QString& o : it.value())
            QVERIFY2(options.contains("\n  --" + o + " ") || options.contains("\n  --" + o + "\n"),
                     qPrintable(name + " --help does not describe --" + o + ":\n" + out));
        QCOMPARE(runCli({name, "-h"}).out, h.out);
    }
    // Each command lists what it reads, not every option of every command.
    const QString chat = QString::fromUtf8(runCli({"chat", "--help"}).out);
    QVERIFY(chat.contains("--no-db") && chat.contains("--temp") && chat.contains("(default: 256)"));
    QVERIFY(!chat.contains("--requests") && !chat.contains("--beams"));
    QVERIFY(QString::fromUtf8(runCli({"generate", "--help"}).out).contains("--beams"));
}

void TestCli::usageErrors() {
    for (const QStringList& args :
         {QStringList{"frobnicate"}, QStringList{"generate", "--prompt", "x"},
          QStringList{"generate", "--model", tiny_}, QStringList{"tokenize", "--model", tiny_},
          QStringList{"generate", "--model", tiny_, "--prompt", "x", "--max-tokens", "lots"}}) {
        const CliRun r = runCli(args);
        QVERIFY2(!r.crashed && r.exitCode == 2, qPrintable(args.join(' ')));
        QVERIFY(r.out.isEmpty());
        QVERIFY(!r.err.isEmpty());
    }
    const CliRun missing = runCli({"info", "--model", dir_.filePath("absent.gguf")});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY(missing.err.contains("absent.gguf"));
    const CliRun badTemp = runCli({"generate", "--model", tiny_, "--prompt", "x", "--temp", "-1"});
    QCOMPARE(badTemp.exitCode, 1);
    QVERIFY2(badTemp.err.contains("temperature"), badTemp.err.constData());
}

void TestCli::generateJsonOnTinyModel() {
    const CliRun r = runCli(
        {"generate", "--model", tiny_, "--prompt", " the cat", "--raw", "--temp", "0", "--max-tokens", "5", "--json"});
    QVERIFY2(!r.crashed && r.exitCode == 0, r.err.constData());
    QCOMPARE(r.out.count('\n'), 1);  // exactly one line
    const QJsonObject o = r.json();
    QCOMPARE(o["prompt_tokens"].toArray().first().toInt(), 1);  // BOS: SentencePiece default
    const QJsonArray tokens = o["tokens"].toArray();
    const QString finish = o["finish_reason"].toString();
    QVERIFY(finish == "length" || finish == "eos");
    QCOMPARE(tokens.size() == 5, finish == "length");
    const QJsonObject t = o["timings"].toObject();
    for (const char* key : {"load_ms", "prefill_tokens", "prefill_ms", "ttft_ms", "decode_tokens", "decode_ms"})
        QVERIFY2(t.contains(key), key);
    QCOMPARE(t["prefill_tokens"].toInt(), o["prompt_tokens"].toArray().size());
    QCOMPARE(t["decode_tokens"].toInt(), tokens.size() - 1);
}

// --no-think renders Qwen 3's empty think block after the generation prompt, with and without
// a stored conversation (--db goes through the turn pipeline).
void TestCli::noThinkClosesTheReasoningSpan() {
    const QString model = dir_.filePath("thinking.gguf");
    QVERIFY(thinkingModel().writeFile(model.toStdString()).has_value());
    const auto promptOf = [&](QStringList extra) {
        extra = QStringList{"generate", "--model", model,          "--prompt", "2+2?",
                            "--temp",   "0",       "--max-tokens", "16",       "--json"} +
            extra;
        const CliRun r = runCli(extra);
        if (r.crashed || r.exitCode != 0) qWarning("%s: %s", qPrintable(extra.join(' ')), r.err.constData());
        return r.json();
    };
    const QJsonObject on = promptOf({}), off = promptOf({"--no-think"});
    QCOMPARE(on["text"].toString(), QString::fromUtf8(kThinkingReply));  // the reply keeps its reasoning
    const QJsonArray onTokens = on["prompt_tokens"].toArray(), offTokens = off["prompt_tokens"].toArray();
    QVERIFY2(offTokens.size() > onTokens.size(),
             qPrintable(QString("%1 vs %2").arg(offTokens.size()).arg(onTokens.size())));
    for (qsizetype i = 0; i < onTokens.size(); ++i) QCOMPARE(offTokens[i], onTokens[i]);  // only the end differs
    const QString db = dir_.filePath("chats.sqlite");
    const QJsonObject storedOff = promptOf({"--db", db, "--conversation", "a", "--no-think"});
    QCOMPARE(storedOff["prompt_tokens"].toArray(), offTokens);
}

// tokenize reads only the vocabulary: a vocabulary-only GGUF (no tensors, like llama.cpp's
// ggml-vocab-*.gguf) gives the ids the whole model gives.
void TestCli::tokenizeWithAndWithoutTensors() {
    auto full = GgufFile::open(tiny_.toStdString());
    QVERIFY(full);
    GgufWriter vocabOnly;
    for (const auto& [key, value] : (*full)->metadata()) vocabOnly.setValue(key, value);
    const QString vocabPath = writeImage("vocab-only.gguf", vocabOnly.toBytes().bytes);
    QVERIFY((*GgufFile::open(vocabPath.toStdString()))->tensors().empty());

    QJsonArray expected;
    for (TokenId id : (*Tokenizer::fromGguf(**full))->encode(" the cat", true, false)) expected.append(id);
    QCOMPARE(expected.first().toInt(), 1);  // BOS: SentencePiece default
    for (const QString& model : {tiny_, vocabPath}) {
        const CliRun r = runCli({"tokenize", "--model", model, "--text", " the cat", "--json"});
        QVERIFY2(!r.crashed && r.exitCode == 0, r.err.constData());
        QCOMPARE(r.json()["tokens"].toArray(), expected);
    }
}

void TestCli::hostileFiles_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("mentions");
    const GgufLayout& L = image_.layout;
    const std::vector<uint8_t>& good = image_.bytes;
    const auto cut = [&](uint64_t n) {
        return QByteArray(reinterpret_cast<const char*>(good.data()), static_cast<qsizetype>(n));
    };
    const auto patched = [&](auto patch) {
        std::vector<uint8_t> b = good;
        patch(b);
        return QByteArray(reinterpret_cast<const char*>(b.data()), static_cast<qsizetype>(b.size()));
    };
    QTest::newRow("empty") << cut(0) << "";
    QTest::newRow("cut in header") << cut(L.headerEnd - 1) << "";
    QTest::newRow("cut after header") << cut(L.headerEnd) << "";
    QTest::newRow("cut in metadata") << cut(L.kvs[3].valueAt + 2) << "";
    QTest::newRow("cut after metadata") << cut(L.metadataEnd) << "";
    QTest::newRow("cut in tensor infos") << cut(L.tensorInfos[1].typeAt) << "";
    QTest::newRow("cut after tensor infos") << cut(L.tensorInfoEnd) << "";
    QTest::newRow("cut at data start") << cut(L.dataStart) << "";
    QTest::newRow("cut before the end") << cut(L.size - 1) << "";
    QTest::newRow("tensor count 2^63") << patched([&](auto& b) { putU64(b, 8, 1ull << 63); }) << "";
    QTest::newRow("kv count 2^63") << patched([&](auto& b) { putU64(b, 16, 1ull << 63); }) << "";
    QTest::newRow("key length 2^63") << patched([&](auto& b) { putU64(b, L.kvs[0].keyAt, 1ull << 63); }) << "";
    QTest::newRow("tensor name length 2^64-1")
        << patched([&](auto& b) { putU64(b, L.tensorInfos[0].nameAt, ~0ull); }) << "";
    QTest::newRow("tensor offset past end")
        << patched([&](auto& b) { putU64(b, L.tensorInfos[2].offsetAt, 1ull << 40); }) << "";
    QTest::newRow("unknown tensor type") << patched([&](auto& b) { putU32(b, L.tensorInfos[0].typeAt, 77); }) << "";
    QTest::newRow("unknown value type") << patched([&](auto& b) { putU32(b, L.kvs[1].typeAt, 99); }) << "";
    QTest::newRow("misaligned tensor") << patched([&](auto& b) {
        uint64_t off;
        std::memcpy(&off, b.data() + L.tensorInfos[3].offsetAt, 8);
        putU64(b, L.tensorInfos[3].offsetAt, off + 1);
    }) << "";
    QTest::newRow("huge dims") << patched([&](auto& b) { putU64(b, L.tensorInfos[0].dimsAt, 1ull << 62); }) << "";
    QTest::newRow("version 1") << patched([&](auto& b) { putU32(b, 4, 1); }) << "version";
    QTest::newRow("bad magic") << patched([&](auto& b) { b[0] = 'X'; }) << "magic";
    GgufWriter huge = tinyLlama();
    huge.set("llama.block_count", uint32_t{100000});
    const std::vector<uint8_t> hugeBytes = huge.toBytes().bytes;
    QTest::newRow("block_count 100000") << QByteArray(reinterpret_cast<const char*>(hugeBytes.data()),
                                                      static_cast<qsizetype>(hugeBytes.size()))
                                        << "block_count";
}

void TestCli::hostileFiles() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, mentions);
    const QString path = writeImage("hostile.gguf", std::vector<uint8_t>(bytes.begin(), bytes.end()));
    for (const char* command : {"info", "generate"}) {
        QStringList args{command, "--model", path};
        if (QByteArray(command) == "generate")
            args << "--prompt"
                 << "hi"
                 << "--max-tokens"
                 << "2";
        const CliRun r = runCli(args, 60000);
        QVERIFY2(!r.crashed, "hearth-cli died from a signal or hung");
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.startsWith("hearth-cli: "));
        QCOMPARE(r.err.count('\n'), 1);  // one line
        QVERIFY2(r.err.contains(mentions.toUtf8()), r.err.constData());
        if (QByteArray(command) == "info") QVERIFY(r.out.contains("Compute backends"));  // printed before loading
        else QVERIFY(r.out.isEmpty());
    }
}

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"

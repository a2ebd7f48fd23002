// The model picker's record of a GGUF file before loading: family, parameter count (the engine's
// count), quantization, trained context, and whether Hearth runs it - with loading's own reason
// when not: an unknown architecture, a pre-tokenizer it does not implement, RoPE scaling it does
// not apply. Files are tiny Llamas written by the test, changed one key at a time.
#include <QTemporaryDir>
#include <QtTest>

#include "app/common/model_info.h"
#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;

class TestModelInfo : public QObject {
    Q_OBJECT
private slots:
    void supportedFileFacts();
    void quantizationNamesTheWeights();
    void unsupportedFilesSayWhy_data();
    void unsupportedFilesSayWhy();
    void notAGgufFileIsAnError();
    void parameterCounts();

private:
    QString write(const QString& name, const GgufWriter& w) {
        const QString path = dir_.filePath(name);
        return w.writeFile(path.toStdString()) ? path : QString();
    }
    QTemporaryDir dir_;
};

void TestModelInfo::supportedFileFacts() {
    const QString path = write("tiny.gguf", test::tinyLlama());
    auto info = inspectModel(path);
    QVERIFY(info);
    QCOMPARE(info->family, QString("Llama"));
    QCOMPARE(info->architecture, QString("llama"));
    QCOMPARE(info->name, QString("tiny"));  // the file name: no general.basename
    // token_embd 64 x 264, output_norm 64, per layer two norms of 64, Q and O 64 x 64, K and V
    // 64 x 32, gate and up 64 x 96, down 96 x 64: tied output, no output.weight.
    QCOMPARE(info->nParams, qint64{16896 + 64 + 2 * (64 + 64 + 4096 + 2048 + 2048 + 4096 + 3 * 6144)});
    auto file = GgufFile::open(path.toStdString());
    QVERIFY(file);
    auto model = Model::load(**file);
    QVERIFY(model);
    QCOMPARE(static_cast<uint64_t>(info->nParams), (*model)->config().nParams);  // the engine's count
    QCOMPARE(info->quantization, QString("F32"));
    QCOMPARE(info->contextLength, 256);
    QCOMPARE(info->chatFormat, QString("plain"));
    QVERIFY2(info->unsupported.isEmpty(), qPrintable(info->unsupported));
}

// general.file_type names the mix when present; otherwise the type of most of the matrices' bytes
// (norms stay F32 in a quantized file and do not count).
void TestModelInfo::quantizationNamesTheWeights() {
    test::TinyLlamaShape q8;
    q8.weightType = DType::Q8_0;
    QCOMPARE(inspectModel(write("q8.gguf", test::tinyLlama(q8)))->quantization, QString("Q8_0"));
    GgufWriter typed = test::tinyLlama(q8);
    typed.set("general.file_type", uint32_t{15});
    QCOMPARE(inspectModel(write("typed.gguf", typed))->quantization, QString("Q4_K_M"));
}

void TestModelInfo::unsupportedFilesSayWhy_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("family");
    QTest::addColumn<QString>("reason");
    QTest::newRow("architecture") << "general.architecture"
                                  << "mamba"
                                  << "Mamba"
                                  << "not supported: architecture 'mamba' is not supported "
                                     "(supported: llama, qwen2, qwen3, phi3, gemma2, gemma3)";
    QTest::newRow("pre-tokenizer") << "tokenizer.ggml.pre"
                                   << "falcon"
                                   << "Llama"
                                   << "not supported: tokenizer.ggml.pre \"falcon\" is not supported (supported: ";
    QTest::newRow("RoPE scaling") << "llama.rope.scaling.type"
                                  << "yarn"
                                  << "Llama"
                                  << "not supported: RoPE scaling 'yarn' (factor 4) is not supported yet for llama";
}

void TestModelInfo::unsupportedFilesSayWhy() {
    QFETCH(QString, key);
    QFETCH(QString, value);
    QFETCH(QString, family);
    QFETCH(QString, reason);
    GgufWriter w = test::tinyLlama();
    w.set(key.toStdString(), value.toStdString());
    if (key == "tokenizer.ggml.pre") {  // pre-tokenizers belong to byte-level BPE vocabularies
        w.set("tokenizer.ggml.model", std::string("gpt2"));
        w.set("tokenizer.ggml.merges", std::vector<std::string>{});
    }
    if (key.startsWith("llama.rope")) w.set("llama.rope.scaling.factor", 4.0f);
    auto info = inspectModel(write(QString("unsupported-%1.gguf").arg(QTest::currentDataTag()), w));
    QVERIFY(info);  // a valid GGUF: the record, with the reason
    QCOMPARE(info->family, family);
    QVERIFY2(info->unsupported.startsWith(reason), qPrintable(info->unsupported));
    QVERIFY(info->nParams > 0);  // the facts are still there
    QCOMPARE(info->quantization, QString("F32"));
}

void TestModelInfo::notAGgufFileIsAnError() {
    QFile notes(dir_.filePath("notes.gguf"));
    QVERIFY(notes.open(QIODevice::WriteOnly));
    notes.write("these are my notes, not a model");
    notes.close();
    auto info = inspectModel(notes.fileName());
    QVERIFY(!info);
    QCOMPARE(info.error().code, ErrorCode::InvalidFormat);
}

void TestModelInfo::parameterCounts() {
    QCOMPARE(formatParams(134515008), QString("135 M"));
    QCOMPARE(formatParams(1100048384), QString("1.1 B"));
    QCOMPARE(formatParams(4600000), QString("4.6 M"));
    QCOMPARE(formatParams(292000), QString("292 K"));
}

QTEST_GUILESS_MAIN(TestModelInfo)
#include "test_model_info.moc"

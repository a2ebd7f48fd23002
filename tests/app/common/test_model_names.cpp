// Readable model names (cli::core::readableModelName), the one name the window, the picker, the
// terminal and the server show: the real files' GGUF metadata (SmolLM2's general.name is the
// converter's "Smollm2 135M 8k Lc100K Mix1 Ep2", never shown), file names as publishers and
// llama.cpp's tools write them (quantization and split suffixes, Ollama's hash-named blobs) and
// synthetic files that carry or lack the naming keys.
#include <QTemporaryDir>
#include <QtTest>

#include "app/cli_core/model_facts.h"
#include "app/common/model_info.h"
#include "engine/model/gguf.h"
#include "tests/support/test_env.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;
using cli::core::cleanedModelFileName;
using cli::core::ModelNameFields;
using cli::core::readableModelName;

namespace {

const std::string kHash = "sha256-" + std::string(64, 'a');

std::string metadataString(const GgufFile& f, const char* key) {
    const GgufValue* v = f.find(key);
    return v && v->asString() ? *v->asString() : std::string();
}

}  // namespace

class TestModelNames : public QObject {
    Q_OBJECT
private slots:
    void cleanedFileNames_data();
    void cleanedFileNames();
    void fromFields_data();
    void fromFields();
    void realFiles_data();
    void realFiles();
    void syntheticFiles();
    void baseOrChatTuned_data();
    void baseOrChatTuned();
    void baseModelFiles();

private:
    QTemporaryDir dir_;
};

void TestModelNames::cleanedFileNames_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("cleaned");
    QTest::newRow("SmolLM2") << "/m/SmolLM2-135M-Instruct.Q4_1.gguf"
                             << "SmolLM2-135M-Instruct";
    QTest::newRow("gemma lower case") << "gemma-3-270m-q4_k_m.gguf"
                                      << "gemma-3-270m";
    QTest::newRow("IQ type") << "/a/b/Meta-Llama-3.1-8B-Instruct-IQ3_XS.gguf"
                             << "Meta-Llama-3.1-8B-Instruct";
    QTest::newRow("version with a dot") << "mistral-7b-instruct-v0.2.Q4_K_M.gguf"
                                        << "mistral-7b-instruct-v0.2";
    QTest::newRow("split part") << "gemma-3-270m-Q4_K_M-00002-of-00003.gguf"
                                << "gemma-3-270m";
    QTest::newRow("float type") << "Qwen3-0.6B-BF16.gguf"
                                << "Qwen3-0.6B";
    QTest::newRow("F16 and extension case") << "phi-3-mini.F16.GGUF"
                                            << "phi-3-mini";
    QTest::newRow("no type") << "tiny.gguf"
                             << "tiny";
    QTest::newRow("only a type") << "Q4_0.gguf"
                                 << "Q4_0";
    QTest::newRow("Ollama blob") << QString::fromStdString("/o/blobs/" + kHash) << "";
    QTest::newRow("bare hash") << QString(40, 'f') << "";
    QTest::newRow("question word is no type") << "quokka-7b.gguf"
                                              << "quokka-7b";
}

void TestModelNames::cleanedFileNames() {
    QFETCH(QString, path);
    QFETCH(QString, cleaned);
    QCOMPARE(QString::fromStdString(cleanedModelFileName(path.toStdString())), cleaned);
}

void TestModelNames::fromFields_data() {
    QTest::addColumn<QString>("basename");
    QTest::addColumn<QString>("sizeLabel");
    QTest::addColumn<QString>("finetune");
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("readable");
    const QString smolName = "Smollm2 135M 8k Lc100K Mix1 Ep2";
    QTest::newRow("file name agrees with basename")
        << "smollm2"
        << "135M"
        << "8k-lc100k-mix1-ep2" << smolName << "SmolLM2-135M-Instruct.Q4_1.gguf"
        << "SmolLM2-135M-Instruct";
    QTest::newRow("hash-named file: the naming keys")
        << "smollm2"
        << "135M"
        << "8k-lc100k-mix1-ep2" << smolName << QString::fromStdString(kHash) << "smollm2-135M-8k-lc100k-mix1-ep2";
    QTest::newRow("renamed file: the naming keys") << "Meta-Llama-3.1"
                                                   << "8B"
                                                   << "Instruct"
                                                   << "Meta Llama 3.1 8B Instruct"
                                                   << "/x/model.gguf"
                                                   << "Meta-Llama-3.1-8B-Instruct";
    QTest::newRow("basename spelled otherwise in the file") << "Meta-Llama-3.1"
                                                            << "8B"
                                                            << "Instruct"
                                                            << ""
                                                            << "meta_llama_3.1-8b-instruct.Q8_0.gguf"
                                                            << "meta_llama_3.1-8b-instruct";
    QTest::newRow("basename alone") << "gemma-3"
                                    << ""
                                    << ""
                                    << "" << QString::fromStdString(kHash) << "gemma-3";
    QTest::newRow("no basename: the file name") << ""
                                                << ""
                                                << ""
                                                << "tiny-llama-test"
                                                << "/t/tiny.gguf"
                                                << "tiny";
    QTest::newRow("no basename, hash-named: general.name")
        << ""
        << ""
        << ""
        << "Mamba test" << QString::fromStdString(kHash) << "Mamba test";
    QTest::newRow("nothing at all") << ""
                                    << ""
                                    << ""
                                    << ""
                                    << ""
                                    << "model";
}

void TestModelNames::fromFields() {
    QFETCH(QString, basename);
    QFETCH(QString, sizeLabel);
    QFETCH(QString, finetune);
    QFETCH(QString, name);
    QFETCH(QString, path);
    QFETCH(QString, readable);
    const ModelNameFields fields{basename.toStdString(), sizeLabel.toStdString(), finetune.toStdString(),
                                 name.toStdString(), path.toStdString()};
    QCOMPARE(QString::fromStdString(readableModelName(fields)), readable);
}

void TestModelNames::realFiles_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("readable");
    QTest::newRow("SmolLM2") << "SmolLM2-135M-Instruct.Q4_1.gguf"
                             << "SmolLM2-135M-Instruct";
    QTest::newRow("Gemma 3") << "gemma-3-270m-q4_k_m.gguf"
                             << "gemma-3-270m";
}

// The real files' metadata, read as the engine reads it; the same file under a blob's hash name
// is named from its general.basename, size_label and finetune.
void TestModelNames::realFiles() {
    QFETCH(QString, file);
    QFETCH(QString, readable);
    const QString path = test::modelFile(file);
    HEARTH_REQUIRE_FILE(path);
    auto gguf = GgufFile::open(path.toStdString());
    QVERIFY(gguf);
    const std::string general = metadataString(**gguf, "general.name");
    QVERIFY(!general.empty());
    QCOMPARE(QString::fromStdString(readableModelName(**gguf)), readable);
    QVERIFY(readable != QString::fromStdString(general));
    auto info = inspectModel(path);
    QVERIFY(info);
    QCOMPARE(info->name, readable);  // what the window's status line, model button and picker show
    QCOMPARE(modelDisplayName(path), readable);
    qInfo("%s: general.name \"%s\" -> \"%s\"", qPrintable(file), general.c_str(), qPrintable(readable));

    const QString blob = dir_.filePath(QString::fromStdString(kHash));
    QFile::remove(blob);
    QVERIFY(QFile::link(path, blob));
    auto linked = GgufFile::open(blob.toStdString());
    QVERIFY(linked);
    const std::string expected = metadataString(**linked, "general.basename") + "-" +
        metadataString(**linked, "general.size_label") +
        (metadataString(**linked, "general.finetune").empty() ? ""
                                                              : "-" + metadataString(**linked, "general.finetune"));
    QCOMPARE(readableModelName(**linked), expected);
}

// Files written here: with the naming keys (control characters in them never reach a label),
// without them, and a path that is no model at all.
void TestModelNames::syntheticFiles() {
    GgufWriter named = test::tinyLlama();
    named.set("general.basename", std::string("Tiny\nLlama"));
    named.set("general.size_label", std::string("17K"));
    named.set("general.finetune", std::string("Chat"));
    const QString blob = dir_.filePath(QString(48, 'c'));
    QVERIFY(named.writeFile(blob.toStdString()));
    QCOMPARE(inspectModel(blob)->name, QString("Tiny Llama-17K-Chat"));
    const QString agreeing = dir_.filePath("TinyLlama-17K-Chat-v2.Q8_0.gguf");
    QVERIFY(named.writeFile(agreeing.toStdString()));
    QCOMPARE(inspectModel(agreeing)->name, QString("TinyLlama-17K-Chat-v2"));

    const QString plain = dir_.filePath("tiny-story-model.F32.gguf");
    QVERIFY(test::tinyLlama().writeFile(plain.toStdString()));
    QCOMPARE(inspectModel(plain)->name, QString("tiny-story-model"));

    const QString missing = dir_.filePath("Absent-1B-Instruct.Q4_0.gguf");
    QCOMPARE(modelDisplayName(missing), QString("Absent-1B-Instruct"));
}

void TestModelNames::baseOrChatTuned_data() {
    QTest::addColumn<QString>("finetune");
    QTest::addColumn<QString>("file");
    QTest::addColumn<bool>("chatTemplate");
    QTest::addColumn<bool>("tuned");
    QTest::newRow("instruct file") << ""
                                   << "SmolLM2-135M-Instruct.Q4_1.gguf" << false << true;
    QTest::newRow("-it") << ""
                         << "gemma-3-270m-it-Q8_0.gguf" << false << true;
    QTest::newRow("chat finetune") << "Chat"
                                   << "tinyllama.gguf" << false << true;
    QTest::newRow("no words, a template") << ""
                                          << "Meta-Llama-3.1-8B.Q4_K_M.gguf" << true << true;
    QTest::newRow("no words, no template") << ""
                                           << "Meta-Llama-3.1-8B.Q4_K_M.gguf" << false << false;
    QTest::newRow("base, with a template") << ""
                                           << "Qwen2.5-7B-Base-Q4_K_M.gguf" << true << false;
    QTest::newRow("'it' inside a word") << ""
                                        << "with-kit-1B.gguf" << false << false;
}

// A base model continues text; chat-tuned ones follow turns. The name decides first (instruct,
// chat, it, ... / base), the chat template after.
void TestModelNames::baseOrChatTuned() {
    QFETCH(QString, finetune);
    QFETCH(QString, file);
    QFETCH(bool, chatTemplate);
    QFETCH(bool, tuned);
    const ModelNameFields fields{.finetune = finetune.toStdString(), .path = "/m/" + file.toStdString()};
    QCOMPARE(cli::core::isChatTuned(fields, chatTemplate), tuned);
}

// The real files: SmolLM2 Instruct is chat-tuned; Gemma 3 270M (no chat template, no "it") is
// the base model.
void TestModelNames::baseModelFiles() {
    const QString smol = test::modelFile("SmolLM2-135M-Instruct.Q4_1.gguf"),
                  gemma = test::modelFile("gemma-3-270m-q4_k_m.gguf");
    HEARTH_REQUIRE_FILE(smol);
    HEARTH_REQUIRE_FILE(gemma);
    QVERIFY(inspectModel(smol)->chatTuned);
    QVERIFY(!inspectModel(gemma)->chatTuned);
}

QTEST_MAIN(TestModelNames)
#include "test_model_names.moc"

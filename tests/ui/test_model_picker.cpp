// The model picker over the catalog, offscreen, on fake trees written by the test
// (tests/support/fake_model_trees.h): the models of every source under that source's heading,
// each line with family, parameters, quantization, size and memory verdict (available memory
// injected: one model fits, one is tight, one is too big at its trained context); a split model
// listed once; the facts of the chosen one with where it was found and the memory estimate; the
// unreadable folder under "Skipped"; the current model, found nowhere, under "Opened files".
// screenshot(), only with HEARTH_PICKER_SHOT set, saves a picture of the picker over the fetched
// models placed in fake trees of several sources (the memory available is this machine's):
//   HEARTH_PICKER_SHOT=docs/screenshots/model-picker-sources.png QT_QPA_PLATFORM=xcb
//   HEARTH_MODELS_DIR=~/.cache/hearth/models xvfb-run -a build/tests/test_model_picker screenshot
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTranslator>
#include <QtTest>

#include "app/models/model_catalog.h"
#include "tests/support/fake_model_trees.h"
#include "tests/support/test_env.h"
#include "tests/support/unreadable_dir.h"
#include "ui/model_picker.h"

using namespace hearth;

namespace {

// A tiny Llama whose trained context makes its KV cache large: 2 layers x K and V x 32 F16
// elements = 256 bytes a token.
bool writeLongContext(const QString& path, int context) {
    test::TinyLlamaShape shape;
    shape.context = context;
    QDir().mkpath(QFileInfo(path).absolutePath());
    return test::tinyLlama(shape).writeFile(path.toStdString()).has_value();
}

QStringList lines(const QListWidget* list) {
    QStringList out;
    for (int i = 0; i < list->count(); ++i)
        out << (list->item(i)->flags() & Qt::ItemIsSelectable ? "  " : "# ") + list->item(i)->text();
    return out;
}

}  // namespace

class TestModelPicker : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void groupsBySource();
    void screenshot();
    void noEnglishInZhCn();
    void cleanupTestCase() { test::makeReadable((home() + "/.lmstudio/models/locked").toStdString()); }

private:
    QString home() const { return dir_.path() + "/home"; }
    QTemporaryDir dir_;
};

void TestModelPicker::initTestCase() {
    // Before any thread-pool thread exists, so that the scanning threads cannot read it either.
    QVERIFY2(test::makeUnreadable((home() + "/.lmstudio/models/locked").toStdString()),
             "cannot make a folder unreadable here");
    QVERIFY(test::writeTiny(dir_.path() + "/hearth-models/tiny.gguf"));
    QVERIFY(test::writeTinySplit(dir_.path() + "/hearth-models/big", 3));
    QVERIFY(writeLongContext(home() + "/.lmstudio/models/someone/Long-GGUF/long-512k.gguf", 512 * 1024));
    QVERIFY(test::writeOllamaModel(home() + "/.ollama/models", "registry.ollama.ai/library/tinyllama/latest",
                                   test::tinyBytes(4)));
    QVERIFY(test::writeHfFile(home() + "/.cache/huggingface/hub", "org/Tiny-GGUF", "0123456789abcdef", "tiny-q8.gguf",
                              test::tinyBytes(8)));
    QVERIFY(writeLongContext(home() + "/jan/models/huge/huge-1m.gguf", 1024 * 1024));
    QVERIFY(test::writeTiny(dir_.path() + "/elsewhere/current.gguf", 11));
}

void TestModelPicker::groupsBySource() {
    ModelCatalog::Options options;
    options.roots.home = home();
    options.roots.hearthModelsDir = dir_.path() + "/hearth-models";
    options.roots.ollamaSystemRoots = {};
    // 200 MB available: the 512k-token model needs (weights + 128 MiB of KV) x 1.1, 70% of it;
    // the 1M-token one twice that.
    options.availableMemory = [] { return qint64{200'000'000}; };
    ModelCatalog catalog(options);
    QSignalSpy finished(&catalog, &ModelCatalog::scanFinished);
    ModelPicker picker(catalog, dir_.path() + "/elsewhere/current.gguf");
    QTRY_VERIFY_WITH_TIMEOUT(picker.inspected(), 20000);
    QCOMPARE(finished.size(), 1);
    auto* list = picker.findChild<QListWidget*>("modelList");
    // The tiny Llamas have no chat template and no instruct/chat name: base models, flagged so.
    QCOMPARE(lines(list).join('\n'), QStringLiteral(R"(# Hearth
  big-00001-of-00003.gguf — Llama · 79 K · F32 · base model · 0.3 MB · fits
  tiny.gguf — Llama · 79 K · F32 · base model · 0.3 MB · fits
# LM Studio
  someone/Long-GGUF/long-512k.gguf — Llama · 79 K · F32 · base model · 0.3 MB · tight
# Ollama
  tinyllama:latest — Llama · 79 K · F32 · base model · 0.3 MB · fits
# Jan
  huge/huge-1m.gguf — Llama · 79 K · F32 · base model · 0.3 MB · too big
# Hugging Face
  org/Tiny-GGUF · tiny-q8.gguf — Llama · 79 K · F32 · base model · 0.3 MB · fits
# Opened files
  current.gguf — Llama · 79 K · F32 · base model · 0.3 MB · fits)"));
    // The current model is chosen; its facts have no source.
    auto* facts = picker.findChild<QLabel*>("modelFacts");
    QCOMPARE(list->currentItem()->text(), QString("current.gguf — Llama · 79 K · F32 · base model · 0.3 MB · fits"));
    QVERIFY2(!facts->text().contains("Found in"), qPrintable(facts->text()));
    QVERIFY(picker.findChild<QPushButton*>("loadButton")->isEnabled());
    auto* notes = picker.findChild<QLabel*>("scanNotes");
    QVERIFY(!notes->isHidden());
    QVERIFY2(notes->text().contains("LM Studio: " + QDir::toNativeSeparators(home() + "/.lmstudio/models/locked") +
                                    " cannot be read: Permission denied"),
             qPrintable(notes->text()));
    list->setCurrentRow(6);
    QVERIFY(list->currentItem()->text().startsWith("tinyllama:latest"));
    for (const QString& fact :
         {QString("Found in: Ollama (%1/.ollama/models/blobs/sha256-").arg(home()), QString("Family: Llama (llama)"),
          QString("Trained context: 256 tokens"), QString("Memory: "), QString(" at 256 tokens of context"),
          QString("<b>fits</b>: 200.0 MB available now"), QString("Hearth runs this model.")})
        QVERIFY2(facts->text().contains(fact), qPrintable(facts->text()));
    list->setCurrentRow(1);
    QVERIFY2(facts->text().contains("Size: 0.3 MB in 3 files"), qPrintable(facts->text()));
    list->setCurrentRow(8);  // huge-1m
    QVERIFY2(facts->text().contains("at 1,048,576 tokens of context") && facts->text().contains("<b>too big</b>"),
             qPrintable(facts->text()));
    picker.show();
    QVERIFY(QTest::qWaitForWindowExposed(&picker));
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(list->item(0)).center());
    QCOMPARE(list->currentRow(), 8);  // a heading cannot be chosen
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(list->item(2)).center());
    QCOMPARE(list->currentRow(), 2);
    // A second picker over the same catalog: the list at once, and nothing inspected again.
    const int nInspections = catalog.nInspections();
    ModelPicker again(catalog, {});
    QCOMPARE(list->count() - 2, again.findChild<QListWidget*>("modelList")->count());  // no "Opened files"
    QTRY_VERIFY_WITH_TIMEOUT(again.inspected(), 20000);
    QCOMPARE(catalog.nInspections(), nInspections);
}

void TestModelPicker::screenshot() {
    const QString out = qEnvironmentVariable("HEARTH_PICKER_SHOT");
    if (out.isEmpty()) QSKIP("HEARTH_PICKER_SHOT is not set");
    const QString smol = test::modelFile("SmolLM2-135M-Instruct.Q4_1.gguf");
    const QString gemma = test::modelFile("gemma-3-270m-q4_k_m.gguf");
    HEARTH_REQUIRE_FILE(smol);
    HEARTH_REQUIRE_FILE(gemma);
    QTemporaryDir dir;
    const QString h = dir.path() + "/home";
    const auto link = [](const QString& target, const QString& at) {
        QDir().mkpath(QFileInfo(at).absolutePath());
        return QFile::link(target, at);
    };
    QVERIFY(link(smol, dir.path() + "/hearth-models/SmolLM2-135M-Instruct.Q4_1.gguf"));
    QVERIFY(link(gemma, h + "/.lmstudio/models/lmstudio-community/gemma-3-270m-it-GGUF/gemma-3-270m-it-Q4_K_M.gguf"));
    QVERIFY(
        test::writeOllamaModel(h + "/.ollama/models", "registry.ollama.ai/library/smollm2/135m", test::readAll(smol)));
    {
        auto whole = GgufFile::open(gemma.toStdString());
        QVERIFY(whole);
        QVERIFY(QDir().mkpath(dir.path() + "/split"));
        const auto parts = test::writeSplit(**whole, (dir.path() + "/split/gemma-3-270m-Q4_K_M").toStdString(), 3);
        QCOMPARE(parts.size(), size_t{3});
        for (const std::string& part : parts)
            QVERIFY(test::writeHfFile(h + "/.cache/huggingface/hub", "unsloth/gemma-3-270m-it-GGUF", "8fd0b4b",
                                      QFileInfo(QString::fromStdString(part)).fileName(),
                                      test::readAll(QString::fromStdString(part))));
    }
    GgufWriter mamba = test::tinyLlama();
    mamba.set("general.architecture", std::string("mamba"));
    mamba.set("general.name", std::string("Mamba test"));
    QVERIFY(QDir().mkpath(h + "/jan/models/mamba"));
    QVERIFY(mamba.writeFile((h + "/jan/models/mamba/mamba-130m.gguf").toStdString()));
    QVERIFY(test::writeTiny(h + "/.cache/llama.cpp/org_tiny-llama_tiny.gguf"));
    ModelCatalog::Options options;
    options.roots.home = h;
    options.roots.hearthModelsDir = dir.path() + "/hearth-models";
    options.roots.ollamaSystemRoots = {};
    options.memory.contextLength = 8192;
    ModelCatalog catalog(options);
    ModelPicker picker(catalog, {});
    QTRY_VERIFY_WITH_TIMEOUT(picker.inspected(), 30000);
    auto* list = picker.findChild<QListWidget*>("modelList");
    for (int i = 0; i < list->count(); ++i)
        if (list->item(i)->text().startsWith("unsloth")) list->setCurrentRow(i);
    picker.show();
    QVERIFY(QTest::qWaitForWindowExposed(&picker));
    QTest::qWait(200);
    QVERIFY(picker.grab().save(out));
    qInfo("%s", qPrintable(lines(list).join('\n')));
}

// The picker in Simplified Chinese shows no English of its own: every heading, line, verdict,
// note, fact and button is translated. Allowed: what names a model or a file (display names,
// paths, general.name, family, architecture, quantization, chat format), the other apps' names,
// units and GGUF/KV. The trees: Hearth's folder (a split model), a folder of the user's, LM
// Studio's chosen folder (its settings.json, as in model_sources.cpp) and a chosen folder that is
// gone (a note), Ollama, the Hugging Face cache and Jan; one model fits, one is tight, one is too
// big; the current model is found nowhere ("Opened files"). With HEARTH_PICKER_SHOT_ZH set, a
// picture of it is saved there:
//   HEARTH_PICKER_SHOT_ZH=docs/screenshots/model-picker-zh_CN.png build/tests/test_model_picker noEnglishInZhCn
void TestModelPicker::noEnglishInZhCn() {
    QTranslator translator;
    if (!translator.load(":/i18n/hearth_zh_CN.qm")) QSKIP("the zh_CN catalogue is not built in");
    QCoreApplication::installTranslator(&translator);
    QTemporaryDir dir;
    const QString h = dir.path() + "/home";
    QVERIFY(test::writeTiny(dir.path() + "/hearth-models/tiny.gguf"));
    QVERIFY(test::writeTinySplit(dir.path() + "/hearth-models/big", 3));
    QVERIFY(test::writeTiny(dir.path() + "/mine/notes/mine.gguf", 3));
    QVERIFY(writeLongContext(dir.path() + "/big-disk/lms/someone/Long-GGUF/long-512k.gguf", 512 * 1024));
    QDir().mkpath(h + "/.lmstudio");
    QFile settings(h + "/.lmstudio/settings.json");
    QVERIFY(settings.open(QIODevice::WriteOnly));
    settings.write(QJsonDocument(QJsonObject{{"downloadsFolder", dir.path() + "/big-disk/lms"}}).toJson());
    settings.close();
    QDir().mkpath(h + "/.config/LM Studio");
    QFile old(h + "/.config/LM Studio/settings.json");
    QVERIFY(old.open(QIODevice::WriteOnly));
    old.write(QJsonDocument(QJsonObject{{"downloadsFolder", dir.path() + "/unplugged/models"}}).toJson());
    old.close();
    QVERIFY(test::writeOllamaModel(h + "/.ollama/models", "registry.ollama.ai/library/tinyllama/latest",
                                   test::tinyBytes(4)));
    QVERIFY(test::writeHfFile(h + "/.cache/huggingface/hub", "org/Tiny-GGUF", "0123456789abcdef", "tiny-q8.gguf",
                              test::tinyBytes(8)));
    QVERIFY(writeLongContext(h + "/jan/models/huge/huge-1m.gguf", 1024 * 1024));
    QVERIFY(test::writeTiny(dir.path() + "/elsewhere/current.gguf", 11));
    ModelCatalog::Options options;
    options.roots.home = h;
    options.roots.hearthModelsDir = dir.path() + "/hearth-models";
    options.roots.userFolders = {dir.path() + "/mine"};
    options.roots.ollamaSystemRoots = {};
    options.availableMemory = [] { return qint64{200'000'000}; };
    ModelCatalog catalog(options);
    ModelPicker picker(catalog, dir.path() + "/elsewhere/current.gguf");
    QTRY_VERIFY_WITH_TIMEOUT(picker.inspected(), 20000);
    picker.show();
    QVERIFY(QTest::qWaitForWindowExposed(&picker));
    auto* list = picker.findChild<QListWidget*>("modelList");
    auto* facts = picker.findChild<QLabel*>("modelFacts");

    QStringList allowed = {"LM Studio", "Ollama", "GPT4All", "Jan", "Hugging Face",
                           "llama.cpp", "Hearth", "GGUF",    "KV"};
    for (const CatalogEntry& e : catalog.entries()) {
        allowed << e.found.displayName << QDir::toNativeSeparators(e.found.path);
        if (e.info && *e.info)
            allowed << (*e.info)->name << (*e.info)->family << (*e.info)->architecture << (*e.info)->quantization
                    << (*e.info)->chatFormat;
    }
    allowed << "current.gguf" << "current";  // the opened file and its readable name
    std::sort(allowed.begin(), allowed.end(), [](const QString& a, const QString& b) { return a.size() > b.size(); });
    const QRegularExpression tags("<[^>]*>");
    const QRegularExpression paths(R"(/[^\s（）()，,<>]+)");  // a folder or file named in a note
    const QRegularExpression units(R"(\b\d+(\.\d+)?\s?(K|M|B|KB|MB|GB)\b)");
    const QRegularExpression english("[A-Za-z]{2,}");
    QStringList shown = {picker.windowTitle()};
    for (QLabel* l : picker.findChildren<QLabel*>()) shown << l->text();
    for (QPushButton* b : picker.findChildren<QPushButton*>()) shown << b->text();
    for (int i = 0; i < list->count(); ++i) {
        shown << list->item(i)->text();
        if (!(list->item(i)->flags() & Qt::ItemIsSelectable)) continue;
        list->setCurrentRow(i);
        shown << facts->text();
    }
    QStringList untranslated;
    for (const QString& text : shown) {
        QString rest = QString(text).replace(tags, " ");
        for (const QString& a : allowed)
            if (!a.isEmpty()) rest.replace(a, " ");
        rest.replace(paths, " ").replace(units, " ");
        for (auto it = english.globalMatch(rest); it.hasNext();) untranslated << it.next().captured() + " in: " + text;
    }
    QVERIFY2(untranslated.isEmpty(), qPrintable(untranslated.join('\n')));
    // It is the Chinese text that is shown (a sample of each kind).
    const QString all = shown.join('\n');
    for (const QString& zh : {QString("本机上的模型"), QString("添加文件夹…"), QString("你的文件夹"),
                              QString("已打开的文件"), QString("内存充足"), QString("内存紧张"), QString("内存不足"),
                              QString("已跳过"), QString("但它不存在"), QString("当前可用")})
        QVERIFY2(all.contains(zh), qPrintable(zh + " missing in:\n" + all));
    // LM Studio's chosen folder is listed under LM Studio.
    QVERIFY2(all.contains("someone/Long-GGUF/long-512k.gguf"), qPrintable(all));
    const QString out = qEnvironmentVariable("HEARTH_PICKER_SHOT_ZH");
    if (!out.isEmpty()) {
        for (int i = 0; i < list->count(); ++i)
            if (list->item(i)->text().startsWith("someone/Long-GGUF")) list->setCurrentRow(i);
        QTest::qWait(200);
        QVERIFY(picker.grab().save(out));
    }
    QCoreApplication::removeTranslator(&translator);
}

QTEST_MAIN(TestModelPicker)
#include "test_model_picker.moc"

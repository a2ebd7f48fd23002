// Model discovery (app/models/model_sources.h) over fake trees of every layout, written by the
// test under a temporary home (tests/support/fake_model_trees.h says where each layout comes
// from): what is listed, under which source and name (also through a linked folder, past a link
// loop), read in place (the paths are the files the test wrote; nothing is copied), split models
// once, and the notes for what was skipped. Then the catalog: every model inspected off the GUI
// thread, a rescan inspects only what changed, and the memory verdict against an injected amount
// of available memory.
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "app/models/model_catalog.h"
#include "app/models/model_sources.h"
#include "tests/support/fake_model_trees.h"
#include "tests/support/unreadable_dir.h"

using namespace hearth;

namespace {

QString listing(const ModelScan& scan, const QString& root) {
    QStringList lines;
    for (const FoundModel& m : scan.models) {
        QString line = modelSourceName(m.source) + " | " + m.displayName + " | " + QDir(root).relativeFilePath(m.path);
        if (m.parts.size() > 1) line += QStringLiteral(" | %1 parts").arg(m.parts.size());
        lines << line;
    }
    return lines.join('\n');
}

}  // namespace

class TestModelSources : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void listsEveryLayout();
    void readsInPlace();
    void notesWhatWasSkipped();
    void lmStudioChosenFolder();
    void lmStudioMovedHome();
    void catalogInspectsOffTheGuiThread();
    void rescanInspectsOnlyWhatChanged();
    void cleanupTestCase() { test::makeReadable((root_ + "/home/.cache/lm-studio/models/locked").toStdString()); }

private:
    ModelSourceRoots roots() const {
        ModelSourceRoots r;
        r.home = root_ + "/home";
        r.hearthModelsDir = root_ + "/hearth-models";
        r.userFolders = {root_ + "/mine"};
        r.ollamaSystemRoots = {root_ + "/usr/share/ollama/.ollama/models"};
        return r;
    }
    QTemporaryDir dir_;
    QString root_;
    QString ollamaBlob_;
};

void TestModelSources::initTestCase() {
    root_ = dir_.path();
    const QString home = root_ + "/home";
    QVERIFY(test::writeTiny(root_ + "/hearth-models/tiny.gguf"));
    QVERIFY(test::writeTinySplit(root_ + "/hearth-models/big", 3));
    QVERIFY(test::writeTiny(root_ + "/mine/deep/a/b/mine.gguf"));
    QFile notModel(root_ + "/mine/readme.txt");
    QVERIFY(notModel.open(QIODevice::WriteOnly));
    QVERIFY(test::writeTiny(home + "/.lmstudio/models/lmstudio-community/Tiny-GGUF/tiny-Q8_0.gguf", 2));
    QVERIFY(test::writeTiny(home + "/.cache/lm-studio/models/other/x/model.gguf", 3));
    // A folder of LM Studio's that is a link to another disk, and a link loop.
    QVERIFY(test::writeTiny(root_ + "/other-disk/pub/repo/linked.gguf"));
    QVERIFY(QFile::link(root_ + "/other-disk", home + "/.lmstudio/models/linked"));
    QVERIFY(QFile::link("..", home + "/.lmstudio/models/lmstudio-community/loop"));
    // Ollama: two tags of one blob, another host's model, a manifest whose blob is missing, a
    // blob that is not GGUF; and the system service's folder.
    const QString ollama = home + "/.ollama/models";
    QVERIFY(test::writeOllamaModel(ollama, "registry.ollama.ai/library/tinyllama/latest", test::tinyBytes(4)));
    QVERIFY(test::writeOllamaModel(ollama, "registry.ollama.ai/library/tinyllama/1.1b", test::tinyBytes(4)));
    QVERIFY(test::writeOllamaModel(ollama, "hf.co/org/Tiny-GGUF/Q8_0", test::tinyBytes(5)));
    QVERIFY(test::writeOllamaModel(ollama, "registry.ollama.ai/library/gone/latest", {}, QByteArray(64, 'a')));
    QVERIFY(test::writeOllamaModel(ollama, "registry.ollama.ai/me/notgguf/latest", "safetensors, not GGUF"));
    ollamaBlob_ = ollama + "/blobs/sha256-" + test::sha256Hex(test::tinyBytes(4));
    QVERIFY(test::writeOllamaModel(root_ + "/usr/share/ollama/.ollama/models", "registry.ollama.ai/library/phi3/mini",
                                   test::tinyBytes(6)));
    QVERIFY(test::writeTiny(home + "/.local/share/nomic.ai/GPT4All/gpt4all-tiny.gguf"));
    QVERIFY(test::writeTiny(home + "/.local/share/nomic.ai/GPT4All/sub/not-listed.gguf"));  // GPT4All is flat
    QVERIFY(test::writeTiny(home + "/.local/share/Jan/data/models/huggingface.co/org/repo/jan-tiny.gguf"));
    QVERIFY(test::writeTiny(home + "/jan/models/llama3/model.gguf"));
    const QString hub = home + "/.cache/huggingface/hub";
    QVERIFY(test::writeHfFile(hub, "org/Tiny-GGUF", "0123456789abcdef", "tiny-q8.gguf", test::tinyBytes(8)));
    QVERIFY(test::writeTinySplit(root_ + "/split/s", 2));
    for (int i = 1; i <= 2; ++i) {
        const QString name = QStringLiteral("Q4/s-%1-of-00002.gguf").arg(i, 5, 10, QChar('0'));
        QVERIFY(test::writeHfFile(hub, "org/Split-GGUF", "fedcba9876543210", name,
                                  test::readAll(root_ + "/split/" + QFileInfo(name).fileName())));
    }
    QVERIFY(test::writeTiny(home + "/.cache/llama.cpp/org_repo_tiny.gguf"));
    QVERIFY(test::writeTiny(home + "/.cache/llama.cpp/orphan-00002-of-00002.gguf"));
    QVERIFY2(test::makeUnreadable((home + "/.cache/lm-studio/models/locked").toStdString()),
             "cannot make a folder unreadable here");
}

void TestModelSources::listsEveryLayout() {
    const ModelScan scan = discoverModels(roots());
    QCOMPARE(listing(scan, root_),
             QStringLiteral(R"(Hearth | big-00001-of-00003.gguf | hearth-models/big-00001-of-00003.gguf | 3 parts
Hearth | tiny.gguf | hearth-models/tiny.gguf
Your folders | deep/a/b/mine.gguf | mine/deep/a/b/mine.gguf
LM Studio | linked/pub/repo/linked.gguf | home/.lmstudio/models/linked/pub/repo/linked.gguf
LM Studio | lmstudio-community/Tiny-GGUF/tiny-Q8_0.gguf | home/.lmstudio/models/lmstudio-community/Tiny-GGUF/tiny-Q8_0.gguf
LM Studio | other/x/model.gguf | home/.cache/lm-studio/models/other/x/model.gguf
Ollama | hf.co/org/Tiny-GGUF:Q8_0 | home/.ollama/models/blobs/sha256-%1
Ollama | phi3:mini | usr/share/ollama/.ollama/models/blobs/sha256-%2
Ollama | tinyllama:1.1b | home/.ollama/models/blobs/sha256-%3
Ollama | tinyllama:latest | home/.ollama/models/blobs/sha256-%3
GPT4All | gpt4all-tiny.gguf | home/.local/share/nomic.ai/GPT4All/gpt4all-tiny.gguf
Jan | huggingface.co/org/repo/jan-tiny.gguf | home/.local/share/Jan/data/models/huggingface.co/org/repo/jan-tiny.gguf
Jan | llama3/model.gguf | home/jan/models/llama3/model.gguf
Hugging Face | org/Split-GGUF · Q4/s-00001-of-00002.gguf | home/.cache/huggingface/hub/models--org--Split-GGUF/snapshots/fedcba9876543210/Q4/s-00001-of-00002.gguf | 2 parts
Hugging Face | org/Tiny-GGUF · tiny-q8.gguf | home/.cache/huggingface/hub/models--org--Tiny-GGUF/snapshots/0123456789abcdef/tiny-q8.gguf
llama.cpp | org_repo_tiny.gguf | home/.cache/llama.cpp/org_repo_tiny.gguf)")
                 .arg(QString(test::sha256Hex(test::tinyBytes(5))), QString(test::sha256Hex(test::tinyBytes(6))),
                      QString(test::sha256Hex(test::tinyBytes(4)))));
}

// The entries are the files themselves: a split model's parts in order, the Hugging Face link
// (not its blob), the Ollama blob; sizes and times are the files' own.
void TestModelSources::readsInPlace() {
    const ModelScan scan = discoverModels(roots());
    for (const FoundModel& m : scan.models) {
        QVERIFY2(m.path.startsWith(root_), qPrintable(m.path));
        QCOMPARE(m.parts.first(), m.path);
        qint64 bytes = 0;
        for (const QString& part : m.parts) bytes += QFileInfo(part).size();
        QCOMPARE(m.bytes, bytes);
        QVERIFY(m.bytes > 0 && m.modifiedMs > 0);
    }
    const auto hf = std::find_if(scan.models.begin(), scan.models.end(),
                                 [](const FoundModel& m) { return m.displayName.startsWith("org/Split-GGUF"); });
    QVERIFY(hf != scan.models.end());
    QVERIFY(QFileInfo(hf->parts[1]).isSymLink());
    QVERIFY(hf->parts[1].endsWith("snapshots/fedcba9876543210/Q4/s-00002-of-00002.gguf"));
    const auto ollama = std::find_if(scan.models.begin(), scan.models.end(),
                                     [](const FoundModel& m) { return m.displayName == "tinyllama:latest"; });
    QCOMPARE(ollama->path, ollamaBlob_);
    QCOMPARE(test::readAll(ollama->path), test::tinyBytes(4));
}

void TestModelSources::notesWhatWasSkipped() {
    const ModelScan scan = discoverModels(roots());
    QStringList notes;
    for (const ScanNote& n : scan.notes)
        notes << modelSourceName(n.source) + " | " + QDir(root_).relativeFilePath(n.folder) + " | " + n.problem;
    const QString all = notes.join('\n');
    QVERIFY2(all.contains("LM Studio | home/.cache/lm-studio/models/locked | cannot be read: Permission denied"),
             qPrintable(all));
    QVERIFY2(all.contains("Ollama | home/.ollama/models/manifests/registry.ollama.ai/library/gone/latest | names a "
                          "blob that is missing: " +
                          root_ + "/home/.ollama/models/blobs/sha256-" + QString(64, 'a')),
             qPrintable(all));
    QVERIFY2(all.contains("/blobs/sha256-" + test::sha256Hex("safetensors, not GGUF") + " | is not a GGUF file"),
             qPrintable(all));
    QVERIFY2(all.contains("llama.cpp | home/.cache/llama.cpp | orphan-00002-of-00002.gguf is part of a split model "
                          "whose first part, orphan-00001-of-00002.gguf, is missing"),
             qPrintable(all));
    QCOMPARE(notes.size(), 4);
    // The caches where their apps' variables put them (HF_HUB_CACHE, LLAMA_CACHE).
    ModelSourceRoots moved;
    moved.ollamaSystemRoots = {};
    moved.huggingFaceHub = root_ + "/home/.cache/huggingface/hub";
    moved.llamaCppCache = root_ + "/home/.cache/llama.cpp";
    QCOMPARE(discoverModels(moved).models.size(), 3);
    QCOMPARE(discoverModels(moved).models.last().source, ModelSource::LlamaCpp);
    // Folders that do not exist (no Ollama service here, say) are no problem and no note.
    ModelSourceRoots empty;
    empty.home = root_ + "/nobody";
    QVERIFY(discoverModels(empty).models.isEmpty() && discoverModels(empty).notes.isEmpty());
}

namespace {

bool writeText(const QString& path, const QByteArray& text) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
}

QByteArray lmStudioSettings(const QString& downloadsFolder) {
    return QJsonDocument(QJsonObject{{"downloadsFolder", downloadsFolder}, {"theme", "dark"}}).toJson();
}

}  // namespace

// LM Studio keeps the models folder a user chose as "downloadsFolder" in its settings.json
// (the key as quoted in lmstudio-ai/lmstudio-bug-tracker#1601 and v1ckxy/LMSPLS#2; the Electron
// settings folder as in Warpguru/LocalAI, LMStudio/ReadMe.md). Each settings file's folder is
// scanned besides the default ones, each folder once.
void TestModelSources::lmStudioChosenFolder() {
    QTemporaryDir dir;
    const QString home = dir.path() + "/home";
    QVERIFY(test::writeTiny(home + "/.lmstudio/models/p/r/default.gguf"));
    QVERIFY(test::writeTiny(dir.path() + "/big-disk/lms/pub/repo/custom.gguf", 2));
    QVERIFY(test::writeTiny(home + "/models-elsewhere/a/b/x.gguf", 3));
    QVERIFY(writeText(home + "/.lmstudio/settings.json", lmStudioSettings(dir.path() + "/big-disk/lms/")));
    QVERIFY(writeText(home + "/.config/LM Studio/settings.json", lmStudioSettings("~/models-elsewhere")));
    QVERIFY(writeText(home + "/.cache/lm-studio/settings.json", lmStudioSettings(home + "/.lmstudio/models")));
    ModelSourceRoots r;
    r.home = home;
    r.ollamaSystemRoots = {};
    const ModelScan scan = discoverModels(r);
    QCOMPARE(listing(scan, dir.path()), QStringLiteral(R"(LM Studio | a/b/x.gguf | home/models-elsewhere/a/b/x.gguf
LM Studio | p/r/default.gguf | home/.lmstudio/models/p/r/default.gguf
LM Studio | pub/repo/custom.gguf | big-disk/lms/pub/repo/custom.gguf)"));
    QVERIFY(scan.notes.isEmpty());
}

// LM Studio's home moved (~/.lmstudio-home-pointer names it): its models and its settings are
// read there. A chosen folder that is gone and a settings file that is not JSON are noted.
void TestModelSources::lmStudioMovedHome() {
    QTemporaryDir dir;
    const QString home = dir.path() + "/home";
    QVERIFY(writeText(home + "/.lmstudio-home-pointer", (dir.path() + "/lmhome\n").toUtf8()));
    QVERIFY(test::writeTiny(dir.path() + "/lmhome/models/q/r/moved.gguf"));
    QVERIFY(test::writeTiny(home + "/.lmstudio/models/p/r/old.gguf", 2));  // no longer LM Studio's home
    QVERIFY(writeText(dir.path() + "/lmhome/settings.json", lmStudioSettings(dir.path() + "/unplugged-disk/models")));
    QVERIFY(writeText(home + "/.config/LM Studio/settings.json", "{\"downloadsFolder\": "));
    ModelSourceRoots r;
    r.home = home;
    r.ollamaSystemRoots = {};
    const ModelScan scan = discoverModels(r);
    QCOMPARE(listing(scan, dir.path()), QStringLiteral("LM Studio | q/r/moved.gguf | lmhome/models/q/r/moved.gguf"));
    QStringList notes;
    for (const ScanNote& n : scan.notes)
        notes << modelSourceName(n.source) + " | " + QDir(dir.path()).relativeFilePath(n.folder) + " | " + n.problem;
    QCOMPARE(notes.join('\n'),
             QStringLiteral("LM Studio | unplugged-disk/models | is the models folder chosen in LM Studio (%1), but it "
                            "does not exist\nLM Studio | home/.config/LM Studio/settings.json | cannot be read as LM "
                            "Studio's settings (unterminated object)")
                 .arg(dir.path() + "/lmhome/settings.json"));
}

void TestModelSources::catalogInspectsOffTheGuiThread() {
    ModelCatalog::Options options;
    options.roots = roots();
    options.memory.contextLength = 128;
    options.availableMemory = [] { return qint64{1} << 30; };
    ModelCatalog catalog(options);
    QSignalSpy finished(&catalog, &ModelCatalog::scanFinished);
    catalog.rescan();
    QVERIFY(catalog.scanning());  // the GUI thread is not held up: the list arrives later
    QVERIFY(catalog.entries().isEmpty());
    QVERIFY(finished.wait(20000));
    QCOMPARE(catalog.entries().size(), 16);
    QCOMPARE(catalog.nInspections(), 16);
    for (const CatalogEntry& e : catalog.entries()) {
        QVERIFY(e.info && *e.info);
        const ModelFileInfo& info = **e.info;
        QVERIFY2(info.unsupported.isEmpty(), qPrintable(info.unsupported));
        QCOMPARE(info.source, modelSourceName(e.found.source));
        QCOMPARE(info.files, e.found.parts);
        QCOMPARE(info.fileBytes, e.found.bytes);
        QCOMPARE(info.memory.contextLength, 128);
        QCOMPARE(info.memory.availableBytes, qint64{1} << 30);
        QCOMPARE(info.memory.verdict, MemoryVerdict::Fits);
        QCOMPARE(info.memory.neededBytes,
                 static_cast<qint64>(static_cast<double>(info.weightBytes + info.memory.kvBytes) * 1.1));
    }
    // The memory available shrinks to less than one model needs: too big.
    const qint64 needed = (*catalog.entries().first().info)->memory.neededBytes;
    catalog.setMemoryOptions({.contextLength = 128, .kvType = KvElementType::F16, .availableBytes = needed - 1});
    QCOMPARE((*catalog.entries().first().info)->memory.verdict, MemoryVerdict::TooBig);
}

void TestModelSources::rescanInspectsOnlyWhatChanged() {
    ModelCatalog::Options options;
    options.roots = roots();
    ModelCatalog catalog(options);
    QSignalSpy finished(&catalog, &ModelCatalog::scanFinished);
    catalog.rescan();
    QVERIFY(finished.wait(20000));
    QCOMPARE(catalog.nInspections(), 16);
    catalog.rescan();
    QVERIFY(finished.wait(20000));
    QCOMPARE(catalog.nInspections(), 16);  // nothing changed: nothing inspected again
    QCOMPARE(catalog.entries().size(), 16);
    QVERIFY(catalog.entries().last().info && *catalog.entries().last().info);
    // One file rewritten (same size, another modification time) and one added: two inspections.
    const QString changed = root_ + "/home/jan/models/llama3/model.gguf";
    QFile f(changed);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.setFileTime(QDateTime::currentDateTime().addSecs(60), QFileDevice::FileModificationTime));
    f.close();
    QVERIFY(test::writeTiny(root_ + "/hearth-models/new.gguf", 9));
    catalog.rescan();
    QVERIFY(finished.wait(20000));
    QCOMPARE(catalog.nInspections(), 18);
    QCOMPARE(catalog.entries().size(), 17);
    QVERIFY(QFile::remove(root_ + "/hearth-models/new.gguf"));
}

QTEST_GUILESS_MAIN(TestModelSources)
#include "test_model_sources.moc"

// discoverModels (model_sources.h): each source's folders and the layout its app writes.
// Directories are listed with std::filesystem, whose errors say why a folder cannot be read
// (QDir lists an unreadable folder as an empty one).
#include "app/models/model_sources.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSettings>
#include <QtGlobal>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <system_error>

#include "app/common/paths.h"
#include "engine/model/gguf_split.h"

namespace hearth {

namespace {

namespace fs = std::filesystem;

constexpr int kMaxDepth = 6;  // folders below a source's root (LM Studio: publisher/repo/file)
constexpr qint64 kMaxManifestBytes = 1 << 20;

fs::path fsPath(const QString& path) { return fs::path(path.toStdString()); }
QString qPath(const fs::path& path) { return QString::fromStdString(path.string()); }

class Scanner {
public:
    Scanner(ModelScan& scan, ModelSource source) : scan_(scan), source_(source) {}

    void note(const QString& folder, const QString& problem) {
        scan_.notes.append({source_, QDir::toNativeSeparators(folder), problem});
    }

    // The entries of dir; nullopt when it does not exist (nothing to say) or cannot be read
    // (noted).
    std::optional<std::vector<fs::directory_entry>> list(const QString& dir) {
        std::error_code ec;
        const fs::file_status status = fs::status(fsPath(dir), ec);
        if (status.type() == fs::file_type::not_found) {
            if (fs::is_symlink(fs::symlink_status(fsPath(dir), ec))) note(dir, QObject::tr("is a broken link"));
            return std::nullopt;
        }
        if (ec) return note(dir, QString::fromStdString(ec.message())), std::nullopt;
        if (!fs::is_directory(status)) return note(dir, QObject::tr("is not a folder")), std::nullopt;
        std::vector<fs::directory_entry> entries;
        fs::directory_iterator it(fsPath(dir), ec);
        for (; !ec && it != fs::directory_iterator(); it.increment(ec)) entries.push_back(*it);
        if (ec)
            return note(dir, QObject::tr("cannot be read: %1").arg(QString::fromStdString(ec.message()))), std::nullopt;
        std::sort(entries.begin(), entries.end());
        return entries;
    }

    // Paths of the .gguf files in dir and, when recursive, in its folders - also folders reached
    // through links (LM Studio's models are often a link to another disk), each real folder
    // once, so that a link loop ends; a link to a file counts as the file (the Hugging Face cache).
    void collect(const QString& dir, bool recursive, QStringList& files, int depth = 0) {
        std::error_code ec;
        if (!visited_.insert(fs::canonical(fsPath(dir), ec).string()).second && !ec) return;
        const auto entries = list(dir);
        if (!entries) return;
        for (const fs::directory_entry& e : *entries) {
            const QString path = qPath(e.path());
            if (e.is_directory(ec)) {
                if (recursive && depth < kMaxDepth) collect(path, true, files, depth + 1);
            } else if (e.is_regular_file(ec) && path.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive)) {
                files.append(path);
            }
        }
    }

    // One entry per model: a split model's first part stands for all of them; a later part
    // whose first part is absent is noted, not listed.
    void addModels(const QStringList& files, const std::function<QString(const QString&)>& displayName) {
        for (const QString& file : files) {
            const auto split = parseGgufSplitName(file.toStdString());
            if (split && split->index != 1) {
                const QString first = QString::fromStdString(ggufSplitPath(split->prefix, 1, split->count));
                if (split->index == 2 && !files.contains(first))
                    note(QFileInfo(file).absolutePath(),
                         QObject::tr("%1 is part of a split model whose first part, %2, is missing")
                             .arg(QFileInfo(file).fileName(), QFileInfo(first).fileName()));
                continue;
            }
            FoundModel m;
            m.source = source_;
            m.path = file;
            m.displayName = displayName(file);
            for (const std::string& part : ggufModelFiles(file.toStdString()))
                m.parts.append(QString::fromStdString(part));
            fillStamp(m);
            scan_.models.append(m);
        }
    }

    static void fillStamp(FoundModel& m) {
        for (const QString& part : m.parts) {
            const QFileInfo info(part);  // follows links: the blob's size and time
            if (!info.exists()) continue;
            m.bytes += info.size();
            m.modifiedMs = std::max(m.modifiedMs, info.lastModified().toMSecsSinceEpoch());
        }
    }

    ModelScan& scan_;
    ModelSource source_;
    std::set<std::string> visited_;  // canonical folders already listed
};

// Plain folders of .gguf files (Hearth's, the user's, LM Studio's, GPT4All's, Jan's, llama.cpp's):
// each model is named by its path under the folder.
void scanFolder(ModelScan& scan, ModelSource source, const QString& root, bool recursive) {
    Scanner s(scan, source);
    QStringList files;
    s.collect(root, recursive, files);
    const QDir base(root);
    s.addModels(files, [&](const QString& f) { return base.relativeFilePath(f); });
}

// The Hugging Face hub cache: <hub>/models--<org>--<repo>/snapshots/<revision>/<file>, each file a
// link into the repository's blobs/. Opened by the link's path, so that a split model's parts are
// found by their names beside it.
void scanHuggingFace(ModelScan& scan, const QString& hub) {
    Scanner s(scan, ModelSource::HuggingFace);
    const auto repos = s.list(hub);
    if (!repos) return;
    for (const fs::directory_entry& repo : *repos) {
        const QString dirName = QString::fromStdString(repo.path().filename().string());
        if (!dirName.startsWith(QLatin1String("models--"))) continue;
        const QString repoName = dirName.mid(8).replace(QLatin1String("--"), QLatin1String("/"));
        const QString snapshots = qPath(repo.path() / "snapshots");
        const auto revisions = s.list(snapshots);
        if (!revisions) continue;
        for (const fs::directory_entry& revision : *revisions) {
            QStringList files;
            const QString revDir = qPath(revision.path());
            s.collect(revDir, true, files);
            const QString rev = revisions->size() > 1 ? "@" + QFileInfo(revDir).fileName().left(7) : QString();
            s.addModels(files, [&](const QString& f) {
                return QStringLiteral("%1%2 · %3").arg(repoName, rev, QDir(revDir).relativeFilePath(f));
            });
        }
    }
}

// "registry.ollama.ai/library/llama3.2/3b" -> "llama3.2:3b"; another namespace or host stays in
// the name, as `ollama list` shows it ("hf.co/org/repo:Q4_K_M").
QString ollamaName(const QString& manifestPath) {
    QString name = manifestPath;
    for (const char* prefix : {"registry.ollama.ai/library/", "registry.ollama.ai/"})
        if (name.startsWith(QLatin1String(prefix))) {
            name = name.mid(static_cast<qsizetype>(std::strlen(prefix)));
            break;
        }
    const qsizetype slash = name.lastIndexOf('/');
    return slash < 0 ? name : name.left(slash) + ':' + name.mid(slash + 1);
}

// The model layer's blob of one manifest (Ollama's manifest format: a JSON object whose "layers"
// each have a "mediaType" and a "digest"; the weights are the layer of media type
// application/vnd.ollama.image.model, stored as blobs/sha256-<hex> for digest sha256:<hex>).
// Empty, with a note, when the manifest names none or its blob is missing or not a GGUF file.
QString ollamaBlob(Scanner& s, const QString& manifest, const QString& blobs) {
    QFile f(manifest);
    if (!f.open(QIODevice::ReadOnly)) return s.note(manifest, QObject::tr("cannot be read")), QString();
    const QJsonDocument doc = QJsonDocument::fromJson(f.read(kMaxManifestBytes));
    if (!doc.isObject()) return s.note(manifest, QObject::tr("is not an Ollama manifest (JSON)")), QString();
    static const QRegularExpression digestForm(QStringLiteral("^sha256:([0-9a-f]{64})$"));
    for (const QJsonValue& layer : doc.object().value(QLatin1String("layers")).toArray()) {
        if (layer.toObject().value(QLatin1String("mediaType")).toString() != "application/vnd.ollama.image.model")
            continue;
        const auto digest = digestForm.match(layer.toObject().value(QLatin1String("digest")).toString());
        if (!digest.hasMatch()) return s.note(manifest, QObject::tr("names a malformed digest")), QString();
        const QString blob = blobs + "/sha256-" + digest.captured(1);
        QFile b(blob);
        if (!b.open(QIODevice::ReadOnly))
            return s.note(manifest, QObject::tr("names a blob that is missing: %1").arg(blob)), QString();
        if (b.read(4) != "GGUF") return s.note(blob, QObject::tr("is not a GGUF file")), QString();
        return blob;
    }
    return QString();  // no weights layer (an embedding-less manifest, a safetensors import): nothing to list
}

// <root>/manifests/<host>/<namespace>/<model>/<tag> naming blobs in <root>/blobs.
void scanOllama(ModelScan& scan, const QString& root) {
    Scanner s(scan, ModelSource::Ollama);
    const QString manifests = root + "/manifests";
    QStringList files;
    std::function<void(const QString&, int)> walk = [&](const QString& dir, int depth) {
        const auto entries = s.list(dir);
        if (!entries) return;
        for (const fs::directory_entry& e : *entries) {
            std::error_code ec;
            if (e.is_directory(ec) && !e.is_symlink(ec) && depth < kMaxDepth) walk(qPath(e.path()), depth + 1);
            else if (e.is_regular_file(ec)) files.append(qPath(e.path()));
        }
    };
    walk(manifests, 0);
    const QDir base(manifests);
    for (const QString& manifest : files) {
        const QString blob = ollamaBlob(s, manifest, root + "/blobs");
        if (blob.isEmpty()) continue;
        FoundModel m;
        m.source = ModelSource::Ollama;
        m.path = blob;
        m.displayName = ollamaName(base.relativeFilePath(manifest));
        m.parts = {blob};
        Scanner::fillStamp(m);
        scan.models.append(m);
    }
}

// LM Studio's models folders: its default ones, and the one the user chose instead ("Models
// Directory" in its settings, or the folder button of My Models), which LM Studio keeps as
// "downloadsFolder" in a settings.json (lmstudio-ai/lmstudio-bug-tracker#1601 and v1ckxy/LMSPLS#2
// show the key; Warpguru/LocalAI, LMStudio/ReadMe.md, shows it in the Electron settings folder
// and the ~/.lmstudio-home-pointer file that names LM Studio's home when that was moved). The
// settings files looked at: <LM Studio home>/settings.json, ~/.cache/lm-studio/settings.json
// (older releases' home) and ~/.config/LM Studio/settings.json (the Electron settings folder on
// Linux). Each folder once, however many settings name it.
QStringList lmStudioModelFolders(Scanner& s, const QString& home) {
    QString lmHome = home + "/.lmstudio";
    if (QFile pointer(home + "/.lmstudio-home-pointer"); pointer.open(QIODevice::ReadOnly)) {
        const QString named = QString::fromUtf8(pointer.read(4096)).trimmed();
        if (QDir::isAbsolutePath(named)) lmHome = QDir::cleanPath(named);
    }
    QStringList folders = {lmHome + "/models", home + "/.cache/lm-studio/models"};
    for (const QString& settings : {lmHome + "/settings.json", home + "/.cache/lm-studio/settings.json",
                                    home + "/.config/LM Studio/settings.json"}) {
        QFile f(settings);
        if (!f.open(QIODevice::ReadOnly)) continue;  // absent: LM Studio keeps its default
        QJsonParseError error{};
        const QJsonDocument doc = QJsonDocument::fromJson(f.read(kMaxManifestBytes), &error);
        if (!doc.isObject()) {
            s.note(settings, QObject::tr("cannot be read as LM Studio's settings (%1)").arg(error.errorString()));
            continue;
        }
        QString chosen = doc.object().value(QLatin1String("downloadsFolder")).toString().trimmed();
        if (chosen.isEmpty()) continue;
        if (chosen == QLatin1String("~") || chosen.startsWith(QLatin1String("~/"))) chosen = home + chosen.mid(1);
        chosen = QDir::cleanPath(QDir(home).absoluteFilePath(chosen));
        if (!QFileInfo::exists(chosen))
            s.note(chosen,
                   QObject::tr("is the models folder chosen in LM Studio (%1), but it does not exist")
                       .arg(QDir::toNativeSeparators(settings)));
        folders.append(chosen);
    }
    QStringList unique;
    std::set<QString> seen;
    for (const QString& folder : folders) {
        const QString canonical = QFileInfo(folder).canonicalFilePath();
        if (seen.insert(canonical.isEmpty() ? QDir::cleanPath(folder) : canonical).second) unique.append(folder);
    }
    return unique;
}

}  // namespace

QString modelSourceName(ModelSource source) {
    switch (source) {
    case ModelSource::Hearth: return QStringLiteral("Hearth");
    case ModelSource::UserFolder: return QObject::tr("Your folders");
    case ModelSource::LmStudio: return QStringLiteral("LM Studio");
    case ModelSource::Ollama: return QStringLiteral("Ollama");
    case ModelSource::Gpt4All: return QStringLiteral("GPT4All");
    case ModelSource::Jan: return QStringLiteral("Jan");
    case ModelSource::HuggingFace: return QStringLiteral("Hugging Face");
    case ModelSource::LlamaCpp: return QStringLiteral("llama.cpp");
    }
    return {};
}

QStringList userModelFolders() { return QSettings("Hearth", "Hearth").value("models/folders").toStringList(); }

void setUserModelFolders(const QStringList& folders) {
    QSettings("Hearth", "Hearth").setValue("models/folders", folders);
}

ModelSourceRoots defaultModelSourceRoots() {
    ModelSourceRoots roots;
    roots.home = QDir::homePath();
    roots.hearthModelsDir = modelsDir();
    roots.userFolders = userModelFolders();
    if (const QString ollama = qEnvironmentVariable("OLLAMA_MODELS"); !ollama.isEmpty())
        roots.ollamaSystemRoots << ollama;
    roots.huggingFaceHub = qEnvironmentVariable("HF_HUB_CACHE");
    if (const QString hfHome = qEnvironmentVariable("HF_HOME"); roots.huggingFaceHub.isEmpty() && !hfHome.isEmpty())
        roots.huggingFaceHub = hfHome + "/hub";
    roots.llamaCppCache = qEnvironmentVariable("LLAMA_CACHE");
    return roots;
}

// The one list of places: the first-start page shows it, discoverModels() scans it.
static QList<ModelFolder> searchFolders(const ModelSourceRoots& roots, ModelScan& scan) {
    QList<ModelFolder> out;
    const QString home = roots.home;
    using K = ModelFolder::Kind;
    if (!roots.hearthModelsDir.isEmpty()) out.append({ModelSource::Hearth, roots.hearthModelsDir, K::Files});
    for (const QString& folder : roots.userFolders) out.append({ModelSource::UserFolder, folder, K::FilesRecursive});
    if (!home.isEmpty()) {
        Scanner settings(scan, ModelSource::LmStudio);
        for (const QString& folder : lmStudioModelFolders(settings, home))
            out.append({ModelSource::LmStudio, folder, K::FilesRecursive});
        out.append({ModelSource::Ollama, home + "/.ollama/models", K::Ollama});
    }
    for (const QString& root : roots.ollamaSystemRoots) out.append({ModelSource::Ollama, root, K::Ollama});
    if (!home.isEmpty()) {
        out.append({ModelSource::Gpt4All, home + "/.local/share/nomic.ai/GPT4All", K::Files});
        for (const char* dir : {"/.local/share/Jan/data/models", "/jan/models"})
            out.append({ModelSource::Jan, home + dir, K::FilesRecursive});
    }
    const QString hub = !roots.huggingFaceHub.isEmpty() ? roots.huggingFaceHub
        : home.isEmpty()                                ? QString()
                                                        : home + "/.cache/huggingface/hub";
    if (!hub.isEmpty()) out.append({ModelSource::HuggingFace, hub, K::HuggingFaceHub});
    const QString llamaCpp = !roots.llamaCppCache.isEmpty() ? roots.llamaCppCache
        : home.isEmpty()                                    ? QString()
                                                            : home + "/.cache/llama.cpp";
    if (!llamaCpp.isEmpty()) out.append({ModelSource::LlamaCpp, llamaCpp, K::Files});
    return out;
}

QList<ModelFolder> modelSearchFolders(const ModelSourceRoots& roots) {
    ModelScan ignored;
    return searchFolders(roots, ignored);
}

ModelScan discoverModels(const ModelSourceRoots& roots) {
    ModelScan scan;
    for (const ModelFolder& f : searchFolders(roots, scan)) {
        switch (f.kind) {
        case ModelFolder::Kind::Files: scanFolder(scan, f.source, f.path, false); break;
        case ModelFolder::Kind::FilesRecursive: scanFolder(scan, f.source, f.path, true); break;
        case ModelFolder::Kind::Ollama: scanOllama(scan, f.path); break;
        case ModelFolder::Kind::HuggingFaceHub: scanHuggingFace(scan, f.path); break;
        }
    }
    std::stable_sort(scan.models.begin(), scan.models.end(), [](const FoundModel& a, const FoundModel& b) {
        if (a.source != b.source) return a.source < b.source;
        return a.displayName.compare(b.displayName, Qt::CaseInsensitive) < 0;
    });
    return scan;
}

}  // namespace hearth

// Finds the GGUF models already on the machine, in place (never copied): Hearth's own folder, the
// folders the user added, and the folders of other apps - LM Studio (its default folders and the
// one chosen in its settings, "downloadsFolder" in its settings.json), Ollama (manifests naming
// blobs), GPT4All, Jan, the Hugging Face hub cache (symbolic links into its blobs) and llama.cpp's
// cache. A split model (gguf_split.h) is one entry, its first part. Reads directories and small
// manifests only, no model file: discoverModels() may run on any thread (ModelCatalog runs it on
// the thread pool). A folder that exists but cannot be read is skipped with a note.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace hearth {

enum class ModelSource { Hearth, UserFolder, LmStudio, Ollama, Gpt4All, Jan, HuggingFace, LlamaCpp };
// "Hearth", "Your folders", "LM Studio", "Ollama", "GPT4All", "Jan", "Hugging Face", "llama.cpp"
QString modelSourceName(ModelSource source);

// Where to look. Tests build fake trees under a temporary home.
struct ModelSourceRoots {
    QString home;  // the other apps' folders are looked for under it (~/.lmstudio/models, ...)
    QString hearthModelsDir;  // Hearth's own folder (paths.h modelsDir()); empty: none
    QStringList userFolders;  // searched recursively
    // Ollama's system service keeps its models outside any home (and OLLAMA_MODELS moves them).
    QStringList ollamaSystemRoots = {QStringLiteral("/usr/share/ollama/.ollama/models")};
    QString huggingFaceHub;  // empty: <home>/.cache/huggingface/hub
    QString llamaCppCache;  // empty: <home>/.cache/llama.cpp
};
// The user's home, Hearth's models folder and the folders kept in settings (userModelFolders());
// the other apps' own variables where set: OLLAMA_MODELS, HF_HUB_CACHE (else HF_HOME/hub),
// LLAMA_CACHE.
ModelSourceRoots defaultModelSourceRoots();
// QSettings("Hearth", "Hearth") "models/folders".
QStringList userModelFolders();
void setUserModelFolders(const QStringList& folders);

struct FoundModel {
    ModelSource source = ModelSource::Hearth;
    QString path;  // the file to open: the GGUF, a split model's first part, an Ollama blob
    // What the user knows it by: the Ollama name:tag, "org/repo · file.gguf" in the Hugging Face
    // cache, else the path under its source's folder.
    QString displayName;
    QStringList parts;  // every file of the model (one, or each part of a split model), in order
    qint64 bytes = 0;  // of the parts found
    qint64 modifiedMs = 0;  // the latest modification time of the parts (ms since the epoch)
};

struct ScanNote {
    ModelSource source = ModelSource::Hearth;
    QString folder;
    QString problem;  // "cannot be read", "manifest ... names a blob that is missing", ...
};

struct ModelScan {
    QList<FoundModel> models;  // grouped by source, in ModelSource order, then by display name
    QList<ScanNote> notes;
};

// Where discoverModels() looks, in its order: each source's folders (those named in other apps'
// settings included), whether they exist or not. The first-start page lists them.
struct ModelFolder {
    enum class Kind { Files, FilesRecursive, Ollama, HuggingFaceHub };
    ModelSource source = ModelSource::Hearth;
    QString path;
    Kind kind = Kind::Files;
};
QList<ModelFolder> modelSearchFolders(const ModelSourceRoots& roots);

ModelScan discoverModels(const ModelSourceRoots& roots);

}  // namespace hearth

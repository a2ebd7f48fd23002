// The model picker. Over a ModelCatalog: the models found on the machine (Hearth's folder, the
// user's folders, LM Studio, Ollama, GPT4All, Jan, the Hugging Face cache, llama.cpp's cache),
// grouped under a heading per source, each line with its family, parameter count,
// quantization, size and memory verdict; folders that were skipped are listed beneath; "Add
// folder…" adds one. Over one folder (the first constructor): that folder's GGUF files, one line
// each with family, parameter count and quantization. Both: "Open file…", and the chosen one's
// facts (trained context, size, files, chat format, where it was found, the memory it needs at
// the chosen context against what is available) and whether Hearth runs it, and when not, why
// (the check loading makes). A file that is not a valid model or that Hearth cannot run cannot
// be loaded.
#pragma once

#include <QDialog>
#include <QHash>
#include <QPointer>
#include <QStringList>

#include "app/common/model_info.h"

class QLabel;
class QListWidget;
class QListWidgetItem;
class QPushButton;

namespace hearth {

class ModelCatalog;

class ModelPicker : public QDialog {
    Q_OBJECT
public:
    // The GGUF files of one folder, inspected for the model's trained context and the memory
    // available now.
    ModelPicker(const QString& modelsDir, const QString& currentPath, QWidget* parent = nullptr);
    // The catalog's models (a rescan starts: unchanged files keep their facts); the catalog's
    // memory options are the chosen context and KV type. The catalog must outlive the picker.
    ModelPicker(ModelCatalog& catalog, const QString& currentPath, QWidget* parent = nullptr);

    QString selectedPath() const { return selected_; }
    // Whether every listed file's facts have arrived (tests wait for it).
    bool inspected() const;
    void selectFile(const QString& path);  // adds it to the list when absent and shows its facts

private:
    void build(const QString& heading, const QString& browseDir);
    QListWidgetItem* addFile(const QString& path);  // a line for it, and inspect(path)
    void inspect(const QString& path);  // on the thread pool, then setInspected
    void setInspected(const QString& path, const Result<ModelFileInfo>& info);
    void showCatalog();  // the catalog's list, grouped by source, then the files opened here
    void updateLine(QListWidgetItem* item);
    const Result<ModelFileInfo>* factsOf(const QString& path) const;
    void showFacts(const QString& path);

    QPointer<ModelCatalog> catalog_;
    QHash<QString, Result<ModelFileInfo>> inspected_;  // files opened here (and the folder's), by absolute path
    QStringList opened_;  // files opened with "Open file…" or selectFile that the catalog does not list
    MemoryOptions memory_;  // the folder picker's (over a catalog, the catalog's)
    QListWidget* list_ = nullptr;
    QLabel* facts_ = nullptr;
    QLabel* notes_ = nullptr;
    QPushButton* load_ = nullptr;
    QString selected_;
    bool placeCurrent_ = false;  // the current model goes under "Opened files" when no source lists it
};

}  // namespace hearth

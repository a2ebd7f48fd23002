// The model picker: the GGUF files in the models folder plus "Open file…". Each line shows the
// file's family, parameter count and quantization; the chosen one's facts (trained context, size,
// chat format) and whether Hearth runs it, and when not, why (the check loading makes). A file
// that is not a valid model or that Hearth cannot run cannot be loaded.
#pragma once

#include <QDialog>
#include <QHash>

#include "app/common/model_info.h"

class QLabel;
class QListWidget;
class QListWidgetItem;
class QPushButton;

namespace hearth {

class ModelPicker : public QDialog {
    Q_OBJECT
public:
    ModelPicker(const QString& modelsDir, const QString& currentPath, QWidget* parent = nullptr);

    QString selectedPath() const { return selected_; }
    // Whether every listed file's facts have arrived (tests wait for it).
    bool inspected() const;
    void selectFile(const QString& path);  // adds it to the list when absent and shows its facts

private:
    QListWidgetItem* addFile(const QString& path);  // starts its inspection on the thread pool
    void setInspected(const QString& path, const Result<ModelFileInfo>& info);
    void showFacts(const QString& path);

    QHash<QString, Result<ModelFileInfo>> inspected_;  // by absolute path
    QListWidget* list_;
    QLabel* facts_;
    QPushButton* load_;
    QString selected_;
};

}  // namespace hearth

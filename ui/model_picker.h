// The model picker: the GGUF files in the models folder plus "Open file…", with each file's
// architecture, size, quantization, context length and chat format read from its metadata.
// A file that is not a valid model shows why, and cannot be loaded.
#pragma once

#include <QDialog>

class QLabel;
class QListWidget;
class QPushButton;

namespace hearth {

class ModelPicker : public QDialog {
    Q_OBJECT
public:
    ModelPicker(const QString& modelsDir, const QString& currentPath, QWidget* parent = nullptr);

    QString selectedPath() const { return selected_; }
    void selectFile(const QString& path);  // adds it to the list when absent and shows its facts

private:
    void showFacts(const QString& path);

    QListWidget* list_;
    QLabel* facts_;
    QPushButton* load_;
    QString selected_;
};

}  // namespace hearth

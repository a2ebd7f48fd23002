// Metadata is read with inspectModel (a validated, memory-mapped GGUF parse: milliseconds).
#include "ui/model_picker.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include "app/common/model_info.h"
#include "app/common/error_text.h"

namespace hearth {

ModelPicker::ModelPicker(const QString& modelsDir, const QString& currentPath, QWidget* parent)
    : QDialog(parent), list_(new QListWidget), facts_(new QLabel), load_(new QPushButton(tr("Load"))) {
    setObjectName("modelPicker");
    setWindowTitle(tr("Choose a model — Hearth"));
    list_->setObjectName("modelList");
    facts_->setObjectName("modelFacts");
    load_->setObjectName("loadButton");
    facts_->setWordWrap(true);
    facts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    facts_->setMinimumHeight(facts_->fontMetrics().lineSpacing() * 7);
    facts_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    for (const QFileInfo& f : QDir(modelsDir).entryInfoList({"*.gguf"}, QDir::Files, QDir::Name)) {
        auto* item = new QListWidgetItem(f.fileName(), list_);
        item->setData(Qt::UserRole, f.absoluteFilePath());
    }
    auto* open = new QPushButton(tr("Open file…"));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    buttons->addButton(open, QDialogButtonBox::ActionRole);
    buttons->addButton(load_, QDialogButtonBox::AcceptRole);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Models in %1").arg(QDir::toNativeSeparators(modelsDir))));
    layout->addWidget(list_, 1);
    layout->addWidget(facts_);
    layout->addWidget(buttons);
    connect(list_, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
        if (item) showFacts(item->data(Qt::UserRole).toString());
    });
    connect(list_, &QListWidget::itemDoubleClicked, this, [this] { if (load_->isEnabled()) accept(); });
    connect(open, &QPushButton::clicked, this, [this, modelsDir] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open a GGUF model"), modelsDir, tr("GGUF models (*.gguf);;All files (*)"));
        if (!path.isEmpty()) selectFile(path);
    });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    load_->setEnabled(false);
    facts_->setText(tr("Choose a model file."));
    if (!currentPath.isEmpty()) selectFile(currentPath);
    resize(560, 460);
}

void ModelPicker::selectFile(const QString& path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    for (int i = 0; i < list_->count(); ++i)
        if (list_->item(i)->data(Qt::UserRole).toString() == abs) return list_->setCurrentRow(i);
    auto* item = new QListWidgetItem(QFileInfo(abs).fileName(), list_);
    item->setData(Qt::UserRole, abs);
    list_->setCurrentItem(item);
}

void ModelPicker::showFacts(const QString& path) {
    selected_ = path;
    auto info = inspectModel(path);
    load_->setEnabled(info.has_value());
    if (!info) {
        facts_->setText(tr("This file cannot be used: %1").arg(describe(info.error()).toHtmlEscaped()));
        return;
    }
    facts_->setText(tr("<b>%1</b><br>Architecture: %2<br>Size: %3<br>Quantization: %4<br>Context length: %5 tokens<br>"
                       "Chat format: %6")
                        .arg(info->name.toHtmlEscaped(), info->architecture.toHtmlEscaped(), formatBytes(info->fileBytes),
                             info->quantization, QString::number(info->contextLength), info->chatFormat));
}

}  // namespace hearth

// Every listed file is inspected when it is listed (inspectModel: a validated, memory-mapped GGUF
// parse and loading's checks, which read no weights), so that each line says what the file is and
// whether Hearth runs it before one is chosen. The checks build the vocabulary, which takes from
// ~20 ms (SmolLM2, 49k pieces) to ~200 ms (Gemma 3, 262k SentencePiece pieces): they run on the
// thread pool, and each line is filled in as its result arrives.
#include "ui/model_picker.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QPointer>
#include <QThreadPool>
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
    facts_->setMinimumHeight(facts_->fontMetrics().lineSpacing() * 9);
    facts_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    for (const QFileInfo& f : QDir(modelsDir).entryInfoList({"*.gguf"}, QDir::Files, QDir::Name))
        addFile(f.absoluteFilePath());
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
    connect(list_, &QListWidget::itemDoubleClicked, this, [this] {
        if (load_->isEnabled()) accept();
    });
    connect(open, &QPushButton::clicked, this, [this, modelsDir] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open a GGUF model"), modelsDir,
                                                          tr("GGUF models (*.gguf);;All files (*)"));
        if (!path.isEmpty()) selectFile(path);
    });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    load_->setEnabled(false);
    facts_->setText(tr("Choose a model file."));
    if (!currentPath.isEmpty()) selectFile(currentPath);
    resize(560, 460);
}

bool ModelPicker::inspected() const { return inspected_.size() == list_->count(); }

QListWidgetItem* ModelPicker::addFile(const QString& path) {
    auto* item = new QListWidgetItem(tr("%1 — checking…").arg(QFileInfo(path).fileName()), list_);
    item->setData(Qt::UserRole, path);
    QThreadPool::globalInstance()->start([path, picker = QPointer<ModelPicker>(this)] {
        Result<ModelFileInfo> info = inspectModel(path);
        // Delivered on the GUI thread, where the guard tells whether the picker still exists.
        QMetaObject::invokeMethod(QCoreApplication::instance(), [picker, path, info = std::move(info)] {
            if (picker) picker->setInspected(path, info);
        });
    });
    return item;
}

// The file's line: its name, then family · parameters · quantization, or that it cannot be used.
void ModelPicker::setInspected(const QString& path, const Result<ModelFileInfo>& info) {
    inspected_.insert(path, info);
    for (int i = 0; i < list_->count(); ++i) {
        QListWidgetItem* item = list_->item(i);
        if (item->data(Qt::UserRole).toString() != path) continue;
        QString summary;
        if (!info) summary = tr("not a usable GGUF file");
        else if (!info->unsupported.isEmpty()) summary = tr("%1 · not supported").arg(info->family);
        else
            summary = QStringLiteral("%1 · %2 · %3").arg(info->family, formatParams(info->nParams), info->quantization);
        item->setText(QStringLiteral("%1 — %2").arg(QFileInfo(path).fileName(), summary));
        if (!info || !info->unsupported.isEmpty())
            item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
    }
    if (path == selected_) showFacts(path);
}

void ModelPicker::selectFile(const QString& path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    for (int i = 0; i < list_->count(); ++i)
        if (list_->item(i)->data(Qt::UserRole).toString() == abs) return list_->setCurrentRow(i);
    list_->setCurrentItem(addFile(abs));
}

void ModelPicker::showFacts(const QString& path) {
    selected_ = path;
    load_->setEnabled(false);
    if (!inspected_.contains(path)) {
        facts_->setText(tr("Checking %1…").arg(QFileInfo(path).fileName().toHtmlEscaped()));
        return;
    }
    const Result<ModelFileInfo> inspected = inspected_.value(path);
    load_->setEnabled(inspected && inspected->unsupported.isEmpty());
    if (!inspected) {
        facts_->setText(tr("This file cannot be used: %1").arg(describe(inspected.error()).toHtmlEscaped()));
        return;
    }
    const ModelFileInfo& info = *inspected;
    const QString verdict = info.unsupported.isEmpty()
        ? tr("Hearth runs this model.")
        : tr("<b>Hearth cannot run this model</b> (%1).").arg(info.unsupported.toHtmlEscaped());
    const QString context =
        info.contextLength > 0 ? tr("%1 tokens").arg(QLocale().toString(info.contextLength)) : tr("unknown");
    facts_->setText(tr("<b>%1</b><br>Family: %2 (%3)<br>Parameters: %4<br>Quantization: %5<br>"
                       "Trained context: %6<br>Size: %7<br>Chat format: %8<br>%9")
                        .arg(info.name.toHtmlEscaped(), info.family.toHtmlEscaped(), info.architecture.toHtmlEscaped(),
                             formatParams(info.nParams), info.quantization.toHtmlEscaped(), context,
                             formatBytes(info.fileBytes), info.chatFormat, verdict));
}

}  // namespace hearth

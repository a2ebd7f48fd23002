// Every listed file is inspected when it is listed (inspectModel: a validated, memory-mapped GGUF
// parse and loading's checks, which read no weights), so that each line says what the file is and
// whether Hearth runs it before one is chosen. The checks build the vocabulary, which takes from
// ~20 ms (SmolLM2, 49k pieces) to ~200 ms (Gemma 3, 262k SentencePiece pieces): they run on the
// thread pool (the catalog's, or the picker's own for files it lists), and each line is filled in
// as its result arrives. Lines carry the file's path in Qt::UserRole; source headings carry none
// and cannot be selected.
#include "ui/model_picker.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QPushButton>
#include <QThreadPool>
#include <QVBoxLayout>
#include <utility>

#include "app/common/error_text.h"
#include "app/common/model_info.h"
#include "app/models/model_catalog.h"

namespace hearth {

ModelPicker::ModelPicker(const QString& modelsDir, const QString& currentPath, QWidget* parent) : QDialog(parent) {
    memory_.availableBytes = availableMemoryBytes();
    build(tr("Models in %1").arg(QDir::toNativeSeparators(modelsDir)), modelsDir);
    for (const QFileInfo& f : QDir(modelsDir).entryInfoList({"*.gguf"}, QDir::Files, QDir::Name))
        addFile(f.absoluteFilePath());
    if (!currentPath.isEmpty()) selectFile(currentPath);
}

ModelPicker::ModelPicker(ModelCatalog& catalog, const QString& currentPath, QWidget* parent)
    : QDialog(parent), catalog_(&catalog) {
    build(tr("Models on this computer"), catalog.roots().hearthModelsDir);
    auto* addFolder = new QPushButton(tr("Add folder…"));
    addFolder->setObjectName("addFolderButton");
    if (auto* buttons = findChild<QDialogButtonBox*>()) buttons->addButton(addFolder, QDialogButtonBox::ActionRole);
    connect(addFolder, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Add a folder of models"), QDir::homePath());
        if (!dir.isEmpty() && catalog_) catalog_->addUserFolder(dir);
    });
    connect(&catalog, &ModelCatalog::listed, this, [this] {
        showCatalog();
        if (!std::exchange(placeCurrent_, false) || selected_.isEmpty()) return;
        for (int i = 0; i < list_->count(); ++i)
            if (list_->item(i)->data(Qt::UserRole).toString() == selected_) return;
        selectFile(selected_);
    });
    connect(&catalog, &ModelCatalog::inspected, this, [this](const QString& path) {
        for (int i = 0; i < list_->count(); ++i)
            if (list_->item(i)->data(Qt::UserRole).toString() == path) updateLine(list_->item(i));
        if (path == selected_) showFacts(path);
    });
    if (!currentPath.isEmpty()) selected_ = QFileInfo(currentPath).absoluteFilePath();
    placeCurrent_ = !selected_.isEmpty();
    showCatalog();  // the last scan's list at once, while the new scan runs
    catalog.rescan();
}

void ModelPicker::build(const QString& heading, const QString& browseDir) {
    list_ = new QListWidget;
    facts_ = new QLabel;
    notes_ = new QLabel;
    load_ = new QPushButton(tr("Load"));
    setObjectName("modelPicker");
    setWindowTitle(tr("Choose a model — Hearth"));
    list_->setObjectName("modelList");
    facts_->setObjectName("modelFacts");
    notes_->setObjectName("scanNotes");
    load_->setObjectName("loadButton");
    facts_->setWordWrap(true);
    facts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    facts_->setMinimumHeight(facts_->fontMetrics().lineSpacing() * 11);
    facts_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    notes_->setWordWrap(true);
    notes_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    notes_->hide();
    auto* open = new QPushButton(tr("Open file…"));
    // Its own Cancel (not QDialogButtonBox::Cancel), so that it is in Hearth's catalogue: Qt's
    // own translations are not shipped.
    auto* buttons = new QDialogButtonBox;
    buttons->addButton(tr("Cancel"), QDialogButtonBox::RejectRole);
    buttons->addButton(open, QDialogButtonBox::ActionRole);
    buttons->addButton(load_, QDialogButtonBox::AcceptRole);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(heading));
    layout->addWidget(list_, 1);
    layout->addWidget(notes_);
    layout->addWidget(facts_);
    layout->addWidget(buttons);
    connect(list_, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
        if (item && !item->data(Qt::UserRole).toString().isEmpty()) showFacts(item->data(Qt::UserRole).toString());
    });
    connect(list_, &QListWidget::itemDoubleClicked, this, [this] {
        if (load_->isEnabled()) accept();
    });
    connect(open, &QPushButton::clicked, this, [this, browseDir] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open a GGUF model"), browseDir,
                                                          tr("GGUF models (*.gguf);;All files (*)"));
        if (!path.isEmpty()) selectFile(path);
    });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    load_->setEnabled(false);
    facts_->setText(tr("Choose a model file."));
    resize(catalog_ ? 940 : 560, catalog_ ? 620 : 460);
}

bool ModelPicker::inspected() const {
    for (const QString& path : opened_)
        if (!inspected_.contains(path)) return false;
    return catalog_ ? !catalog_->scanning() : inspected_.size() == list_->count();
}

const Result<ModelFileInfo>* ModelPicker::factsOf(const QString& path) const {
    if (catalog_)
        if (const CatalogEntry* e = catalog_->entry(path); e && e->info) return &*e->info;
    const auto it = inspected_.constFind(path);
    return it == inspected_.constEnd() ? nullptr : &*it;
}

void ModelPicker::showCatalog() {
    const QSignalBlocker blocker(list_);
    list_->clear();
    QListWidgetItem* current = nullptr;
    const auto heading = [this](const QString& text) {
        auto* item = new QListWidgetItem(text, list_);
        item->setFlags(Qt::NoItemFlags);
        QFont bold = item->font();
        bold.setBold(true);
        item->setFont(bold);
        item->setForeground(palette().color(QPalette::Active, QPalette::Text));
    };
    const auto line = [&](const QString& path, const QString& name) {
        auto* item = new QListWidgetItem(list_);
        item->setData(Qt::UserRole, path);
        item->setData(Qt::UserRole + 1, name);
        item->setToolTip(QDir::toNativeSeparators(path));
        updateLine(item);
        if (path == selected_) current = item;
    };
    std::optional<ModelSource> source;
    for (const CatalogEntry& e : catalog_->entries()) {
        if (source != e.found.source) heading(modelSourceName(*(source = e.found.source)));
        line(e.found.path, e.found.displayName);
    }
    if (!opened_.isEmpty()) heading(tr("Opened files"));
    for (const QString& path : opened_) line(path, QFileInfo(path).fileName());
    if (catalog_->entries().isEmpty() && opened_.isEmpty() && !catalog_->scanning())
        heading(tr("No GGUF models found. Use Open file… or Add folder…"));
    QStringList skipped;
    for (const ScanNote& n : catalog_->notes())
        skipped << tr("%1: %2 %3").arg(modelSourceName(n.source), n.folder.toHtmlEscaped(), n.problem.toHtmlEscaped());
    notes_->setText(tr("<b>Skipped</b><br>%1").arg(skipped.join("<br>")));
    notes_->setVisible(!skipped.isEmpty());
    if (current) list_->setCurrentItem(current);
    if (current) showFacts(selected_);
}

QListWidgetItem* ModelPicker::addFile(const QString& path) {
    auto* item = new QListWidgetItem(list_);
    item->setData(Qt::UserRole, path);
    item->setData(Qt::UserRole + 1, QFileInfo(path).fileName());
    updateLine(item);
    inspect(path);
    return item;
}

void ModelPicker::inspect(const QString& path) {
    const MemoryOptions memory = catalog_ ? catalog_->memoryOptions() : memory_;
    QThreadPool::globalInstance()->start([path, memory, picker = QPointer<ModelPicker>(this)] {
        Result<ModelFileInfo> info = inspectModel(path, memory);
        // Delivered on the GUI thread, where the guard tells whether the picker still exists.
        QMetaObject::invokeMethod(QCoreApplication::instance(), [picker, path, info = std::move(info)] {
            if (picker) picker->setInspected(path, info);
        });
    });
}

// The file's line: its name, then family · parameters · quantization (over the catalog also size
// and memory verdict), or that it cannot be used.
void ModelPicker::updateLine(QListWidgetItem* item) {
    const QString path = item->data(Qt::UserRole).toString();
    const QString name = item->data(Qt::UserRole + 1).toString();
    const Result<ModelFileInfo>* info = factsOf(path);
    if (!info) return item->setText(tr("%1 — checking…").arg(name));
    QString summary;
    if (!*info) summary = tr("not a usable GGUF file");
    else if (!(*info)->unsupported.isEmpty()) summary = tr("%1 · not supported").arg((*info)->family);
    else
        summary =
            QStringLiteral("%1 · %2 · %3").arg((*info)->family, formatParams((*info)->nParams), (*info)->quantization);
    if (*info && (*info)->unsupported.isEmpty() && !(*info)->chatTuned)
        summary += QStringLiteral(" · ") + tr("base model");
    if (catalog_ && *info && (*info)->unsupported.isEmpty()) {
        summary += QStringLiteral(" · %1").arg(formatBytes((*info)->fileBytes));
        if ((*info)->memory.verdict != MemoryVerdict::Unknown)
            summary += QStringLiteral(" · %1").arg(memoryVerdictText((*info)->memory.verdict));
        if (const QString gpu = gpuPlacementText((*info)->memory.gpu); !gpu.isEmpty())
            summary += QStringLiteral(" · %1").arg(gpu);
    }
    item->setText(QStringLiteral("%1 — %2").arg(name, summary));
    if (!*info || !(*info)->unsupported.isEmpty())
        item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
}

void ModelPicker::setInspected(const QString& path, const Result<ModelFileInfo>& info) {
    inspected_.insert(path, info);
    for (int i = 0; i < list_->count(); ++i)
        if (list_->item(i)->data(Qt::UserRole).toString() == path) updateLine(list_->item(i));
    if (path == selected_) showFacts(path);
}

void ModelPicker::selectFile(const QString& path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    for (int i = 0; i < list_->count(); ++i)
        if (list_->item(i)->data(Qt::UserRole).toString() == abs) return list_->setCurrentRow(i);
    if (!catalog_) return list_->setCurrentItem(addFile(abs));
    opened_.append(abs);
    selected_ = abs;
    inspect(abs);
    showCatalog();
}

void ModelPicker::showFacts(const QString& path) {
    selected_ = path;
    load_->setEnabled(false);
    const Result<ModelFileInfo>* inspected = factsOf(path);
    if (!inspected) {
        facts_->setText(tr("Checking %1…").arg(QFileInfo(path).fileName().toHtmlEscaped()));
        return;
    }
    load_->setEnabled(*inspected && (*inspected)->unsupported.isEmpty());
    if (!*inspected) {
        facts_->setText(tr("This file cannot be used: %1").arg(describe(inspected->error()).toHtmlEscaped()));
        return;
    }
    const ModelFileInfo& info = **inspected;
    const QString verdict = info.unsupported.isEmpty()
        ? tr("Hearth runs this model.")
        : tr("<b>Hearth cannot run this model</b> (%1).").arg(info.unsupported.toHtmlEscaped());
    const QString context =
        info.contextLength > 0 ? tr("%1 tokens").arg(QLocale().toString(info.contextLength)) : tr("unknown");
    QString size = formatBytes(info.fileBytes);
    if (info.files.size() > 1) size = tr("%1 in %2 files").arg(size).arg(info.files.size());
    QString text =
        tr("<b>%1</b><br>Family: %2 (%3)<br>Parameters: %4<br>Quantization: %5<br>"
           "Trained context: %6<br>Size: %7<br>Chat format: %8<br>")
            .arg(info.name.toHtmlEscaped(), info.family.toHtmlEscaped(), info.architecture.toHtmlEscaped(),
                 formatParams(info.nParams), info.quantization.toHtmlEscaped(), context, size, info.chatFormat);
    if (!info.chatTuned)
        text +=
            tr("<b>Base model, not tuned for chat</b>: it continues text rather than answering. For "
               "conversations, choose an instruct or chat version.<br>");
    if (!info.source.isEmpty())
        text += tr("Found in: %1 (%2)<br>").arg(info.source, QDir::toNativeSeparators(path).toHtmlEscaped());
    const MemoryEstimate& m = info.memory;
    if (m.kvBytes >= 0 && m.neededBytes > 0) {
        text += tr("Memory: %1 at %2 tokens of context (weights %3, KV %4, +10%)")
                    .arg(formatBytes(m.neededBytes), QLocale().toString(m.contextLength), formatBytes(m.weightBytes),
                         formatBytes(m.kvBytes));
        if (m.verdict != MemoryVerdict::Unknown)
            text +=
                tr(" — <b>%1</b>: %2 available now").arg(memoryVerdictText(m.verdict), formatBytes(m.availableBytes));
        text += "<br>";
    }
    if (const QString gpu = gpuPlacementText(m.gpu); !gpu.isEmpty())
        text += tr("GPU: %1 (%2 of its free %3)<br>")
                    .arg(gpu, formatBytes(static_cast<qint64>(m.gpu.deviceBytes)),
                         formatBytes(static_cast<qint64>(m.gpu.budget)));
    facts_->setText(text + verdict);
}

}  // namespace hearth

// Drops are taken by an event filter on the message view's viewport and the composer's input
// (a QPlainTextEdit would otherwise paste a dropped file's URL as text).
#include "ui/documents_ui.h"

#include <algorithm>

#include <QDialog>
#include <QDialogButtonBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QListWidget>
#include <QMenu>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "app/chat/attachment_controller.h"
#include "app/chat/message_list_model.h"
#include "app/chat/model_controller.h"
#include "app/docs/passages.h"
#include "ui/composer.h"
#include "ui/message_view.h"

namespace hearth {

namespace {

QStringList localFiles(const QMimeData* mime) {
    QStringList out;
    if (!mime || !mime->hasUrls()) return out;
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile()) out.append(url.toLocalFile());
    return out;
}

}  // namespace

DocumentsUi::DocumentsUi(ConversationController& conversations, const ModelController& models, Composer* composer,
                         MessageView* view, QWidget* window)
    : QObject(window),
      attachments_(new AttachmentController(conversations, this)),
      composer_(composer),
      window_(window) {
    chooseFiles_ = [this] {
        return QFileDialog::getOpenFileNames(
            window_, tr("Attach documents"), {},
            tr("Documents (*.txt *.md *.markdown *.pdf *.c *.cc *.cpp *.h *.hpp *.py *.js *.ts *.java *.rs *.go "
               "*.json *.yaml *.yml *.toml *.xml *.html *.css *.sh *.sql *.csv *.log);;All files (*)"));
    };
    connect(composer_, &Composer::attachRequested, this, &DocumentsUi::attachChosen);
    connect(attachments_, &AttachmentController::attachmentsChanged, this,
            [this] { composer_->setAttachments(attachments_->summary()); });
    connect(&models, &ModelController::loaded, attachments_,
            [this](const LoadedModel& m) { attachments_->setTurnBudget(turnDocumentBudget(m.contextLength)); });
    if (models.model()) attachments_->setTurnBudget(turnDocumentBudget(models.model()->contextLength));
    composer_->setAttachments(attachments_->summary());
    connect(composer_->attachmentsMenu(), &QMenu::aboutToShow, this, &DocumentsUi::fillRemoveMenu);
    view->viewport()->setAcceptDrops(true);
    for (QWidget* w : {view->viewport(), composer_->input()->viewport(), static_cast<QWidget*>(composer_)})
        w->installEventFilter(this);
    composer_->setAcceptDrops(true);
    connect(view->messageDelegate(), &MessageDelegate::actionTriggered, this,
            [this](MessageDelegate::Action a, const QModelIndex& index, const QString& payload) {
                if (a == MessageDelegate::Action::Source)
                    showSources(index.data(MessageListModel::SourcesRole).toString(), payload.toInt());
            });
}

// Removing a document leaves the turns that carried it as they were sent (each recorded its own
// copy), so their prompt and saved KV stay valid; later turns no longer see it.
void DocumentsUi::fillRemoveMenu() {
    QMenu* menu = composer_->attachmentsMenu();
    menu->clear();
    for (const Attachment& a : attachments_->attachments()) {
        const qint64 id = a.id;
        menu->addAction(tr("Remove %1").arg(QString::fromStdString(a.name)), this,
                        [this, id] { attachments_->remove(id); });
    }
}

void DocumentsUi::attachChosen() {
    const QStringList files = chooseFiles_ ? chooseFiles_() : QStringList();
    if (!files.isEmpty()) attachments_->attachFiles(files);
}

bool DocumentsUi::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove) {
        auto* drag = static_cast<QDragMoveEvent*>(event);
        if (localFiles(drag->mimeData()).isEmpty()) return QObject::eventFilter(watched, event);
        drag->acceptProposedAction();
        return true;
    }
    if (event->type() == QEvent::Drop) {
        auto* drop = static_cast<QDropEvent*>(event);
        const QStringList files = localFiles(drop->mimeData());
        if (files.isEmpty()) return QObject::eventFilter(watched, event);
        drop->acceptProposedAction();
        attachments_->attachFiles(files);
        return true;
    }
    return QObject::eventFilter(watched, event);
}

void DocumentsUi::showSources(const QString& sourcesJson, int at) {
    const std::vector<TurnSource> sources = sourcesFromJson(sourcesJson.toStdString());
    if (sources.empty()) return;
    if (dialog_) dialog_->close();
    auto* dialog = new QDialog(window_);
    dialog->setObjectName("sourcesDialog");
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Sources of this reply"));
    auto* list = new QListWidget;
    list->setObjectName("sourcesList");
    auto* text = new QTextBrowser;
    text->setObjectName("sourceText");
    for (const TurnSource& s : sources) {
        const QString name = QString::fromStdString(s.name);
        list->addItem(s.passage > 0 ? tr("%1, passage %2 (~%3 tokens)").arg(name).arg(s.passage).arg(s.tokens)
                                    : tr("%1, whole (~%2 tokens)").arg(name).arg(s.tokens));
    }
    connect(list, &QListWidget::currentRowChanged, text, [text, sources](int row) {
        if (row >= 0 && row < static_cast<int>(sources.size()))
            text->setPlainText(QString::fromStdString(sources[static_cast<size_t>(row)].text));
    });
    auto* splitter = new QSplitter;
    splitter->addWidget(list);
    splitter->addWidget(text);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({320, 440});
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(splitter, 1);
    layout->addWidget(buttons);
    list->setCurrentRow(std::clamp(at, 0, static_cast<int>(sources.size()) - 1));
    dialog->resize(760, 480);
    dialog_ = dialog;
    dialog->show();
}

}  // namespace hearth

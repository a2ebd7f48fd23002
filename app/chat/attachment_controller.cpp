// Reading a file (and a PDF's pdftotext, bounded by document_reader.h) runs on the thread pool;
// the store's write, one transaction per file, on the GUI thread that owns the connection.
#include "app/chat/attachment_controller.h"

#include <QCoreApplication>
#include <QLocale>
#include <QPointer>
#include <QThreadPool>

#include "app/chat/conversation_controller.h"

namespace hearth {

AttachmentController::AttachmentController(ConversationController& conversations, QObject* parent)
    : QObject(parent), conversations_(conversations) {
    connect(&conversations_, &ConversationController::conversationOpened, this, &AttachmentController::reload);
    connect(&conversations_, &ConversationController::databaseChanged, this, &AttachmentController::reload);
    reload();
}

void AttachmentController::reload() {
    attachments_.clear();
    if (conversations_.current() != 0) {
        auto list = conversations_.store().attachments().list(conversations_.current());
        if (conversations_.ok(list)) attachments_ = std::move(*list);
    }
    emit attachmentsChanged();
}

void AttachmentController::attachFiles(const QStringList& paths) {
    if (paths.isEmpty()) return;
    if (conversations_.current() == 0) conversations_.newConversation();
    const qint64 target = conversations_.current();
    if (target == 0) return;
    ++reading_;
    const int batch = ++nextBatch_;
    refused_[batch] = 0;
    emit attachmentsChanged();  // the summary says files are being read
    // As the model catalog does: the result goes to the GUI thread through the application
    // object, and the controller is looked at only there (it may be gone by then).
    QThreadPool::globalInstance()->start([paths, target, batch, self = QPointer(this)] {
        for (const QString& path : paths) {
            Result<DocumentText> doc = readDocument(path);
            QMetaObject::invokeMethod(QCoreApplication::instance(), [self, batch, target, doc = std::move(doc)] {
                if (self) self->store(batch, target, doc);
            });
        }
        QMetaObject::invokeMethod(QCoreApplication::instance(), [self, batch, n = static_cast<int>(paths.size())] {
            if (self) self->finishBatch(batch, n);
        });
    });
}

void AttachmentController::store(int batch, qint64 conversationId, const Result<DocumentText>& doc) {
    if (!doc) {
        conversations_.showError(tr("Not attached: %1").arg(QString::fromStdString(doc.error().message)), {},
                                 QStringLiteral("attach"));
        ++refused_[batch];
        return;
    }
    auto added = conversations_.store().attachments().add(conversationId, doc->name.toStdString(),
                                                          doc->kind.toStdString(), doc->text);
    if (!conversations_.ok(added)) ++refused_[batch];  // e.g. the conversation was deleted meanwhile
    else if (conversationId == conversations_.current()) reload();
}

void AttachmentController::finishBatch(int batch, int nFiles) {
    --reading_;
    const int refused = refused_[batch];
    refused_.erase(batch);
    reload();
    emit attachFinished(nFiles - refused, refused);
}

bool AttachmentController::remove(qint64 attachmentId) {
    const bool removed = conversations_.ok(conversations_.store().attachments().remove(attachmentId));
    reload();
    return removed;
}

void AttachmentController::setTurnBudget(int tokens) {
    turnBudget_ = tokens;
    emit attachmentsChanged();
}

QString AttachmentController::summary() const {
    if (attachments_.empty()) return reading_ > 0 ? tr("Reading documents…") : QString();
    const QLocale locale;
    QStringList parts;
    for (const Attachment& a : attachments_) {
        const QString name = QString::fromStdString(a.name);
        parts.append(a.whole() ? tr("%1 (whole, ~%2 tokens)").arg(name, locale.toString(a.tokens))
                               : tr("%1 (searched, ~%2 tokens in %3 passages)")
                                     .arg(name, locale.toString(a.tokens), locale.toString(a.passages)));
    }
    const QString line = tr("Documents: %1. Each message carries up to %2 tokens of them.")
                             .arg(parts.join(QStringLiteral(", ")), locale.toString(turnBudget_));
    return reading_ > 0 ? tr("Reading documents…") + QStringLiteral(" ") + line : line;
}

}  // namespace hearth

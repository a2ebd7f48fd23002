// Reading a file happens here, on the GUI thread: text files are read at disk speed and a PDF's
// pdftotext is bounded (document_reader.h); the store's write is one transaction per file.
#include "app/chat/attachment_controller.h"

#include <QLocale>

#include "app/chat/conversation_controller.h"
#include "app/docs/document_reader.h"

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

int AttachmentController::attachFiles(const QStringList& paths) {
    if (paths.isEmpty()) return 0;
    if (conversations_.current() == 0) conversations_.newConversation();
    const qint64 current = conversations_.current();
    if (current == 0) return 0;
    int attached = 0;
    for (const QString& path : paths) {
        auto doc = readDocument(path);
        if (!doc) {
            conversations_.showError(tr("Not attached: %1").arg(QString::fromStdString(doc.error().message)), {}, QStringLiteral("attach"));
            continue;
        }
        auto added = conversations_.store().attachments().add(current, doc->name.toStdString(), doc->kind.toStdString(),
                                                              doc->text);
        if (conversations_.ok(added)) ++attached;
    }
    reload();
    return attached;
}

bool AttachmentController::remove(qint64 attachmentId) {
    const bool removed = conversations_.ok(conversations_.store().attachments().remove(attachmentId));
    reload();
    return removed;
}

QString AttachmentController::summary() const {
    if (attachments_.empty()) return {};
    const QLocale locale;
    QStringList parts;
    for (const Attachment& a : attachments_) {
        const QString name = QString::fromStdString(a.name);
        parts.append(a.whole() ? tr("%1 (whole, ~%2 tokens)").arg(name, locale.toString(a.tokens))
                               : tr("%1 (searched, ~%2 tokens in %3 passages)")
                                     .arg(name, locale.toString(a.tokens), locale.toString(a.passages)));
    }
    return tr("Documents: %1. Each message carries up to %2 tokens of them.")
        .arg(parts.join(QStringLiteral(", ")), locale.toString(kTurnDocumentBudgetTokens));
}

}  // namespace hearth

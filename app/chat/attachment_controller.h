// The documents attached to the open conversation, without widgets: attaching files (the
// composer's paperclip, a drop on the chat), the list and its summary with the per-turn token
// budget, removing one. A file that cannot be read is named in a notice with the reason and
// nothing of it is kept; the other files of the same drop are still attached. GUI thread only.
#pragma once

#include <QObject>
#include <QStringList>
#include <vector>

#include "app/store/attachment_store.h"

namespace hearth {

class ConversationController;

class AttachmentController : public QObject {
    Q_OBJECT
public:
    explicit AttachmentController(ConversationController& conversations, QObject* parent = nullptr);

    // Attaches to the open conversation (a new one when none is open). Returns how many were attached.
    int attachFiles(const QStringList& paths);
    bool remove(qint64 attachmentId);
    const std::vector<Attachment>& attachments() const { return attachments_; }
    // One line for the composer: each document, whole or searched, and the turn's budget; "" when none.
    QString summary() const;

signals:
    void attachmentsChanged();

private:
    void reload();

    ConversationController& conversations_;
    std::vector<Attachment> attachments_;  // the open conversation's, oldest first
};

}  // namespace hearth

// The documents attached to the open conversation, without widgets: attaching files (the
// composer's paperclip, a drop on the chat), the list and its summary with the per-turn token
// budget, removing one. Files are read on the thread pool (a PDF's pdftotext may take seconds)
// and stored on the GUI thread. A file that cannot be read is named in a notice with the reason
// and nothing of it is kept; the other files of the same drop are still attached. GUI thread only.
#pragma once

#include <QObject>
#include <QStringList>
#include <map>
#include <vector>

#include "app/docs/document_reader.h"
#include "app/store/attachment_store.h"

namespace hearth {

class ConversationController;

class AttachmentController : public QObject {
    Q_OBJECT
public:
    explicit AttachmentController(ConversationController& conversations, QObject* parent = nullptr);

    // Attaches to the open conversation (a new one when none is open), in the background:
    // attachFinished tells when these files are stored or refused.
    void attachFiles(const QStringList& paths);
    bool reading() const { return reading_ > 0; }
    bool remove(qint64 attachmentId);
    const std::vector<Attachment>& attachments() const { return attachments_; }
    // One line for the composer: each document, whole or searched, and the turn's budget; "" when none.
    QString summary() const;
    // The budget the summary states: turnDocumentBudget() of the loaded model's context.
    void setTurnBudget(int tokens);

signals:
    void attachmentsChanged();
    void attachFinished(int attached, int refused);  // one batch of attachFiles

private:
    void reload();
    void store(int batch, qint64 conversationId, const Result<DocumentText>& doc);
    void finishBatch(int batch, int nFiles);

    ConversationController& conversations_;
    std::vector<Attachment> attachments_;  // the open conversation's, oldest first
    int reading_ = 0;  // batches being read
    int turnBudget_ = kTurnDocumentBudgetTokens;
    int nextBatch_ = 0;
    std::map<int, int> refused_;  // batch -> files refused so far
};

}  // namespace hearth

// The window's conversations, without widgets: the list (new, open, rename, delete, search), the
// open conversation's rows (its active branch and the notices shown with it), and the database
// behind them. When the database file is moved or deleted while running, the window offers to
// save a copy and goes on with it. The reply being written belongs to the ReplyController; this
// controller only tells it when its conversation is left or deleted, or the database replaced.
// GUI thread only.
#pragma once

#include <QObject>

#include "app/chat/conversation_list_model.h"
#include "app/chat/message_list_model.h"
#include "app/engine_host/engine_host.h"
#include "app/store/conversation_store.h"

namespace hearth {

// The reply being written, as the conversation list sees it (ReplyController is one).
class ReplyInFlight {
public:
    [[nodiscard]] virtual qint64 replyConversation() const = 0;  // 0: no reply is being written
    [[nodiscard]] virtual qint64 replyMessage() const = 0;  // the row it is written to
    [[nodiscard]] virtual QString replyText() const = 0;  // its text so far
    virtual void stop() = 0;  // ends at the next step boundary; what was written is kept
    virtual void abandon() = 0;  // ends now: nothing more is written (its conversation or database is gone)

protected:
    ~ReplyInFlight() = default;
};

class ConversationController : public QObject {
    Q_OBJECT
public:
    // Opens the engine thread's own connection to the same database, for the KV blocks.
    ConversationController(ConversationStore& store, EngineHost& host, QObject* parent = nullptr);

    ConversationListModel* list() { return &list_; }
    MessageListModel* messages() { return &messages_; }
    ConversationStore& store() { return *store_; }  // the one in use (a copy after switchToCopy)
    qint64 current() const { return current_; }  // the open conversation; 0: none
    // The reply controller, told of conversations left and deleted; nullptr: none.
    void setReplyInFlight(ReplyInFlight* reply) { reply_ = reply; }
    bool replying() const { return reply_ && reply_->replyConversation() != 0; }  // a reply is being written

    void newConversation();
    void openConversation(qint64 id);  // stops a reply being written elsewhere
    // Opens a conversation at a message (one search found): its branch becomes the one shown
    // when it was another (unless a reply is being written there), then messageFocused.
    void openAt(qint64 conversationId, qint64 messageId);
    void renameConversation(qint64 id, const QString& title);
    void deleteConversation(qint64 id);
    void search(const QString& text);
    void reloadMessages();  // the open conversation's active branch, from the store

    // A notice row in the message view (until the next message is sent, or topic's notices are
    // cleared because they no longer hold).
    // details: the technical text behind the notice's "Details…" (English); empty: none.
    void showError(const QString& message, const QString& action = {}, const QString& topic = {},
                   const QString& details = {});
    void clearNotices(const QString& topic) { messages_.removeNotices(topic); }
    // Tokens the open conversation's last reply left in the context (its prompt and its reply),
    // as recorded with it; 0 for a new conversation or one without a finished reply.
    int contextUsed() const { return contextUsed_; }
    // True when r holds a value; otherwise shows what went wrong with the store and what to do.
    template <class T>
    bool ok(const Result<T>& r) {
        return r ? true : (storeFailed(r.error()), false);
    }

    QString databasePath() const;
    // Writes everything committed to a new database at path (also when the open one's file was
    // moved or deleted), then uses it: the conversations, the engine thread's KV store. False
    // (with a notice saying why) when the copy cannot be written or opened.
    bool switchToCopy(const QString& path);
    // The KV disk budget of both store connections, at once (a lower one is enforced now).
    void setKvDiskBudget(qint64 bytes);

signals:
    void databaseChanged(const QString& path);  // switchToCopy() succeeded
    void conversationOpened(qint64 id);
    void messageFocused(qint64 messageId);  // openAt(): the view shows this message

private:
    void storeFailed(const Error& error);

    ConversationStore* store_;
    std::unique_ptr<ConversationStore> copy_;  // the store in use after switchToCopy()
    EngineHost& host_;
    ConversationListModel list_;
    MessageListModel messages_;
    qint64 current_ = 0;
    int contextUsed_ = 0;
    ReplyInFlight* reply_ = nullptr;
};

// A conversation that has no message yet is stored with an empty title, which the list shows as
// "New chat" in the interface's language (ConversationListModel), so that switching the language
// shows the right words; its first message gives it its title.
// The title a conversation gets from its first message: its first line, shortened ("" when blank).
QString titleFromMessage(const QString& text);

}  // namespace hearth

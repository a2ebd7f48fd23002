// The chat window's logic, without widgets: which conversation is open, sending, stopping,
// regenerating, editing (a new branch), switching branches, and the settings a reply uses.
// Every message is written to the store the moment it exists; a streamed reply is saved at
// least once a second and when it ends. When the database file is moved or deleted while
// running, the window offers to save a copy and goes on with it. GUI thread only.
#pragma once

#include <QObject>
#include <optional>

#include "app/chat/app_settings.h"
#include "app/chat/conversation_list_model.h"
#include "app/engine_host/engine_host.h"
#include "app/chat/message_list_model.h"
#include "app/chat/model_controller.h"
#include "app/chat/turn_pipeline.h"

namespace hearth {

class ChatController : public QObject {
    Q_OBJECT
public:
    ChatController(ConversationStore& store, EngineHost& host, const ModelController& models, AppSettings& settings,
                   QObject* parent = nullptr);

    ConversationListModel* conversations() { return &conversations_; }
    MessageListModel* messages() { return &messages_; }
    qint64 currentConversation() const { return current_; }
    bool generating() const { return streaming_.ticket != 0; }
    const std::optional<LoadedModel>& model() const { return models_.model(); }
    const ReplyRequest& lastRequest() const { return lastRequest_; }

    void newConversation();
    void openConversation(qint64 id);
    void renameConversation(qint64 id, const QString& title);
    void deleteConversation(qint64 id);
    void search(const QString& text);

    bool send(const QString& text);
    void stop();
    void regenerate();  // the last reply, as a new branch
    bool editMessage(qint64 messageId, const QString& text);  // a new branch beside it
    void switchBranch(qint64 messageId, int delta);  // to the previous (-1) or next (+1) sibling

    // The defaults (model's + the user's saved ones) and the open conversation's settings.
    ChatSettings defaultSettings() const;
    ChatSettings conversationSettings() const;
    bool hasOverrides() const;
    void setConversationSettings(const ChatSettings& s);
    void resetConversationSettings();
    void showError(const QString& message, const QString& action = {});  // a notice row in the message view

    QString databasePath() const;
    // Writes everything committed to a new database at path (also when the open one's file was
    // moved or deleted), then uses it: the conversations, the engine thread's KV store. False
    // (with a notice saying why) when the copy cannot be written or opened.
    bool switchToCopy(const QString& path);
    // The KV disk budget of both store connections, at once (a lower one is enforced now).
    void setKvDiskBudget(qint64 bytes);

signals:
    void databaseChanged(const QString& path);  // switchToCopy() succeeded
    void generatingChanged(bool generating);
    void conversationOpened(qint64 id);
    void replyStarted(const hearth::ReplyStarted& info);
    void replyFinished(const hearth::ReplyStats& stats);

private:
    struct Streaming {
        quint64 ticket = 0;
        qint64 messageId = 0, conversationId = 0;
        std::optional<ReplyRecorder> recorder;  // the reply's row, written at least once a second
    };
    template <class T>
    bool ok(const Result<T>& r) {
        return r ? true : (storeFailed(r.error()), false);
    }
    void storeFailed(const Error& error);
    void reloadMessages();
    bool startReply(qint64 parentId);
    QList<ChatTurn> turnsTo(qint64 messageId);
    void onText(quint64 ticket, const QString& text);
    void onFinished(const ReplyStats& stats);
    void onFailed(quint64 ticket, const QString& message);
    void endStreaming();

    ConversationStore* store_;
    std::unique_ptr<ConversationStore> copy_;  // the store in use after switchToCopy()
    EngineHost& host_;
    AppSettings& settings_;
    ConversationListModel conversations_;
    MessageListModel messages_;
    qint64 current_ = 0;
    Streaming streaming_;
    const ModelController& models_;
    ReplyRequest lastRequest_;
};

// The title a conversation gets from its first message: its first line, shortened.
QString titleFromMessage(const QString& text);

}  // namespace hearth

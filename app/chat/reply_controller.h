// The reply in flight, without widgets: sending a message, stopping, regenerating the last reply,
// editing a message (a new branch beside it), switching between branches, and the notices about
// a reply (the context window is full, it failed). Every message is written to the store the
// moment it exists; a streamed reply at least once a second and when it ends. GUI thread only.
#pragma once

#include <QObject>
#include <optional>

#include "app/chat/conversation_controller.h"
#include "app/chat/turn_pipeline.h"
#include "app/engine_host/reply_engine.h"

namespace hearth {

class ModelController;
class SettingsController;

class ReplyController : public QObject, public ReplyInFlight {
    Q_OBJECT
public:
    // Replies go to conversations' open conversation, with settings' conversation settings, to
    // engine: the local engine host, or a switch between it and a remote endpoint
    // (engine_switch.h). On the local engine the model that models has loaded gives the
    // reasoning span that splits the rows shown; a remote reply's reasoning comes marked with
    // the default span.
    ReplyController(ConversationController& conversations, const SettingsController& settings,
                    const ModelController& models, ReplyEngine& engine, QObject* parent = nullptr);
    ~ReplyController();

    bool generating() const { return streaming_.ticket != 0; }
    const ReplyRequest& lastRequest() const { return lastRequest_; }  // the latest reply asked for

    bool send(const QString& text);
    void stop() override;
    void regenerate();  // the last reply, as a new branch
    bool editMessage(qint64 messageId, const QString& text);  // a new branch beside it
    void switchBranch(qint64 messageId, int delta);  // to the previous (-1) or next (+1) sibling

signals:
    void generatingChanged(bool generating);
    void replyStarted(const hearth::ReplyStarted& info);
    void replyFinished(const hearth::ReplyStats& stats);
    void replyProgress(int generatedTokens, double tokensPerSecond);  // the open conversation's reply

private:
    struct Streaming {
        quint64 ticket = 0;
        qint64 messageId = 0, conversationId = 0;
        std::optional<ReplyRecorder> recorder;  // the reply's row, written at least once a second
    };
    // ReplyInFlight, for the conversation controller.
    qint64 replyConversation() const override { return streaming_.conversationId; }
    qint64 replyMessage() const override { return streaming_.messageId; }
    QString replyText() const override;
    void abandon() override;

    template <class T>
    bool ok(const Result<T>& r) {
        return conversations_.ok(r);
    }
    bool startReply(qint64 parentId);
    QString replyModelName() const;  // the readable name of the model the next reply runs on
    QList<ChatTurn> turnsTo(qint64 messageId);
    int documentBudget() const;  // tokens of documents a turn may carry on the loaded model
    void onText(quint64 ticket, const QString& text);
    void onFinished(const ReplyStats& stats);
    void onFailed(quint64 ticket, const QString& message);
    void endStreaming();

    ConversationController& conversations_;
    const SettingsController& settings_;
    const ModelController& models_;
    ReplyEngine& host_;
    Streaming streaming_;
    ReplyRequest lastRequest_;
};

}  // namespace hearth

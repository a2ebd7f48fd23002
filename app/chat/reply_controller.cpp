// Replies are tied to a ticket, not to the open conversation: switching chats or deleting one
// while a reply streams is safe (the conversation controller tells this one first).
#include "app/chat/reply_controller.h"

#include "app/chat/model_controller.h"
#include "app/docs/turn_documents.h"
#include "app/chat/settings_controller.h"

namespace hearth {

ReplyController::ReplyController(ConversationController& conversations, const SettingsController& settings,
                                 const ModelController& models, ReplyEngine& engine, QObject* parent)
    : QObject(parent), conversations_(conversations), settings_(settings), models_(models), host_(engine) {
    ReplyEngine* w = &host_;
    connect(w, &ReplyEngine::textReady, this, &ReplyController::onText);
    connect(w, &ReplyEngine::replyFinished, this, &ReplyController::onFinished);
    connect(w, &ReplyEngine::replyFailed, this, &ReplyController::onFailed);
    connect(w, &ReplyEngine::replyProgress, this, [this](quint64 ticket, int nTokens, double tokensPerSecond) {
        if (ticket == streaming_.ticket && ticket != 0 && streaming_.conversationId == conversations_.current())
            emit replyProgress(nTokens, tokensPerSecond);
    });
    connect(w, &ReplyEngine::replyStarted, this, [this](const ReplyStarted& info) {
        if (info.ticket == streaming_.ticket) emit replyStarted(info);
    });
    // Replies are shown split at the loaded model's reasoning span.
    MessageListModel* messages = conversations_.messages();
    connect(&models_, &ModelController::loaded, this,
            [messages](const LoadedModel& m) { messages->setReasoningSpan(m.reasoning); });
    if (models_.model()) messages->setReasoningSpan(models_.model()->reasoning);
    conversations_.setReplyInFlight(this);
}

ReplyController::~ReplyController() { conversations_.setReplyInFlight(nullptr); }

QString ReplyController::replyText() const {
    return streaming_.recorder ? QString::fromStdString(streaming_.recorder->text()) : QString();
}

void ReplyController::abandon() {
    host_.stop(streaming_.ticket);
    endStreaming();
}

bool ReplyController::send(const QString& text) {
    if (text.trimmed().isEmpty() || generating()) return false;
    if (conversations_.current() == 0) conversations_.newConversation();
    const qint64 current = conversations_.current();
    if (current == 0) return false;
    ConversationStore& store = conversations_.store();
    auto conv = store.conversation(current);
    if (!ok(conv) || !*conv) return false;
    if ((*conv)->activeLeafId == 0 && (*conv)->title.empty())
        ok(store.renameConversation(current, titleFromMessage(text).toStdString()));
    conversations_.messages()->removeNotices();
    auto user = store.appendMessage(current, (*conv)->activeLeafId, ChatRole::User, text.toStdString());
    if (!ok(user)) return false;
    ok(recordTurnDocuments(store, *user, documentBudget()));  // without them the turn still runs
    return startReply(user->id);
}

int ReplyController::documentBudget() const {
    return turnDocumentBudget(models_.model() ? models_.model()->contextLength : 0);
}

// The conversation up to messageId as engine turns; empty replies (failed ones) are left out.
QList<ChatTurn> ReplyController::turnsTo(qint64 messageId) {
    QList<ChatTurn> turns;
    auto branch = conversations_.store().branchTo(messageId);
    if (!ok(branch)) return turns;
    for (const Message& m : *branch)
        if (!(m.role == ChatRole::Assistant && m.text.empty()))  // a user turn with its recorded documents
            turns.append(
                {m.role,
                 QString::fromStdString(m.role == ChatRole::User ? userTurnText(m.text, m.documentsJson) : m.text)});
    return turns;
}

bool ReplyController::startReply(qint64 parentId) {
    const qint64 current = conversations_.current();
    ConversationStore& store = conversations_.store();
    QList<ChatTurn> turns = turnsTo(parentId);
    auto reply = store.appendMessage(current, parentId, ChatRole::Assistant, "", false);
    if (!ok(reply)) return false;
    const QString remote = host_.remoteTarget();
    ok(store.setMessageModel(reply->id, replyModelName().toStdString()));
    if (!remote.isEmpty()) {
        ok(store.setModel(current, remote.toStdString()));
        conversations_.messages()->setReasoningSpan(std::nullopt);  // reasoning_content comes as <think>...</think>
    } else if (models_.model()) {
        ok(store.setModel(current, models_.model()->file.path.toStdString()));
        conversations_.messages()->setReasoningSpan(models_.model()->reasoning);
    }
    streaming_ = Streaming{
        .ticket = 0, .messageId = reply->id, .conversationId = current, .recorder = ReplyRecorder(store, reply->id)};
    conversations_.reloadMessages();
    ok(conversations_.list()->refresh());
    lastRequest_ = ReplyRequest{.ticket = 0,
                                .turns = std::move(turns),
                                .settings = settings_.conversationSettings(),
                                .conversationId = current,
                                .spec = toSpecOptions(settings_.engine().spec)};
    streaming_.ticket = host_.generate(lastRequest_);
    lastRequest_.ticket = streaming_.ticket;
    conversations_.messages()->setStreaming(reply->id, true);
    emit generatingChanged(true);
    return true;
}

QString ReplyController::replyModelName() const {
    if (!host_.remoteTarget().isEmpty()) return host_.remoteModel();
    return models_.model() ? models_.model()->file.name : QString();
}

void ReplyController::stop() {
    if (generating()) host_.stop(streaming_.ticket);
}

void ReplyController::regenerate() {
    if (generating() || conversations_.current() == 0) return;
    MessageListModel* messages = conversations_.messages();
    for (int i = messages->rowCount() - 1; i >= 0; --i) {
        const MessageRow* r = messages->row(i);
        if (r->role == ChatRole::User) {
            messages->removeNotices();
            startReply(r->id);  // a sibling of the previous reply
            return;
        }
    }
}

bool ReplyController::editMessage(qint64 messageId, const QString& text) {
    if (generating() || text.trimmed().isEmpty()) return false;
    ConversationStore& store = conversations_.store();
    auto m = store.message(messageId);
    if (!ok(m) || !*m || (*m)->role != ChatRole::User) return false;
    conversations_.messages()->removeNotices();
    auto edited = store.appendMessage(conversations_.current(), (*m)->parentId, ChatRole::User, text.toStdString());
    if (!ok(edited)) return false;
    ok(recordTurnDocuments(store, *edited, documentBudget()));
    return startReply(edited->id);
}

void ReplyController::switchBranch(qint64 messageId, int delta) {
    if (generating()) return;
    ConversationStore& store = conversations_.store();
    auto sib = store.siblings(messageId);
    if (!ok(sib)) return;
    for (size_t i = 0; i < sib->size(); ++i) {
        if ((*sib)[i].id != messageId) continue;
        const auto j = static_cast<qsizetype>(i) + delta;
        if (j < 0 || j >= static_cast<qsizetype>(sib->size())) return;
        if (ok(store.switchBranch((*sib)[static_cast<size_t>(j)].id))) conversations_.reloadMessages();
        return;
    }
}

void ReplyController::onText(quint64 ticket, const QString& text) {
    if (ticket != streaming_.ticket || ticket == 0) return;
    if (streaming_.conversationId == conversations_.current())
        conversations_.messages()->appendText(streaming_.messageId, text);
    ok(streaming_.recorder->append(text.toStdString()));
}

void ReplyController::onFinished(const ReplyStats& s) {
    if (s.ticket != streaming_.ticket || s.ticket == 0) return;
    ok(streaming_.recorder->finish(s.stored));
    if (s.finishReason == QLatin1String("cancelled"))
        conversations_.messages()->setEnding(streaming_.messageId, QStringLiteral("stopped"));
    if (s.finishReason == QLatin1String("context"))
        conversations_.showError(
            tr("The reply stopped because the context window is full. Start a new conversation, "
               "or raise the context length in Settings → Engine."));
    endStreaming();
    emit replyFinished(s);
}

void ReplyController::onFailed(quint64 ticket, const QString& message) {
    if (ticket != streaming_.ticket || ticket == 0) return;
    GenerationStats stats;
    stats.finishReason = "error";
    ok(streaming_.recorder->finish(stats));
    endStreaming();
    conversations_.showError(message);
}

void ReplyController::endStreaming() {
    const qint64 id = streaming_.messageId;
    streaming_ = Streaming{};
    conversations_.messages()->setStreaming(id, false);
    ok(conversations_.list()->refresh());
    emit generatingChanged(false);
}

}  // namespace hearth

// Conversation flow over the store and the engine host. Replies are tied to a ticket, not to
// the open conversation: switching chats or deleting one while a reply streams is safe.
#include "app/chat/chat_controller.h"

#include <QFileInfo>
#include <QJsonDocument>

#include "app/common/error_text.h"
#include "app/store/kv_block_store.h"

namespace hearth {

namespace {

const char* const kNewChatTitle = "New chat";

QString fromStd(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

QString titleFromMessage(const QString& text) {
    QString line = text.trimmed().section(QLatin1Char('\n'), 0, 0).simplified();
    if (line.size() > 48) line = line.left(47).trimmed() + QChar(0x2026);
    return line.isEmpty() ? QString::fromLatin1(kNewChatTitle) : line;
}

ChatController::ChatController(ConversationStore& store, EngineHost& host, const ModelController& models,
                               AppSettings& settings, QObject* parent)
    : QObject(parent), store_(&store), host_(host), settings_(settings), conversations_(store), models_(models) {
    EngineWorker* w = host_.worker();
    connect(w, &EngineWorker::textReady, this, &ChatController::onText);
    connect(w, &EngineWorker::replyFinished, this, &ChatController::onFinished);
    connect(w, &EngineWorker::replyFailed, this, &ChatController::onFailed);
    connect(w, &EngineWorker::replyStarted, this, [this](const ReplyStarted& info) {
        if (info.ticket == streaming_.ticket) emit replyStarted(info);
    });
    // Replies are shown split at the loaded model's reasoning span.
    connect(&models_, &ModelController::loaded, this,
            [this](const LoadedModel& m) { messages_.setReasoningSpan(m.reasoning); });
    if (model()) messages_.setReasoningSpan(model()->reasoning);
    ok(conversations_.refresh());
    // The engine thread opens its own connection to the same database for the KV blocks.
    host_.useKvStore(KvStoreOptions{fromStd(store_->path()), store_->kv().diskBudgetBytes()});
}

// SQLite goes on reading a database file that was moved or deleted but refuses to write to
// it; the way forward is a copy of what was committed (ConversationStore::saveCopy).
void ChatController::storeFailed(const Error& error) {
    if (!QFileInfo::exists(databasePath())) {
        showError(
            tr("The conversation database %1 was moved or deleted while Hearth was running, so nothing more "
               "can be saved to it (%2). Save a copy of everything written so far, and Hearth goes on with the copy.")
                .arg(databasePath(), describe(error)),
            QStringLiteral("save-copy"));
        return;
    }
    showError(tr("Could not read or save the conversation (%1). Check that the disk has free space, "
                 "then try again.")
                  .arg(describe(error)));
}

void ChatController::showError(const QString& message, const QString& action) {
    MessageRow row{0, QStringLiteral("error"), message};
    row.action = action;
    messages_.append(std::move(row));
}

QString ChatController::databasePath() const { return fromStd(store_->path()); }

bool ChatController::switchToCopy(const QString& path) {
    if (generating()) {
        host_.stop(streaming_.ticket);
        endStreaming();  // the rest of the reply had nowhere to go
    }
    auto saved = store_->saveCopy(path.toStdString());
    auto copy = saved ? ConversationStore::open(path.toStdString(), store_->kv().diskBudgetBytes())
                      : Result<std::unique_ptr<ConversationStore>>(std::unexpected(saved.error()));
    if (!copy) {
        showError(tr("Could not save a copy to %1: %2").arg(path, describe(copy.error())), QStringLiteral("save-copy"));
        return false;
    }
    copy_ = std::move(*copy);
    store_ = copy_.get();
    host_.useKvStore(KvStoreOptions{path, store_->kv().diskBudgetBytes()});
    ok(conversations_.setStore(*store_));
    messages_.removeNotices();
    reloadMessages();
    emit databaseChanged(path);
    return true;
}

void ChatController::setKvDiskBudget(qint64 bytes) {
    store_->kv().setDiskBudgetBytes(bytes);
    host_.setKvDiskBudget(bytes);
}

void ChatController::newConversation() {
    auto c = store_->createConversation(kNewChatTitle);
    if (!ok(c)) return;
    ok(conversations_.refresh());
    openConversation(c->id);
}

void ChatController::openConversation(qint64 id) {
    if (generating() && streaming_.conversationId != id) stop();
    current_ = id;
    reloadMessages();
    emit conversationOpened(id);
}

void ChatController::reloadMessages() {
    std::vector<MessageRow> rows;
    auto branch = current_ ? store_->activeBranch(current_) : Result<std::vector<Message>>{};
    if (!ok(branch)) return;
    rows.reserve(branch->size());
    for (const Message& m : *branch) {
        MessageRow r{m.id, QString::fromLatin1(messageRoleName(m.role)), fromStd(m.text)};
        if (auto sib = store_->siblings(m.id); sib && sib->size() > 1) {
            r.siblingCount = static_cast<int>(sib->size());
            for (size_t i = 0; i < sib->size(); ++i)
                if ((*sib)[i].id == m.id) r.siblingIndex = static_cast<int>(i);
        }
        if (m.id == streaming_.messageId) r.text = fromStd(streaming_.recorder->text()), r.streaming = true;
        rows.push_back(std::move(r));
    }
    messages_.setRows(std::move(rows));
}

void ChatController::renameConversation(qint64 id, const QString& title) {
    if (title.trimmed().isEmpty()) return;
    if (ok(store_->renameConversation(id, title.trimmed().toStdString()))) ok(conversations_.refresh());
}

void ChatController::deleteConversation(qint64 id) {
    if (streaming_.conversationId == id) {
        host_.stop(streaming_.ticket);
        endStreaming();  // nothing more is written to a deleted conversation
    }
    if (!ok(store_->deleteConversation(id))) return;
    ok(conversations_.refresh());
    if (current_ == id) {
        current_ = 0;
        messages_.setRows({});
        emit conversationOpened(0);
    }
}

void ChatController::search(const QString& text) { conversations_.setFilter(text); }

bool ChatController::send(const QString& text) {
    if (text.trimmed().isEmpty() || generating()) return false;
    if (current_ == 0) newConversation();
    if (current_ == 0) return false;
    auto conv = store_->conversation(current_);
    if (!ok(conv) || !*conv) return false;
    if ((*conv)->activeLeafId == 0 && fromStd((*conv)->title) == QLatin1String(kNewChatTitle))
        ok(store_->renameConversation(current_, titleFromMessage(text).toStdString()));
    messages_.removeNotices();
    auto user = store_->appendMessage(current_, (*conv)->activeLeafId, MessageRole::User, text.toStdString());
    if (!ok(user)) return false;
    return startReply(user->id);
}

// The conversation up to messageId as engine turns; empty replies (failed ones) are left out.
QList<ChatTurn> ChatController::turnsTo(qint64 messageId) {
    QList<ChatTurn> turns;
    auto branch = store_->branchTo(messageId);
    if (!ok(branch)) return turns;
    for (const Message& m : *branch)
        if (!(m.role == MessageRole::Assistant && m.text.empty()))
            turns.append({QString::fromLatin1(messageRoleName(m.role)), fromStd(m.text)});
    return turns;
}

bool ChatController::startReply(qint64 parentId) {
    QList<ChatTurn> turns = turnsTo(parentId);
    auto reply = store_->appendMessage(current_, parentId, MessageRole::Assistant, "", false);
    if (!ok(reply)) return false;
    if (model()) ok(store_->setModel(current_, model()->file.path.toStdString()));
    streaming_ = Streaming{0, reply->id, current_, ReplyRecorder(*store_, reply->id)};
    reloadMessages();
    ok(conversations_.refresh());
    lastRequest_ =
        ReplyRequest{0, std::move(turns), conversationSettings(), current_, toSpecOptions(settings_.engine().spec)};
    streaming_.ticket = host_.generate(lastRequest_);
    lastRequest_.ticket = streaming_.ticket;
    messages_.setStreaming(reply->id, true);
    emit generatingChanged(true);
    return true;
}

void ChatController::stop() {
    if (generating()) host_.stop(streaming_.ticket);
}

void ChatController::regenerate() {
    if (generating() || current_ == 0) return;
    for (int i = messages_.rowCount() - 1; i >= 0; --i) {
        const MessageRow* r = messages_.row(i);
        if (r->role == QLatin1String("user")) {
            messages_.removeNotices();
            startReply(r->id);  // a sibling of the previous reply
            return;
        }
    }
}

bool ChatController::editMessage(qint64 messageId, const QString& text) {
    if (generating() || text.trimmed().isEmpty()) return false;
    auto m = store_->message(messageId);
    if (!ok(m) || !*m || (*m)->role != MessageRole::User) return false;
    messages_.removeNotices();
    auto edited = store_->appendMessage(current_, (*m)->parentId, MessageRole::User, text.toStdString());
    return ok(edited) && startReply(edited->id);
}

void ChatController::switchBranch(qint64 messageId, int delta) {
    if (generating()) return;
    auto sib = store_->siblings(messageId);
    if (!ok(sib)) return;
    for (size_t i = 0; i < sib->size(); ++i) {
        if ((*sib)[i].id != messageId) continue;
        const auto j = static_cast<qsizetype>(i) + delta;
        if (j < 0 || j >= static_cast<qsizetype>(sib->size())) return;
        if (ok(store_->switchBranch((*sib)[static_cast<size_t>(j)].id))) reloadMessages();
        return;
    }
}

void ChatController::onText(quint64 ticket, const QString& text) {
    if (ticket != streaming_.ticket || ticket == 0) return;
    if (streaming_.conversationId == current_) messages_.appendText(streaming_.messageId, text);
    ok(streaming_.recorder->append(text.toStdString()));
}

void ChatController::onFinished(const ReplyStats& s) {
    if (s.ticket != streaming_.ticket || s.ticket == 0) return;
    ok(streaming_.recorder->finish(s.stored));
    if (s.finishReason == QLatin1String("context"))
        showError(
            tr("The reply stopped because the context window is full. Start a new conversation, "
               "or raise the context length in Settings → Engine."));
    endStreaming();
    emit replyFinished(s);
}

void ChatController::onFailed(quint64 ticket, const QString& message) {
    if (ticket != streaming_.ticket || ticket == 0) return;
    GenerationStats stats;
    stats.finishReason = "error";
    ok(streaming_.recorder->finish(stats));
    endStreaming();
    showError(message);
}

void ChatController::endStreaming() {
    const qint64 id = streaming_.messageId;
    streaming_ = Streaming{};
    messages_.setStreaming(id, false);
    ok(conversations_.refresh());
    emit generatingChanged(false);
}

ChatSettings ChatController::defaultSettings() const {
    return settings_.chatDefaults(model() ? model()->file.defaults : ChatSettings{});
}

ChatSettings ChatController::conversationSettings() const {
    ChatSettings s = defaultSettings();
    auto conv = current_ ? store_->conversation(current_) : Result<std::optional<Conversation>>{};
    if (!conv || !*conv) return s;
    s = fromJson(QJsonDocument::fromJson(QByteArray::fromStdString((*conv)->settingsJson)).object(), s);
    if (!(*conv)->systemPrompt.empty()) s.systemPrompt = fromStd((*conv)->systemPrompt);
    return s;
}

bool ChatController::hasOverrides() const { return !(conversationSettings() == defaultSettings()); }

void ChatController::setConversationSettings(const ChatSettings& s) {
    if (current_ == 0) newConversation();
    const ChatSettings base = defaultSettings();
    QJsonObject o = s == base ? QJsonObject{} : toJson(s);
    o.remove("system_prompt");
    ok(store_->setSettings(current_, QJsonDocument(o).toJson(QJsonDocument::Compact).toStdString()));
    ok(store_->setSystemPrompt(current_, s.systemPrompt == base.systemPrompt ? "" : s.systemPrompt.toStdString()));
}

void ChatController::resetConversationSettings() {
    if (current_ == 0) return;
    ok(store_->setSettings(current_, "{}"));
    ok(store_->setSystemPrompt(current_, ""));
}

}  // namespace hearth

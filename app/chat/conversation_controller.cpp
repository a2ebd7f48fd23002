// The conversation list over the store. A reply is tied to its ticket, not to the open
// conversation (see reply_controller.cpp): switching chats while it streams is safe, and
// deleting its conversation or replacing the database lets it go first.
#include "app/chat/conversation_controller.h"

#include <QFileInfo>
#include <algorithm>

#include "app/common/error_text.h"
#include "app/store/kv_block_store.h"

namespace hearth {

QString titleFromMessage(const QString& text) {
    QString line = text.trimmed().section(QLatin1Char('\n'), 0, 0).simplified();
    if (line.size() > 48) line = line.left(47).trimmed() + QChar(0x2026);
    return line;
}

ConversationController::ConversationController(ConversationStore& store, EngineHost& host, QObject* parent)
    : QObject(parent), store_(&store), host_(host), list_(store) {
    ok(list_.refresh());
    host_.useKvStore(KvStoreOptions{.path = QString::fromStdString(store_->path()),
                                    .diskBudgetBytes = store_->kv().diskBudgetBytes()});
}

// SQLite goes on reading a database file that was moved or deleted but refuses to write to
// it; the way forward is a copy of what was committed (ConversationStore::saveCopy).
void ConversationController::storeFailed(const Error& error) {
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

void ConversationController::showError(const QString& message, const QString& action, const QString& topic,
                                       const QString& details) {
    MessageRow row{.id = 0, .role = std::nullopt, .text = message};
    row.action = action;
    row.topic = topic;
    row.details = details;
    messages_.append(std::move(row));
}

QString ConversationController::databasePath() const { return QString::fromStdString(store_->path()); }

bool ConversationController::switchToCopy(const QString& path) {
    if (reply_ && reply_->replyConversation() != 0) reply_->abandon();  // the rest had nowhere to go
    auto saved = store_->saveCopy(path.toStdString());
    auto copy = saved ? ConversationStore::open(path.toStdString(), store_->kv().diskBudgetBytes())
                      : Result<std::unique_ptr<ConversationStore>>(std::unexpected(saved.error()));
    if (!copy) {
        showError(tr("Could not save a copy to %1: %2").arg(path, describe(copy.error())), QStringLiteral("save-copy"));
        return false;
    }
    copy_ = std::move(*copy);
    store_ = copy_.get();
    host_.useKvStore(KvStoreOptions{.path = path, .diskBudgetBytes = store_->kv().diskBudgetBytes()});
    ok(list_.setStore(*store_));
    messages_.removeNotices();
    reloadMessages();
    emit databaseChanged(path);
    return true;
}

void ConversationController::setKvDiskBudget(qint64 bytes) {
    store_->kv().setDiskBudgetBytes(bytes);
    host_.setKvDiskBudget(bytes);
}

void ConversationController::newConversation() {
    auto c = store_->createConversation({});  // untitled until its first message
    if (!ok(c)) return;
    ok(list_.refresh());
    openConversation(c->id);
}

void ConversationController::openConversation(qint64 id) {
    if (reply_ && reply_->replyConversation() != 0 && reply_->replyConversation() != id) reply_->stop();
    current_ = id;
    reloadMessages();
    emit conversationOpened(id);
}

void ConversationController::openAt(qint64 conversationId, qint64 messageId) {
    const bool writingThere = reply_ && reply_->replyConversation() == conversationId;
    if (messageId != 0 && !writingThere) {
        auto branch = store_->activeBranch(conversationId);
        const bool shown =
            branch && std::any_of(branch->begin(), branch->end(), [&](const Message& m) { return m.id == messageId; });
        if (!shown) ok(store_->switchBranch(messageId));
    }
    openConversation(conversationId);
    if (messageId != 0) emit messageFocused(messageId);
}

void ConversationController::reloadMessages() {
    std::vector<MessageRow> rows;
    auto branch = current_ ? store_->activeBranch(current_) : Result<std::vector<Message>>{};
    if (!ok(branch)) return;
    rows.reserve(branch->size());
    const qint64 streamed = reply_ ? reply_->replyMessage() : 0;
    contextUsed_ = 0;
    QString turnSources;  // the documents of the user turn a reply answers
    for (const Message& m : *branch) {
        MessageRow r{.id = m.id, .role = m.role, .text = QString::fromStdString(m.text)};
        if (m.role == ChatRole::User) turnSources = QString::fromStdString(m.documentsJson);
        if (m.role == ChatRole::Assistant) r.sources = turnSources, r.model = QString::fromStdString(m.model);
        if (auto sib = store_->siblings(m.id); sib && sib->size() > 1) {
            r.siblingCount = static_cast<int>(sib->size());
            for (size_t i = 0; i < sib->size(); ++i)
                if ((*sib)[i].id == m.id) r.siblingIndex = static_cast<int>(i);
        }
        if (streamed != 0 && m.id == streamed) r.text = reply_->replyText(), r.streaming = true;
        if (m.role == ChatRole::Assistant && !r.streaming) {
            if (m.stats.finishReason == "cancelled") r.ending = QStringLiteral("stopped");
            else if (!m.complete) r.ending = QStringLiteral("interrupted");
            if (m.stats.promptTokens + m.stats.generatedTokens > 0)
                contextUsed_ = m.stats.promptTokens + m.stats.generatedTokens;
        }
        rows.push_back(std::move(r));
    }
    messages_.setRows(std::move(rows));
}

void ConversationController::renameConversation(qint64 id, const QString& title) {
    if (title.trimmed().isEmpty()) return;
    if (ok(store_->renameConversation(id, title.trimmed().toStdString()))) ok(list_.refresh());
}

void ConversationController::deleteConversation(qint64 id) {
    if (reply_ && reply_->replyConversation() == id) reply_->abandon();  // nothing more is written to it
    if (!ok(store_->deleteConversation(id))) return;
    ok(list_.refresh());
    if (current_ == id) {
        current_ = 0;
        contextUsed_ = 0;
        messages_.setRows({});
        emit conversationOpened(0);
    }
}

void ConversationController::search(const QString& text) { list_.setFilter(text); }

}  // namespace hearth

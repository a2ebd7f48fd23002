// ConversationStore's messages: appending (each in its own committed transaction), streamed
// updates, branches (a path from a first message to a leaf) and switching between siblings.
#include "app/store/conversation_store.h"
#include "app/store/kill_point.h"
#include "app/store/sqlite_db.h"
#include "app/store/store_rows.h"
#include "engine/str_cat.h"

namespace hearth {

Result<Message> ConversationStore::appendMessage(int64_t conversationId, int64_t parentId, ChatRole role,
                                                 const std::string& text, bool complete, int64_t createdMs) {
    Transaction t(*db_);
    if (auto r = t.begin(); !r) return std::unexpected(r.error());
    if (parentId != 0) {
        auto parent = message(parentId);
        if (!parent) return std::unexpected(parent.error());
        if (!*parent || (*parent)->conversationId != conversationId)
            return fail(ErrorCode::InvalidArgument,
                        strCat("message ", parentId, " is not in conversation ", conversationId));
    }
    auto st = db_->prepare(
        "INSERT INTO messages(conversation_id, parent_id, role, text, complete, created_ms) VALUES(?, ?, ?, ?, ?, ?)");
    if (!st) return std::unexpected(st.error());
    st->bind(1, conversationId);
    if (parentId == 0) st->bindNull(2);
    else st->bind(2, parentId);
    st->bind(3, chatRoleName(role)).bind(4, std::string_view(text));
    st->bind(5, int64_t{complete ? 1 : 0}).bind(6, createdMs > 0 ? createdMs : storeNowMs());
    if (auto r = st->run(); !r) return std::unexpected(r.error());  // a missing conversation fails the foreign key
    const int64_t id = db_->lastInsertId();
    auto leaf = db_->prepare("UPDATE conversations SET active_leaf_id = ?, updated_ms = ? WHERE id = ?");
    if (!leaf) return std::unexpected(leaf.error());
    if (auto r = leaf->bind(1, id).bind(2, storeNowMs()).bind(3, conversationId).run(); !r)
        return std::unexpected(r.error());
    killPoint("message-commit");
    if (auto r = t.commit(); !r) return std::unexpected(r.error());
    auto m = message(id);
    if (!m) return std::unexpected(m.error());
    return **m;
}

Result<void> ConversationStore::updateMessage(int64_t messageId, const std::string& text, bool complete,
                                              const GenerationStats* stats) {
    auto st = db_->prepare(stats ? "UPDATE messages SET text = ?, complete = ?, stats_json = ? WHERE id = ?"
                                 : "UPDATE messages SET text = ?, complete = ? WHERE id = ?");
    if (!st) return std::unexpected(st.error());
    st->bind(1, std::string_view(text)).bind(2, int64_t{complete ? 1 : 0});
    if (stats) st->bind(3, std::string_view(statsToJson(*stats))).bind(4, messageId);
    else st->bind(3, messageId);
    if (auto r = st->run(); !r) return r;
    if (db_->changes() == 0) return fail(ErrorCode::InvalidArgument, strCat("no message ", messageId));
    auto m = message(messageId);
    if (!m) return std::unexpected(m.error());
    return touch((*m)->conversationId);
}

Result<void> ConversationStore::setMessageModel(int64_t messageId, const std::string& model) {
    auto st = db_->prepare("UPDATE messages SET model = ? WHERE id = ?");
    if (!st) return std::unexpected(st.error());
    st->bind(1, std::string_view(model)).bind(2, messageId);
    if (auto r = st->run(); !r) return r;
    if (db_->changes() == 0) return fail(ErrorCode::InvalidArgument, strCat("no message ", messageId));
    return {};
}

Result<std::optional<Message>> ConversationStore::message(int64_t messageId) const {
    auto all = readMessages(*db_, strCat(kMessageSelect, " WHERE id = ?1"), messageId);
    if (!all) return std::unexpected(all.error());
    if (all->empty()) return std::optional<Message>();
    return std::optional<Message>(all->front());
}

Result<std::vector<Message>> ConversationStore::branchTo(int64_t messageId) const {
    // A child is always inserted after its parent, so ids increase along a branch. UNION, not
    // UNION ALL: a damaged file whose parents form a cycle must not make the walk endless.
    const std::string sql = strCat(
        "WITH RECURSIVE up(id) AS (SELECT ?1 UNION SELECT m.parent_id FROM messages m JOIN up ON m.id = up.id"
        " WHERE m.parent_id IS NOT NULL) ",
        kMessageSelect, " WHERE id IN (SELECT id FROM up) ORDER BY id");
    auto branch = readMessages(*db_, sql, messageId);
    if (!branch || branch->empty()) return branch;
    // Found by fuzzing (fuzz/regressions/store): a cycle, a missing parent or a parent in another
    // conversation is a damaged file, said as such, never a wrong or endless branch.
    const std::vector<Message>& b = *branch;
    for (size_t i = 0; i < b.size(); ++i) {
        const bool linked = i == 0 ? b[i].parentId == 0 : b[i].parentId == b[i - 1].id;
        if (!linked || b[i].conversationId != b.front().conversationId || b.back().id != messageId)
            return fail(ErrorCode::InvalidFormat,
                        strCat(db_->path(), ": the messages leading to message ", messageId,
                               " do not form a chain from a first message (the database is damaged)"));
    }
    return branch;
}

Result<std::vector<Message>> ConversationStore::activeBranch(int64_t conversationId) const {
    auto c = conversation(conversationId);
    if (!c) return std::unexpected(c.error());
    if (!*c) return fail(ErrorCode::InvalidArgument, strCat("no conversation ", conversationId));
    if ((*c)->activeLeafId == 0) return std::vector<Message>();
    return branchTo((*c)->activeLeafId);
}

Result<std::vector<Message>> ConversationStore::messages(int64_t conversationId) const {
    return readMessages(*db_, strCat(kMessageSelect, " WHERE conversation_id = ?1 ORDER BY id"), conversationId);
}

Result<std::vector<Message>> ConversationStore::siblings(int64_t messageId) const {
    const std::string sql = strCat(kMessageSelect,
                                   " WHERE conversation_id = (SELECT conversation_id FROM messages WHERE id = ?1)"
                                   " AND parent_id IS (SELECT parent_id FROM messages WHERE id = ?1) ORDER BY id");
    return readMessages(*db_, sql, messageId);
}

Result<void> ConversationStore::switchBranch(int64_t messageId) {
    auto m = message(messageId);
    if (!m) return std::unexpected(m.error());
    if (!*m) return fail(ErrorCode::InvalidArgument, strCat("no message ", messageId));
    int64_t leaf = messageId;
    while (true) {  // down through the most recent child
        // id > leaf: children come after their parent; in a damaged file this still ends.
        auto st = db_->prepare(strCat("SELECT max(id) FROM messages WHERE parent_id = ", leaf, " AND id > ", leaf));
        if (!st) return std::unexpected(st.error());
        auto row = st->step();
        if (!row) return std::unexpected(row.error());
        if (!*row || st->isNull(0)) break;
        leaf = st->int64(0);
    }
    auto st = db_->prepare("UPDATE conversations SET active_leaf_id = ?, updated_ms = ? WHERE id = ?");
    if (!st) return std::unexpected(st.error());
    return st->bind(1, leaf).bind(2, storeNowMs()).bind(3, (*m)->conversationId).run();
}

}  // namespace hearth

// ConversationStore's messages: appending (each in its own committed transaction), streamed
// updates, branches (a path from a first message to a leaf), switching between siblings (each
// branch remembering the leaf it showed) and search with where each conversation matched.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

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

namespace {

// The messages from id up to the first one of its branch (id itself included); UNION stops at
// a cycle of a damaged file.
Result<std::unordered_set<int64_t>> pathUp(SqliteDb& db, int64_t id) {
    auto st = db.prepare(
        "WITH RECURSIVE up(id) AS (SELECT ?1 UNION SELECT m.parent_id FROM messages m JOIN up ON m.id = up.id"
        " WHERE m.parent_id IS NOT NULL) SELECT id FROM up");
    if (!st) return std::unexpected(st.error());
    st->bind(1, id);
    std::unordered_set<int64_t> ids;
    while (true) {
        auto row = st->step();
        if (!row) return std::unexpected(row.error());
        if (!*row) return ids;
        ids.insert(st->int64(0));
    }
}

Result<int64_t> queryId(SqliteDb& db, const std::string& sql) {
    auto st = db.prepare(sql);
    if (!st) return std::unexpected(st.error());
    auto row = st->step();
    if (!row) return std::unexpected(row.error());
    return *row && !st->isNull(0) ? st->int64(0) : 0;
}

}  // namespace

// The leaf shown below m: the one remembered when the user last left m's branch, while it
// still lies below m; else down through the most recent child.
Result<int64_t> ConversationStore::leafBelow(const Message& m) const {
    auto left = queryId(*db_, strCat("SELECT left_leaf_id FROM messages WHERE id = ", m.id));
    if (!left) return left;
    if (*left != 0) {
        auto up = pathUp(*db_, *left);
        if (!up) return std::unexpected(up.error());
        auto leaf = message(*left);
        if (!leaf) return std::unexpected(leaf.error());
        if (up->count(m.id) && *leaf && (*leaf)->conversationId == m.conversationId) return *left;
    }
    int64_t leaf = m.id;
    while (true) {
        // id > leaf: children come after their parent; in a damaged file this still ends.
        auto child = queryId(*db_, strCat("SELECT max(id) FROM messages WHERE parent_id = ", leaf, " AND id > ", leaf));
        if (!child) return child;
        if (*child == 0) return leaf;
        leaf = *child;
    }
}

Result<void> ConversationStore::switchBranch(int64_t messageId) {
    auto m = message(messageId);
    if (!m) return std::unexpected(m.error());
    if (!*m) return fail(ErrorCode::InvalidArgument, strCat("no message ", messageId));
    auto c = conversation((*m)->conversationId);
    if (!c) return std::unexpected(c.error());
    Transaction t(*db_);
    if (auto r = t.begin(); !r) return r;
    // The branch left is the first message of the shown path that is not on the way to
    // messageId (a sibling of it, or of one of its ancestors): it remembers the leaf shown now.
    // A damaged chain remembers nothing; the switch itself does not need it.
    const int64_t shown = *c ? (*c)->activeLeafId : 0;
    auto target = pathUp(*db_, messageId);
    if (!target) return std::unexpected(target.error());
    if (auto path = shown != 0 ? branchTo(shown) : Result<std::vector<Message>>{}; path) {
        auto left = std::find_if(path->begin(), path->end(), [&](const Message& p) { return !target->count(p.id); });
        if (left != path->end()) {
            auto st = db_->prepare("UPDATE messages SET left_leaf_id = ? WHERE id = ?");
            if (!st) return std::unexpected(st.error());
            if (auto r = st->bind(1, shown).bind(2, left->id).run(); !r) return r;
        }
    }
    auto leaf = leafBelow(**m);
    if (!leaf) return std::unexpected(leaf.error());
    auto st = db_->prepare("UPDATE conversations SET active_leaf_id = ? WHERE id = ?");
    if (!st) return std::unexpected(st.error());
    if (auto r = st->bind(1, *leaf).bind(2, (*m)->conversationId).run(); !r) return r;
    return t.commit();
}

// instr() over lower(): the same match as searchConversations. Each conversation's hits come
// oldest first; the first on the active branch is the one shown, else the first of all.
Result<std::vector<SearchHit>> ConversationStore::searchMessages(const std::string& text) const {
    auto found = searchConversations(text);
    if (!found) return std::unexpected(found.error());
    auto st = db_->prepare(
        "SELECT conversation_id, id FROM messages WHERE instr(lower(text), lower(?1)) > 0"
        " ORDER BY conversation_id, id");
    if (!st) return std::unexpected(st.error());
    st->bind(1, std::string_view(text));
    std::unordered_map<int64_t, std::vector<int64_t>> conversationToHits;
    while (true) {
        auto row = st->step();
        if (!row) return std::unexpected(row.error());
        if (!*row) break;
        conversationToHits[st->int64(0)].push_back(st->int64(1));
    }
    std::vector<SearchHit> out;
    out.reserve(found->size());
    for (Conversation& c : *found) {
        SearchHit hit{.conversation = std::move(c)};
        if (auto it = conversationToHits.find(hit.conversation.id); it != conversationToHits.end()) {
            auto active = hit.conversation.activeLeafId != 0 ? pathUp(*db_, hit.conversation.activeLeafId)
                                                             : Result<std::unordered_set<int64_t>>{};
            if (!active) return std::unexpected(active.error());
            auto onActive =
                std::find_if(it->second.begin(), it->second.end(), [&](int64_t id) { return active->count(id) > 0; });
            hit.messageId = onActive != it->second.end() ? *onActive : it->second.front();
            hit.inActiveBranch = onActive != it->second.end();
            auto m = message(hit.messageId);
            if (!m) return std::unexpected(m.error());
            if (*m) hit.messageText = (*m)->text;
        }
        out.push_back(std::move(hit));
    }
    return out;
}

}  // namespace hearth

// Attachments over SQLite. The passages live once, in attachment_passages; passage_index is an
// external-content FTS5 table over them (https://sqlite.org/fts5.html, "External Content
// Tables"), kept in step by the schema's triggers - also when a conversation's delete cascades.
#include "app/store/attachment_store.h"

#include "app/store/sqlite_db.h"
#include "app/store/store_rows.h"
#include "engine/str_cat.h"

namespace hearth {

Result<Attachment> AttachmentStore::add(int64_t conversationId, const std::string& name, const std::string& kind,
                                        const std::string& text, int64_t createdMs) {
    const std::vector<std::string> passages = splitPassages(text);
    if (passages.empty()) return fail(ErrorCode::InvalidArgument, strCat(name, ": the document is empty"));
    Attachment a{.id = 0,
                 .conversationId = conversationId,
                 .name = name,
                 .kind = kind,
                 .tokens = estimateTokens(text),
                 .passages = static_cast<int32_t>(passages.size()),
                 .createdMs = createdMs > 0 ? createdMs : storeNowMs()};
    Transaction t(db_);
    if (auto r = t.begin(); !r) return std::unexpected(r.error());
    auto st =
        db_.prepare("INSERT INTO attachments(conversation_id, name, kind, tokens, created_ms) VALUES(?, ?, ?, ?, ?)");
    if (!st) return std::unexpected(st.error());
    st->bind(1, conversationId).bind(2, std::string_view(name)).bind(3, std::string_view(kind));
    st->bind(4, int64_t{a.tokens}).bind(5, a.createdMs);
    if (auto r = st->run(); !r) {  // a missing conversation fails the foreign key
        auto exists = db_.queryInt(strCat("SELECT count(*) FROM conversations WHERE id = ", conversationId));
        if (exists && *exists == 0) return fail(ErrorCode::InvalidArgument, strCat("no conversation ", conversationId));
        return std::unexpected(r.error());
    }
    a.id = db_.lastInsertId();
    auto insert = db_.prepare("INSERT INTO attachment_passages(attachment_id, ordinal, text) VALUES(?, ?, ?)");
    if (!insert) return std::unexpected(insert.error());
    for (size_t i = 0; i < passages.size(); ++i) {
        insert->reset();
        insert->bind(1, a.id).bind(2, static_cast<int64_t>(i + 1)).bind(3, std::string_view(passages[i]));
        if (auto r = insert->run(); !r) return std::unexpected(r.error());
    }
    if (auto r = t.commit(); !r) return std::unexpected(r.error());
    return a;
}

Result<std::vector<Attachment>> AttachmentStore::list(int64_t conversationId) const {
    auto st = db_.prepare(
        "SELECT id, conversation_id, name, kind, tokens, created_ms,"
        " (SELECT count(*) FROM attachment_passages WHERE attachment_id = attachments.id)"
        " FROM attachments WHERE conversation_id = ? ORDER BY id");
    if (!st) return std::unexpected(st.error());
    st->bind(1, conversationId);
    std::vector<Attachment> out;
    while (true) {
        auto row = st->step();
        if (!row) return std::unexpected(row.error());
        if (!*row) return out;
        out.push_back(Attachment{.id = st->int64(0),
                                 .conversationId = st->int64(1),
                                 .name = st->text(2),
                                 .kind = st->text(3),
                                 .tokens = static_cast<int32_t>(st->int64(4)),
                                 .passages = static_cast<int32_t>(st->int64(6)),
                                 .createdMs = st->int64(5)});
    }
}

Result<std::string> AttachmentStore::text(int64_t attachmentId) const {
    auto st = db_.prepare("SELECT text FROM attachment_passages WHERE attachment_id = ? ORDER BY ordinal");
    if (!st) return std::unexpected(st.error());
    st->bind(1, attachmentId);
    std::string out;
    while (true) {
        auto row = st->step();
        if (!row) return std::unexpected(row.error());
        if (!*row) return out;
        out += st->text(0);
    }
}

Result<void> AttachmentStore::remove(int64_t attachmentId) {
    auto st = db_.prepare("DELETE FROM attachments WHERE id = ?");
    if (!st) return std::unexpected(st.error());
    if (auto r = st->bind(1, attachmentId).run(); !r) return r;
    if (db_.changes() == 0) return fail(ErrorCode::InvalidArgument, strCat("no attachment ", attachmentId));
    return {};
}

Result<std::vector<FoundPassage>> AttachmentStore::search(int64_t conversationId, const std::string& question,
                                                          int limit, const std::vector<int64_t>& among) const {
    std::vector<FoundPassage> out;
    const std::string match = passageQuery(question);
    if (match.empty() || limit <= 0) return out;
    std::string filter;
    if (!among.empty()) {
        filter = " AND a.id IN (";
        for (size_t i = 0; i < among.size(); ++i) filter += strCat(i ? "," : "", among[i]);
        filter += ")";
    }
    // bm25() needs the FTS5 table in the query that MATCHes it; the join keeps the other
    // conversations' passages out of the result.
    auto st =
        db_.prepare(strCat("SELECT a.id, a.name, p.ordinal, p.text, bm25(passage_index) AS score"
                           " FROM passage_index JOIN attachment_passages p ON p.id = passage_index.rowid"
                           " JOIN attachments a ON a.id = p.attachment_id"
                           " WHERE passage_index MATCH ?1 AND a.conversation_id = ?2",
                           filter, " ORDER BY score, p.id LIMIT ?3"));
    if (!st) return std::unexpected(st.error());
    st->bind(1, std::string_view(match)).bind(2, conversationId).bind(3, int64_t{limit});
    while (true) {
        auto row = st->step();
        if (!row) return std::unexpected(row.error());
        if (!*row) return out;
        out.push_back(FoundPassage{.attachmentId = st->int64(0),
                                   .name = st->text(1),
                                   .ordinal = static_cast<int32_t>(st->int64(2)),
                                   .text = st->text(3),
                                   .score = st->real(4)});
    }
}

Result<void> AttachmentStore::setTurnSources(int64_t messageId, const std::string& sourcesJson) {
    auto st = db_.prepare("INSERT OR REPLACE INTO turn_documents(message_id, sources_json) VALUES(?, ?)");
    if (!st) return std::unexpected(st.error());
    return st->bind(1, messageId).bind(2, std::string_view(sourcesJson)).run();
}

Result<int64_t> AttachmentStore::indexBytes() const {
    // The shadow tables FTS5 keeps for passage_index (its content is attachment_passages).
    return db_.queryInt(
        "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN"
        " ('passage_index_data', 'passage_index_idx', 'passage_index_docsize', 'passage_index_config')");
}

}  // namespace hearth

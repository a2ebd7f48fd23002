// Schema versions and the steps between them. v1: conversations, messages (a tree), KV roots,
// blocks and which conversation uses which. v2: conversations.kv_used_ms (the budget's LRU)
// and the model fingerprint cache by (path, size, mtime). v3: attachments, their passages with
// an FTS5 trigram index, and the documents each user turn carried. v4: messages.model (the
// readable name of the model that wrote a reply), and untitled chats stored with an empty title.
// v5: messages.left_leaf_id, the leaf a branch showed when the user switched away from it (so
// switching back restores it).
#include "app/store/schema.h"

#include "app/store/sqlite_db.h"
#include "engine/str_cat.h"

namespace hearth {
namespace {

constexpr const char* kV1 = R"sql(
CREATE TABLE conversations(
  id INTEGER PRIMARY KEY,
  handle TEXT UNIQUE,
  title TEXT NOT NULL,
  model TEXT NOT NULL DEFAULT '',
  system_prompt TEXT NOT NULL DEFAULT '',
  settings_json TEXT NOT NULL DEFAULT '{}',
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  active_leaf_id INTEGER REFERENCES messages(id) ON DELETE SET NULL);
CREATE TABLE messages(
  id INTEGER PRIMARY KEY,
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  parent_id INTEGER REFERENCES messages(id) ON DELETE CASCADE,
  role TEXT NOT NULL CHECK(role IN ('system', 'user', 'assistant')),
  text TEXT NOT NULL,
  complete INTEGER NOT NULL DEFAULT 1,
  created_ms INTEGER NOT NULL,
  stats_json TEXT NOT NULL DEFAULT '{}');
CREATE INDEX messages_by_parent ON messages(conversation_id, parent_id);
CREATE TABLE kv_roots(
  root_key BLOB PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  layout TEXT NOT NULL,
  backend TEXT NOT NULL,
  numerics INTEGER NOT NULL);
CREATE TABLE kv_blocks(
  block_key BLOB PRIMARY KEY,
  root_key BLOB NOT NULL REFERENCES kv_roots(root_key),
  parent_key BLOB NOT NULL,
  position INTEGER NOT NULL,
  tokens BLOB NOT NULL,
  data BLOB NOT NULL,
  checksum INTEGER NOT NULL,
  created_ms INTEGER NOT NULL);
CREATE TABLE conversation_kv(
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  block_key BLOB NOT NULL REFERENCES kv_blocks(block_key) ON DELETE CASCADE,
  PRIMARY KEY(conversation_id, block_key)) WITHOUT ROWID;
CREATE INDEX conversation_kv_by_block ON conversation_kv(block_key);
)sql";

constexpr const char* kV2 = R"sql(
ALTER TABLE conversations ADD COLUMN kv_used_ms INTEGER NOT NULL DEFAULT 0;
CREATE TABLE model_fingerprints(
  path TEXT PRIMARY KEY,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  fingerprint TEXT NOT NULL);
)sql";

// The index is an external-content FTS5 table over attachment_passages (the text is stored
// once); the triggers keep it in step, and fire for rows a conversation's delete cascades to.
constexpr const char* kV3 = R"sql(
CREATE TABLE attachments(
  id INTEGER PRIMARY KEY,
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  created_ms INTEGER NOT NULL);
CREATE INDEX attachments_by_conversation ON attachments(conversation_id);
CREATE TABLE attachment_passages(
  id INTEGER PRIMARY KEY,
  attachment_id INTEGER NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  text TEXT NOT NULL);
CREATE INDEX attachment_passages_by_attachment ON attachment_passages(attachment_id, ordinal);
CREATE VIRTUAL TABLE passage_index USING fts5(text, content='attachment_passages', content_rowid='id',
  tokenize='trigram');
CREATE TRIGGER attachment_passages_indexed AFTER INSERT ON attachment_passages BEGIN
  INSERT INTO passage_index(rowid, text) VALUES(new.id, new.text);
END;
CREATE TRIGGER attachment_passages_unindexed AFTER DELETE ON attachment_passages BEGIN
  INSERT INTO passage_index(passage_index, rowid, text) VALUES('delete', old.id, old.text);
END;
CREATE TABLE turn_documents(
  message_id INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
  sources_json TEXT NOT NULL);
)sql";

// Replies name their model (older replies: '', unknown). A chat without a message was stored as
// "New chat" in English, whatever the interface's language; it is now stored untitled and shown
// as "New chat" in the language of the moment. Chats with messages keep their titles.
constexpr const char* kV4 = R"sql(
ALTER TABLE messages ADD COLUMN model TEXT NOT NULL DEFAULT '';
UPDATE conversations SET title = '' WHERE title = 'New chat' AND active_leaf_id IS NULL;
)sql";

// Additive: 0 is "none recorded" (the branch then opens at its newest message, as before).
constexpr const char* kV5 = R"sql(
ALTER TABLE messages ADD COLUMN left_leaf_id INTEGER NOT NULL DEFAULT 0;
)sql";

Result<void> step(SqliteDb& db, int to) {
    Transaction t(db);
    if (auto r = t.begin(); !r) return r;
    const char* const steps[] = {kV1, kV2, kV3, kV4, kV5};
    if (auto r = db.exec(steps[to - 1]); !r) return r;
    if (auto r = db.exec(strCat("PRAGMA user_version = ", to)); !r) return r;
    return t.commit();
}

}  // namespace

Result<void> prepareSchema(SqliteDb& db, int target) {
    // Reading user_version is the first read of the file: a non-database fails here.
    auto version = db.queryInt("PRAGMA user_version");
    if (!version) return std::unexpected(version.error());
    if (*version > kSchemaVersion)
        return fail(ErrorCode::InvalidFormat,
                    strCat(db.path(), ": schema version ", *version, " is newer than this Hearth knows (",
                           kSchemaVersion, ")"));
    // user_version is a signed field of the header that Hearth only ever sets to 0..kSchemaVersion:
    // a negative one is a damaged or foreign file (fuzz_store found one), not a version to migrate.
    if (*version < 0)
        return fail(ErrorCode::InvalidFormat,
                    strCat(db.path(), ": schema version ", *version, " is not one Hearth writes (damaged file?)"));
    // auto_vacuum must be set before the first table exists.
    // 16 KiB pages: KV blocks are blobs of hundreds of KiB, read as chains of overflow pages.
    if (*version == 0)
        for (const char* pragma : {"PRAGMA page_size = 16384", "PRAGMA auto_vacuum = INCREMENTAL"})
            if (auto r = db.exec(pragma); !r) return r;
    for (const char* pragma : {"PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON"})
        if (auto r = db.exec(pragma); !r) return r;
    for (int v = static_cast<int>(*version) + 1; v <= target; ++v)
        if (auto r = step(db, v); !r) return r;
    return {};
}

}  // namespace hearth

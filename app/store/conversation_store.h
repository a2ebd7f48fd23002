// ConversationStore: one SQLite database (SQLite C API) of conversations, their messages as a
// tree (edits and regenerations are sibling branches, one active), per-chat settings and, via
// kv(), saved KV blocks. Plain C++, no Qt; one object per thread; every write commits at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/error.h"
#include "engine/tokenizer/chat_role.h"

namespace hearth {

class AttachmentStore;
class KvBlockStore;
class SqliteDb;

struct Conversation {
    int64_t id = 0;
    std::string handle;  // the CLI's --conversation string; empty when none was given
    std::string title;
    std::string model;  // the model file last used with it (may be empty)
    std::string systemPrompt;
    std::string settingsJson = "{}";  // per-chat sampling parameters, a JSON object's text
    int64_t createdMs = 0;  // Unix time, milliseconds
    int64_t updatedMs = 0;  // when its last message was written (created, before any); renames leave it
    int64_t activeLeafId = 0;  // last message of the active branch; 0 when it has none
};

// How an assistant reply was generated (zeros for other messages).
struct GenerationStats {
    int32_t promptTokens = 0;
    int32_t generatedTokens = 0;
    int32_t prefixCacheHitTokens = 0;
    int32_t kvRestoredTokens = 0;
    double ttftMs = 0;
    double prefillTokensPerSecond = 0;
    double decodeTokensPerSecond = 0;
    std::string finishReason;  // "eos", "length", ...; empty while streaming
};

struct Message {
    int64_t id = 0;
    int64_t conversationId = 0;
    int64_t parentId = 0;  // 0: first message of its conversation
    ChatRole role = ChatRole::User;
    std::string text;
    bool complete = true;  // false while a reply streams (or when a crash cut it short)
    int64_t createdMs = 0;
    GenerationStats stats;
    // A user message's documents: the sources JSON (app/docs/passages.h) of the documents and
    // passages that went into its turn, before the text; "" when none.
    std::string documentsJson = {};
    // An assistant reply's model, by its readable name (or a remote server's model name), as
    // recorded when the reply began; "" for other messages and replies older than schema v4.
    std::string model = {};
};

// A conversation search found, and where: the first message holding the text, one of the
// active branch's when it has any; messageId 0 when only the title holds it.
struct SearchHit {
    Conversation conversation;
    int64_t messageId = 0;
    std::string messageText = {};
    bool inActiveBranch = true;  // false: the message is in a branch not shown
};

class ConversationStore {
public:
    static constexpr int64_t kDefaultDiskBudgetBytes = int64_t{2} << 30;  // 2 GiB

    // Opens (creating when absent) and migrates the database. A file that is not a readable
    // Hearth database gives InvalidFormat (or Io) with a message naming the file and the way
    // forward (another --db, or moveAside()); the file is left untouched.
    static Result<std::unique_ptr<ConversationStore>> open(const std::string& path,
                                                           int64_t diskBudgetBytes = kDefaultDiskBudgetBytes);
    // Renames a damaged database (and its -wal/-shm files) to PATH.damaged-YYYYmmdd-HHMMSS so
    // that open(path) starts fresh. Returns the new name of the main file.
    static Result<std::string> moveAside(const std::string& path);
    // The same over an in-memory copy of a database file's bytes (sqlite3_deserialize): what
    // the fuzzer and tests use to open a database built or damaged in memory. Nothing touches
    // the disk; the budget counts no file. Errors: those of open().
    static Result<std::unique_ptr<ConversationStore>> openImage(std::span<const uint8_t> image,
                                                                int64_t diskBudgetBytes = kDefaultDiskBudgetBytes);
    // The database as the bytes of a database file (sqlite3_serialize; an in-memory one's).
    Result<std::vector<uint8_t>> serialize();
    // Writes everything committed to a new database file at path (VACUUM INTO), also when this
    // one's file was deleted or moved while open: the way to keep what a user wrote. Errors: Io.
    Result<void> saveCopy(const std::string& path);
    ~ConversationStore();
    ConversationStore(const ConversationStore&) = delete;
    ConversationStore& operator=(const ConversationStore&) = delete;

    const std::string& path() const { return path_; }

    // Conversations. list and search: the most recent message first (updatedMs).
    Result<Conversation> createConversation(const std::string& title, const std::string& systemPrompt = {},
                                            const std::string& handle = {});
    Result<std::vector<Conversation>> listConversations() const;
    Result<std::vector<Conversation>> searchConversations(const std::string& text) const;  // titles and message text
    Result<std::vector<SearchHit>> searchMessages(const std::string& text) const;  // the same, with where each matched
    Result<std::optional<Conversation>> conversation(int64_t id) const;
    Result<std::optional<Conversation>> conversationByHandle(const std::string& handle) const;
    Result<void> renameConversation(int64_t id, const std::string& title);
    Result<void> setSystemPrompt(int64_t id, const std::string& systemPrompt);
    Result<void> setModel(int64_t id, const std::string& model);
    Result<void> setSettings(int64_t id, const std::string& settingsJson);  // must be a JSON object's text
    // Deletes its messages and attachments too; KV blocks no other conversation uses are freed.
    Result<void> deleteConversation(int64_t id);

    // Messages. appendMessage makes the new message the active leaf; parentId 0 starts a root
    // (another root is a sibling branch of the first message). createdMs 0: now (an import
    // gives the original time).
    Result<Message> appendMessage(int64_t conversationId, int64_t parentId, ChatRole role, const std::string& text,
                                  bool complete = true, int64_t createdMs = 0);
    // A streamed reply's text so far (complete=false) or final text with its statistics.
    Result<void> updateMessage(int64_t messageId, const std::string& text, bool complete,
                               const GenerationStats* stats = nullptr);
    // Records the model that writes a reply (Message::model).
    Result<void> setMessageModel(int64_t messageId, const std::string& model);
    Result<std::optional<Message>> message(int64_t messageId) const;
    Result<std::vector<Message>> activeBranch(int64_t conversationId) const;  // first message .. active leaf
    // Every message of every branch, oldest first (a parent before its children).
    Result<std::vector<Message>> messages(int64_t conversationId) const;
    Result<std::vector<Message>> branchTo(int64_t messageId) const;  // first message .. messageId
    // Messages with the same parent (itself included), oldest first: the branches to switch between.
    Result<std::vector<Message>> siblings(int64_t messageId) const;
    // Activates the branch through messageId, down to the leaf it showed when the user last
    // switched away from it, else to its most recent descendant. The sibling branch left
    // remembers its leaf in turn (messages.left_leaf_id). Leaves updatedMs as it is.
    Result<void> switchBranch(int64_t messageId);

    // KV blocks and the disk budget (kv_block_store.h).
    KvBlockStore& kv() { return *kv_; }
    // Attached documents and the documents of each turn (attachment_store.h).
    AttachmentStore& attachments() { return *attachments_; }
    const AttachmentStore& attachments() const { return *attachments_; }

private:
    ConversationStore(std::string path, std::unique_ptr<SqliteDb> db, int64_t diskBudgetBytes);
    static Result<std::unique_ptr<ConversationStore>> openDb(Result<std::unique_ptr<SqliteDb>> db,
                                                             const std::string& path, int64_t diskBudgetBytes);
    Result<void> touch(int64_t conversationId);
    Result<int64_t> leafBelow(const Message& m) const;

    std::string path_;
    std::unique_ptr<SqliteDb> db_;
    std::unique_ptr<KvBlockStore> kv_;
    std::unique_ptr<AttachmentStore> attachments_;
};

}  // namespace hearth

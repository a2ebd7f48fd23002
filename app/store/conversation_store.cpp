// ConversationStore over SQLite: opening (with the way forward for a damaged file), the
// conversation rows and the settings. Messages live in message_store.cpp.
#include "app/store/conversation_store.h"

#include <QJsonDocument>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "app/store/attachment_store.h"
#include "app/store/kv_block_store.h"
#include "app/store/schema.h"
#include "app/store/sqlite_db.h"
#include "app/store/store_rows.h"
#include "engine/str_cat.h"

namespace hearth {

int64_t storeNowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

ConversationStore::ConversationStore(std::string path, std::unique_ptr<SqliteDb> db, int64_t diskBudgetBytes)
    : path_(std::move(path)),
      db_(std::move(db)),
      kv_(std::make_unique<KvBlockStore>(*db_, diskBudgetBytes)),
      attachments_(std::make_unique<AttachmentStore>(*db_)) {}

ConversationStore::~ConversationStore() = default;

Result<std::unique_ptr<ConversationStore>> ConversationStore::open(const std::string& path, int64_t diskBudgetBytes) {
    return openDb(SqliteDb::open(path), path, diskBudgetBytes);
}

Result<std::unique_ptr<ConversationStore>> ConversationStore::openImage(std::span<const uint8_t> image,
                                                                        int64_t diskBudgetBytes) {
    const std::string name = "(in-memory database image)";
    return openDb(SqliteDb::openImage(image, name), name, diskBudgetBytes);
}

Result<std::vector<uint8_t>> ConversationStore::serialize() { return db_->serialize(); }

Result<void> ConversationStore::saveCopy(const std::string& path) {
    std::string quoted = "'";
    for (const char ch : path) quoted += ch == '\'' ? std::string("''") : std::string(1, ch);
    return db_->exec(strCat("VACUUM INTO ", quoted, "'"));
}

Result<std::unique_ptr<ConversationStore>> ConversationStore::openDb(Result<std::unique_ptr<SqliteDb>> db,
                                                                     const std::string& path, int64_t diskBudgetBytes) {
    Result<void> ready = db ? prepareSchema(**db) : Result<void>(std::unexpected(db.error()));
    if (ready) {
        auto check = (*db)->queryInt("SELECT count(*) FROM conversations");  // a first real read
        if (!check) ready = std::unexpected(check.error());
    }
    if (!ready) {
        Error e = ready.error();
        const bool full = e.message.find("The disk is full") != std::string::npos;  // its own way forward
        const std::string way = full ? std::string()
            : e.code == ErrorCode::InvalidFormat
            ? strCat("Open another one (--db PATH) or move this file aside (it is kept, renamed to ", path,
                     ".damaged-...) and start fresh.")
            : "Check that the folder exists and can be written, or open another one (--db PATH).";
        e.message = strCat("cannot open the conversation database ", path, ": ", e.message, full ? "" : ". ", way);
        return std::unexpected(e);
    }
    return std::unique_ptr<ConversationStore>(new ConversationStore(path, std::move(*db), diskBudgetBytes));
}

Result<std::string> ConversationStore::moveAside(const std::string& path) {
    char stamp[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    const std::string target = strCat(path, ".damaged-", stamp);
    std::error_code ec;
    std::filesystem::rename(path, target, ec);
    if (ec) return fail(ErrorCode::Io, strCat("cannot rename ", path, " to ", target, ": ", ec.message()));
    for (const char* suffix : {"-wal", "-shm"}) {
        const std::string side = path + suffix;
        if (std::filesystem::exists(side, ec)) std::filesystem::rename(side, target + suffix, ec);
    }
    return target;
}

Result<Conversation> ConversationStore::createConversation(const std::string& title, const std::string& systemPrompt,
                                                           const std::string& handle) {
    auto st = db_->prepare(
        "INSERT INTO conversations(handle, title, system_prompt, created_ms, updated_ms) VALUES(?, ?, ?, ?, ?)");
    if (!st) return std::unexpected(st.error());
    const int64_t now = storeNowMs();
    if (handle.empty()) st->bindNull(1);
    else st->bind(1, std::string_view(handle));
    st->bind(2, std::string_view(title)).bind(3, std::string_view(systemPrompt)).bind(4, now).bind(5, now);
    if (auto r = st->run(); !r) return std::unexpected(r.error());
    auto c = conversation(db_->lastInsertId());
    if (!c) return std::unexpected(c.error());
    return **c;
}

Result<std::vector<Conversation>> ConversationStore::listConversations() const {
    return readConversations(*db_, strCat(kConversationSelect, " ORDER BY updated_ms DESC, id DESC"), {});
}

Result<std::vector<Conversation>> ConversationStore::searchConversations(const std::string& text) const {
    // instr() rather than LIKE: no wildcard characters to escape; case-insensitive for ASCII.
    const std::string where =
        " WHERE instr(lower(title), lower(?1)) > 0 OR id IN (SELECT conversation_id FROM messages"
        " WHERE instr(lower(text), lower(?1)) > 0) ORDER BY updated_ms DESC, id DESC";
    return readConversations(*db_, strCat(kConversationSelect, where), text);
}

Result<std::optional<Conversation>> ConversationStore::conversation(int64_t id) const {
    auto all = readConversations(*db_, strCat(kConversationSelect, " WHERE id = ", id), {});
    if (!all) return std::unexpected(all.error());
    if (all->empty()) return std::optional<Conversation>();
    return std::optional<Conversation>(all->front());
}

Result<std::optional<Conversation>> ConversationStore::conversationByHandle(const std::string& handle) const {
    auto all = readConversations(*db_, strCat(kConversationSelect, " WHERE handle = ?1"), handle);
    if (!all) return std::unexpected(all.error());
    if (all->empty()) return std::optional<Conversation>();
    return std::optional<Conversation>(all->front());
}

Result<void> ConversationStore::touch(int64_t conversationId) {
    auto st = db_->prepare("UPDATE conversations SET updated_ms = ? WHERE id = ?");
    if (!st) return std::unexpected(st.error());
    return st->bind(1, storeNowMs()).bind(2, conversationId).run();
}

namespace {

Result<void> setColumn(SqliteDb& db, const char* column, int64_t id, const std::string& value) {
    // updated_ms stays: the list is ordered by the last message, so a rename leaves the chat in place.
    auto st = db.prepare(strCat("UPDATE conversations SET ", column, " = ? WHERE id = ?"));
    if (!st) return std::unexpected(st.error());
    if (auto r = st->bind(1, std::string_view(value)).bind(2, id).run(); !r) return r;
    if (db.changes() == 0) return fail(ErrorCode::InvalidArgument, strCat("no conversation ", id));
    return {};
}

}  // namespace

Result<void> ConversationStore::renameConversation(int64_t id, const std::string& title) {
    return setColumn(*db_, "title", id, title);
}

Result<void> ConversationStore::setSystemPrompt(int64_t id, const std::string& systemPrompt) {
    return setColumn(*db_, "system_prompt", id, systemPrompt);
}

Result<void> ConversationStore::setModel(int64_t id, const std::string& model) {
    return setColumn(*db_, "model", id, model);
}

Result<void> ConversationStore::setSettings(int64_t id, const std::string& settingsJson) {
    if (!QJsonDocument::fromJson(QByteArray::fromStdString(settingsJson)).isObject())
        return fail(ErrorCode::InvalidArgument, "chat settings must be a JSON object");
    return setColumn(*db_, "settings_json", id, settingsJson);
}

Result<void> ConversationStore::deleteConversation(int64_t id) {
    Transaction t(*db_);
    if (auto r = t.begin(); !r) return r;
    auto st = db_->prepare("DELETE FROM conversations WHERE id = ?");
    if (!st) return std::unexpected(st.error());
    if (auto r = st->bind(1, id).run(); !r) return r;
    if (db_->changes() == 0) return fail(ErrorCode::InvalidArgument, strCat("no conversation ", id));
    if (auto r = kv_->dropUnreferencedBlocks(); !r) return r;
    if (auto r = t.commit(); !r) return r;
    return kv_->reclaim();
}

}  // namespace hearth

// KV block rows: append-only saving in one transaction, loading a chain by keys, the
// per-conversation references and the disk budget's eviction and reclaiming.
#include "app/store/kv_block_store.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "app/store/kill_point.h"
#include "app/store/sqlite_db.h"
#include "app/store/store_rows.h"
#include "engine/str_cat.h"

namespace hearth {
namespace {

std::span<const uint8_t> keyBytes(const BlockKey& k) { return {k.data(), k.size()}; }

BlockKey keyFrom(std::span<const uint8_t> bytes) {
    BlockKey k{};
    // copy_n, not memcpy: an empty or NULL column is a null pointer (found by fuzzing).
    std::copy_n(bytes.begin(), std::min(bytes.size(), k.size()), k.begin());
    return k;
}

std::span<const uint8_t> tokenBytes(const std::vector<int32_t>& t) {
    return {reinterpret_cast<const uint8_t*>(t.data()), t.size() * sizeof(int32_t)};
}

std::vector<int32_t> tokensFrom(std::span<const uint8_t> bytes) {
    std::vector<int32_t> t(bytes.size() / sizeof(int32_t));
    if (!t.empty()) std::memcpy(t.data(), bytes.data(), t.size() * sizeof(int32_t));  // a blob of < 4 bytes: none
    return t;
}

constexpr const char* kBlockSelect =
    "SELECT b.block_key, b.parent_key, b.position, b.tokens, b.data, b.checksum,"
    " r.root_key, r.fingerprint, r.layout, r.backend, r.numerics FROM kv_blocks b JOIN kv_roots r USING(root_key)";

KvBlockRecord recordFrom(const Statement& st) {
    KvBlockRecord r;
    r.key = keyFrom(st.blobView(0));
    r.parent = keyFrom(st.blobView(1));
    r.position = static_cast<int32_t>(st.int64(2));
    r.tokens = tokensFrom(st.blobView(3));
    r.data = st.blob(4);
    r.checksum = static_cast<uint64_t>(st.int64(5));
    return r;
}

KvRootInfo rootFrom(const Statement& st) {
    return KvRootInfo{.key = keyFrom(st.blobView(6)),
                      .fingerprint = st.text(7),
                      .layout = st.text(8),
                      .backend = st.text(9),
                      .numericsVersion = static_cast<uint32_t>(st.int64(10))};
}

// The rows of st (a kBlockSelect) whose root is the first row's, in the order they come.
Result<SavedKvChain> chainOfFirstRoot(Statement& st) {
    SavedKvChain chain;
    while (true) {
        auto row = st.step();
        if (!row) return std::unexpected(row.error());
        if (!*row) break;
        if (chain.records.empty()) chain.root = rootFrom(st);
        if (rootFrom(st).key == chain.root.key) chain.records.push_back(recordFrom(st));
    }
    return chain;
}

}  // namespace

int64_t KvBlockStore::diskUsageBytes() const {
    int64_t total = 0;
    for (const std::string& f : {db_.path(), db_.path() + "-wal"}) {
        std::error_code ec;
        const auto n = std::filesystem::file_size(f, ec);
        if (!ec) total += static_cast<int64_t>(n);
    }
    return total;
}

Result<bool> KvBlockStore::has(const BlockKey& key) const {
    auto st = db_.prepare("SELECT 1 FROM kv_blocks WHERE block_key = ?");
    if (!st) return std::unexpected(st.error());
    st->bindBlob(1, keyBytes(key));
    return st->step();
}

Result<void> KvBlockStore::insertBlocks(const KvRootInfo& root, std::span<const KvBlockRecord> records) {
    auto rootSt = db_.prepare(
        "INSERT OR IGNORE INTO kv_roots(root_key, fingerprint, layout, backend, numerics) VALUES(?, ?, ?, ?, ?)");
    if (!rootSt) return std::unexpected(rootSt.error());
    rootSt->bindBlob(1, keyBytes(root.key))
        .bind(2, std::string_view(root.fingerprint))
        .bind(3, std::string_view(root.layout));
    rootSt->bind(4, std::string_view(root.backend)).bind(5, int64_t{root.numericsVersion});
    if (auto r = rootSt->run(); !r) return r;
    auto st = db_.prepare(
        "INSERT OR IGNORE INTO kv_blocks(block_key, root_key, parent_key, position, tokens, data, checksum, created_ms)"
        " VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
    if (!st) return std::unexpected(st.error());
    const int64_t now = storeNowMs();
    for (size_t i = 0; i < records.size(); ++i) {
        const KvBlockRecord& b = records[i];
        st->bindBlob(1, keyBytes(b.key)).bindBlob(2, keyBytes(root.key)).bindBlob(3, keyBytes(b.parent));
        st->bind(4, int64_t{b.position}).bindBlob(5, tokenBytes(b.tokens)).bindBlob(6, b.data);
        st->bind(7, static_cast<int64_t>(b.checksum)).bind(8, now);
        if (auto r = st->run(); !r) return r;
        if (i == records.size() / 2) killPoint("kv-transaction");
    }
    return {};
}

Result<int32_t> KvBlockStore::save(int64_t conversationId, const KvRootInfo& root,
                                   std::span<const KvBlockRecord> records, std::span<const BlockKey> chainKeys) {
    int64_t bytes = 0;
    for (const KvBlockRecord& b : records) bytes += static_cast<int64_t>(b.data.size());
    if (bytes > budget_) return 0;  // could never be kept: do not write it only to evict it
    Transaction t(db_);
    if (auto r = t.begin(); !r) return std::unexpected(r.error());
    if (auto r = insertBlocks(root, records); !r) return std::unexpected(r.error());
    auto link = db_.prepare(
        "INSERT OR IGNORE INTO conversation_kv(conversation_id, block_key)"
        " SELECT ?1, block_key FROM kv_blocks WHERE block_key = ?2");
    if (!link) return std::unexpected(link.error());
    for (const BlockKey& k : chainKeys)
        if (auto r = link->bind(1, conversationId).bindBlob(2, keyBytes(k)).run(); !r)
            return std::unexpected(r.error());
    auto used = db_.prepare("UPDATE conversations SET kv_used_ms = ? WHERE id = ?");
    if (!used) return std::unexpected(used.error());
    if (auto r = used->bind(1, storeNowMs()).bind(2, conversationId).run(); !r) return std::unexpected(r.error());
    killPoint("kv-commit");
    if (auto r = t.commit(); !r) return std::unexpected(r.error());
    if (auto r = db_.exec("PRAGMA wal_checkpoint(TRUNCATE)"); !r) return std::unexpected(r.error());
    if (auto r = enforceBudget(); !r) return std::unexpected(r.error());
    return static_cast<int32_t>(records.size());
}

Result<SavedKvChain> KvBlockStore::load(std::span<const BlockKey> keys) const {
    SavedKvChain chain;
    auto st = db_.prepare(strCat(kBlockSelect, " WHERE b.block_key = ?"));
    if (!st) return std::unexpected(st.error());
    for (const BlockKey& k : keys) {
        st->bindBlob(1, keyBytes(k));
        auto row = st->step();
        if (!row) return std::unexpected(row.error());
        if (!*row) break;
        if (chain.records.empty()) chain.root = rootFrom(*st);
        chain.records.push_back(recordFrom(*st));
        st->reset();
    }
    return chain;
}

Result<SavedKvChain> KvBlockStore::tails(const BlockKey& parent, int32_t blockSize) const {
    auto st = db_.prepare(strCat(kBlockSelect, " WHERE b.parent_key = ? AND length(b.tokens) < ? LIMIT 64"));
    if (!st) return std::unexpected(st.error());
    st->bindBlob(1, keyBytes(parent)).bind(2, int64_t{blockSize} * int64_t{sizeof(int32_t)});
    return chainOfFirstRoot(*st);
}

Result<SavedKvChain> KvBlockStore::foreignChain(int64_t conversationId, const BlockKey& current, int n) const {
    auto st =
        db_.prepare(strCat(kBlockSelect,
                           " JOIN conversation_kv c USING(block_key) WHERE c.conversation_id = ? AND b.root_key <> ?"
                           " ORDER BY b.position LIMIT ?"));
    if (!st) return std::unexpected(st.error());
    st->bind(1, conversationId).bindBlob(2, keyBytes(current)).bind(3, int64_t{n});
    return chainOfFirstRoot(*st);
}

Result<void> KvBlockStore::markUsed(int64_t conversationId) {
    auto st = db_.prepare("UPDATE conversations SET kv_used_ms = ? WHERE id = ?");
    if (!st) return std::unexpected(st.error());
    return st->bind(1, storeNowMs()).bind(2, conversationId).run();
}

Result<int64_t> KvBlockStore::blockCount() const { return db_.queryInt("SELECT count(*) FROM kv_blocks"); }

Result<void> KvBlockStore::dropUnreferencedBlocks() {
    if (auto r = db_.exec("DELETE FROM kv_blocks WHERE block_key NOT IN (SELECT block_key FROM conversation_kv)"); !r)
        return r;
    return db_.exec("DELETE FROM kv_roots WHERE root_key NOT IN (SELECT root_key FROM kv_blocks)");
}

Result<void> KvBlockStore::reclaim() {
    // Freed pages leave the file by incremental vacuum; in WAL mode the file shrinks when the
    // checkpoint copies that back, and TRUNCATE empties the WAL too.
    if (auto r = db_.exec("PRAGMA incremental_vacuum"); !r) return r;
    return db_.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

Result<KvBudgetReport> KvBlockStore::enforceBudget() {
    KvBudgetReport report;
    report.bytesBefore = diskUsageBytes();
    auto before = blockCount();
    if (!before) return std::unexpected(before.error());
    while (diskUsageBytes() > budget_) {
        auto victim = db_.queryInt(
            "SELECT c.id FROM conversations c WHERE EXISTS (SELECT 1 FROM conversation_kv k WHERE k.conversation_id = "
            "c.id)"
            " ORDER BY c.kv_used_ms, c.id LIMIT 1");
        if (!victim) return std::unexpected(victim.error());
        if (*victim == 0) break;  // no KV left: the rest is text, never evicted
        Transaction t(db_);
        if (auto r = t.begin(); !r) return std::unexpected(r.error());
        if (auto r = db_.exec(strCat("DELETE FROM conversation_kv WHERE conversation_id = ", *victim)); !r)
            return std::unexpected(r.error());
        if (auto r = dropUnreferencedBlocks(); !r) return std::unexpected(r.error());
        if (auto r = t.commit(); !r) return std::unexpected(r.error());
        if (auto r = reclaim(); !r) return std::unexpected(r.error());
        ++report.conversationsEvicted;
    }
    auto after = blockCount();
    if (!after) return std::unexpected(after.error());
    report.blocksDeleted = *before - *after;
    report.bytesAfter = diskUsageBytes();
    return report;
}

Result<ModelFingerprint> KvBlockStore::modelFingerprint(const std::string& path) {
    std::error_code ec;
    const std::string canonical = std::filesystem::weakly_canonical(path, ec).string();
    const std::string key = ec ? path : canonical;
    // By the path as given: a split model's parts are found by their names beside it, which
    // canonicalising a symbolic link (the Hugging Face cache's) would lose.
    auto stamp = modelStamp(path);
    if (!stamp) return std::unexpected(stamp.error());
    auto st = db_.prepare("SELECT fingerprint FROM model_fingerprints WHERE path = ? AND size = ? AND mtime_ns = ?");
    if (!st) return std::unexpected(st.error());
    st->bind(1, std::string_view(key)).bind(2, static_cast<int64_t>(stamp->size)).bind(3, stamp->mtimeNs);
    auto row = st->step();
    if (!row) return std::unexpected(row.error());
    if (*row)
        if (auto fp = fingerprintFromHex(st->text(0))) return *fp;
    auto fp = fingerprintModel(path);
    if (!fp) return std::unexpected(fp.error());
    auto put =
        db_.prepare("INSERT OR REPLACE INTO model_fingerprints(path, size, mtime_ns, fingerprint) VALUES(?, ?, ?, ?)");
    if (!put) return std::unexpected(put.error());
    put->bind(1, std::string_view(key)).bind(2, static_cast<int64_t>(stamp->size)).bind(3, stamp->mtimeNs);
    if (auto r = put->bind(4, std::string_view(fingerprintHex(*fp))).run(); !r) return std::unexpected(r.error());
    return *fp;
}

}  // namespace hearth

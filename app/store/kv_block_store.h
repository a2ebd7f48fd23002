// KvBlockStore: KV blocks in the store's database — one row per chain key (shared by branches
// and chats, append-only), which conversations use them, and the disk budget (least recently
// used conversations lose their KV first, never their text; then vacuum and WAL checkpoint).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/error.h"
#include "engine/snapshot/kv_snapshot.h"
#include "engine/snapshot/model_fingerprint.h"

namespace hearth {

class SqliteDb;

struct SavedKvChain {
    KvRootInfo root;  // the root the records were saved under
    std::vector<KvBlockRecord> records;  // in chain order
};

struct KvBudgetReport {
    int64_t bytesBefore = 0, bytesAfter = 0;  // database file + WAL on disk
    int32_t conversationsEvicted = 0;
    int64_t blocksDeleted = 0;
};

class KvBlockStore {
public:
    KvBlockStore(SqliteDb& db, int64_t diskBudgetBytes) : db_(db), budget_(diskBudgetBytes) {}

    int64_t diskBudgetBytes() const { return budget_; }
    void setDiskBudgetBytes(int64_t bytes) { budget_ = bytes; }
    // The database file plus its WAL, as on disk now.
    int64_t diskUsageBytes() const;

    Result<bool> has(const BlockKey& key) const;
    // In one transaction: inserts the records not yet stored, and marks every block of
    // chainKeys that is stored as used by the conversation. Then checkpoints the WAL and
    // enforces the budget. Returns the number of blocks inserted.
    Result<int32_t> save(int64_t conversationId, const KvRootInfo& root, std::span<const KvBlockRecord> records,
                         std::span<const BlockKey> chainKeys);
    // The stored blocks of keys, in order, up to the first one missing.
    Result<SavedKvChain> load(std::span<const BlockKey> keys) const;
    // The stored partial last blocks (fewer than blockSize tokens, engine/snapshot's tails)
    // that continue the block `parent` (a block key, or a root key for a chain's first block).
    Result<SavedKvChain> tails(const BlockKey& parent, int32_t blockSize) const;
    // Up to n blocks the conversation saved under a root other than `current`, from the start
    // of their chain: what a restore refuses, and why, after a model or layout change.
    Result<SavedKvChain> foreignChain(int64_t conversationId, const BlockKey& current, int n = 1) const;
    Result<void> markUsed(int64_t conversationId);
    // Evicts KV of least recently used conversations until the usage is under the budget.
    Result<KvBudgetReport> enforceBudget();
    Result<int64_t> blockCount() const;
    // The model's fingerprint (of every part of a split model), from the cache when its path,
    // size and mtime (modelStamp) are unchanged, else computed (every byte hashed) and cached.
    // Errors: Io.
    Result<ModelFingerprint> modelFingerprint(const std::string& path);
    // Deletes blocks no conversation uses, and roots no block uses.
    Result<void> dropUnreferencedBlocks();

    // Returns freed pages to the file system: incremental vacuum, then a WAL checkpoint.
    Result<void> reclaim();

private:
    Result<void> insertBlocks(const KvRootInfo& root, std::span<const KvBlockRecord> records);

    SqliteDb& db_;
    int64_t budget_;
};

}  // namespace hearth

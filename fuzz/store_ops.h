// The store target's input: a sequence of row edits on the store's database, applied with plain
// SQL to a deserialized copy (never its page format). Each edit: an op byte, then its operands.
//   kUpdate  table column row value   UPDATE table SET column = value on the row-th row
//   kDelete  table row                DELETE that row
//   kVersion int32                    PRAGMA user_version
// A value: a type byte (NULL, int64, double, text, blob, zeroblob), then its bytes (text and
// blob: a u16 length first; zeroblob: a u32 size, at most 1 MiB, 8 MiB per input).
#pragma once

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fuzz/fuzz_support.h"

namespace hearth::fuzz {

enum StoreOp : uint8_t { kUpdate = 0, kDelete = 1, kVersion = 2, kOpCount = 3 };
enum ValueType : uint8_t { kNull = 0, kInt = 1, kReal = 2, kText = 3, kBlob = 4, kZeroBlob = 5, kTypeCount = 6 };

struct StoreTable {
    const char* name;
    const char* rowKey;  // what identifies a row (WITHOUT ROWID tables have no rowid)
    std::vector<const char*> columns;
};

inline const std::array<StoreTable, 6>& storeTables() {
    static const std::array<StoreTable, 6> t = {{
        {"conversations",
         "rowid",
         {"id", "handle", "title", "model", "system_prompt", "settings_json", "created_ms", "updated_ms",
          "active_leaf_id", "kv_used_ms"}},
        {"messages",
         "rowid",
         {"id", "conversation_id", "parent_id", "role", "text", "complete", "created_ms", "stats_json"}},
        {"kv_roots", "rowid", {"root_key", "fingerprint", "layout", "backend", "numerics"}},
        {"kv_blocks",
         "rowid",
         {"block_key", "root_key", "parent_key", "position", "tokens", "data", "checksum", "created_ms"}},
        {"conversation_kv", "conversation_id, block_key", {"conversation_id", "block_key"}},
        {"model_fingerprints", "rowid", {"path", "size", "mtime_ns", "fingerprint"}},
    }};
    return t;
}

// Encoding, for make_seeds.
inline void putUpdate(ByteWriter& w, uint8_t table, uint8_t column, uint8_t row, ValueType type,
                      std::span<const uint8_t> value) {
    w.put(uint8_t{kUpdate}).put(table).put(column).put(row).put(uint8_t{type});
    if (type == kText || type == kBlob) w.put(static_cast<uint16_t>(value.size()));
    w.bytes(value);
}

namespace detail {

inline constexpr uint32_t kMaxZeroBlob = 1u << 20, kMaxZeroBlobTotal = 8u << 20;

inline std::string rowWhere(const StoreTable& t, uint8_t row) {
    const std::string key = t.rowKey;
    return " WHERE (" + key + ") = (SELECT " + key + " FROM " + t.name + " LIMIT 1 OFFSET " + std::to_string(row) + ")";
}

// Binds the value read from r to parameter 1.
inline void bindValue(sqlite3_stmt* st, ByteReader& r, uint32_t& zeroTotal) {
    switch (r.get<uint8_t>() % kTypeCount) {
    case kNull: sqlite3_bind_null(st, 1); break;
    case kInt: sqlite3_bind_int64(st, 1, r.get<int64_t>()); break;
    case kReal: sqlite3_bind_double(st, 1, r.get<double>()); break;
    case kText: {
        const auto b = r.bytes(r.get<uint16_t>());
        sqlite3_bind_text(st, 1, reinterpret_cast<const char*>(b.data()), static_cast<int>(b.size()), SQLITE_TRANSIENT);
        break;
    }
    case kBlob: {
        const auto b = r.bytes(r.get<uint16_t>());
        static const uint8_t none = 0;
        sqlite3_bind_blob(st, 1, b.empty() ? &none : b.data(), static_cast<int>(b.size()), SQLITE_TRANSIENT);
        break;
    }
    default: {
        const uint32_t n = std::min(r.get<uint32_t>() % (kMaxZeroBlob + 1), kMaxZeroBlobTotal - zeroTotal);
        zeroTotal += n;
        sqlite3_bind_zeroblob(st, 1, static_cast<int>(n));
    }
    }
}

// One edit; SQLite refusing it (a NOT NULL, a UNIQUE key, a type) is not an error of the input.
inline void applyOne(sqlite3* db, ByteReader& r, uint32_t& zeroTotal) {
    const uint8_t op = r.get<uint8_t>() % kOpCount;
    if (op == kVersion) {
        sqlite3_exec(db, ("PRAGMA user_version = " + std::to_string(r.get<int32_t>())).c_str(), nullptr, nullptr,
                     nullptr);
        return;
    }
    const StoreTable& t = storeTables()[r.get<uint8_t>() % storeTables().size()];
    std::string sql;
    if (op == kDelete) {
        sql = std::string("DELETE FROM ") + t.name + rowWhere(t, r.get<uint8_t>());
    } else {
        const char* column = t.columns[r.get<uint8_t>() % t.columns.size()];
        sql = std::string("UPDATE ") + t.name + " SET " + column + " = ?1" + rowWhere(t, r.get<uint8_t>());
    }
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) std::abort();  // our SQL: must prepare
    if (op == kUpdate) bindValue(st, r, zeroTotal);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

}  // namespace detail

// The image after the edits in ops, as a database file's bytes; nullopt when SQLite cannot
// even load the base image (never for a valid one).
inline std::optional<std::vector<uint8_t>> applyStoreOps(std::span<const uint8_t> image, std::span<const uint8_t> ops) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(image.size()));
    std::memcpy(copy, image.data(), image.size());
    const auto n = static_cast<sqlite3_int64>(image.size());
    std::optional<std::vector<uint8_t>> out;
    if (sqlite3_deserialize(db, "main", copy, n, n, SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) ==
        SQLITE_OK) {
        // Rows may hold what the CHECKs forbid, as a damaged or foreign database can.
        sqlite3_exec(db, "PRAGMA ignore_check_constraints = ON", nullptr, nullptr, nullptr);
        ByteReader r(ops);
        uint32_t zeroTotal = 0;
        while (!r.done()) detail::applyOne(db, r, zeroTotal);
        sqlite3_int64 size = 0;
        if (unsigned char* bytes = sqlite3_serialize(db, "main", &size, 0)) {
            out.emplace(bytes, bytes + size);
            sqlite3_free(bytes);
        }
    }
    sqlite3_close(db);
    return out;
}

}  // namespace hearth::fuzz

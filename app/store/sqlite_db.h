// SqliteDb, Statement, Transaction: thin RAII over the SQLite C API (not Qt SQL: hardening needs
// sqlite3_deserialize and fault-injecting VFSes), typed binds and columns, errors as
// hearth::Error naming the file.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace hearth {

class Statement {
public:
    Statement(sqlite3_stmt* stmt, const std::string* path) : stmt_(stmt), path_(path) {}
    ~Statement();
    Statement(Statement&& o) noexcept : stmt_(o.stmt_), path_(o.path_) { o.stmt_ = nullptr; }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    // Binds are 1-based, as in SQLite.
    Statement& bind(int i, int64_t v);
    Statement& bind(int i, double v);
    Statement& bind(int i, std::string_view text);
    Statement& bindBlob(int i, std::span<const uint8_t> bytes);
    Statement& bindNull(int i);
    // true: a row is ready; false: done. Errors: SQLite's.
    Result<bool> step();
    Result<void> run();  // steps to the end
    void reset();

    int64_t int64(int col) const;
    double real(int col) const;
    std::string text(int col) const;
    std::vector<uint8_t> blob(int col) const;
    std::span<const uint8_t> blobView(int col) const;  // valid until the next step/reset
    bool isNull(int col) const;

private:
    sqlite3_stmt* stmt_;
    const std::string* path_;
};

class SqliteDb {
public:
    // Opens or creates path. Errors: Io (cannot open), InvalidFormat (not a database).
    static Result<std::unique_ptr<SqliteDb>> open(const std::string& path);
    // An in-memory database holding a copy of image (a serialized database file, as
    // serialize() returns; sqlite3_deserialize), named `name` in messages. Errors: InvalidFormat.
    static Result<std::unique_ptr<SqliteDb>> openImage(std::span<const uint8_t> image, const std::string& name);
    ~SqliteDb();

    const std::string& path() const { return path_; }
    sqlite3* handle() { return db_; }
    Result<void> exec(std::string_view sql);
    Result<Statement> prepare(std::string_view sql);
    // The single int64 the query returns (0 when it returns no row).
    Result<int64_t> queryInt(std::string_view sql);
    int64_t lastInsertId() const;
    // The main database as the bytes of a database file (sqlite3_serialize).
    Result<std::vector<uint8_t>> serialize();
    int changes() const;
    // An error for the last failed call, with the file name.
    Error lastError(std::string_view what) const;

private:
    SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
    sqlite3* db_;
    std::string path_;
};

// BEGIN IMMEDIATE .. COMMIT; rolls back when destroyed uncommitted.
class Transaction {
public:
    explicit Transaction(SqliteDb& db) : db_(db) {}
    ~Transaction();
    Result<void> begin();
    Result<void> commit();

private:
    SqliteDb& db_;
    bool open_ = false;
};

// Error for a SQLite result code (SQLITE_CORRUPT/NOTADB -> InvalidFormat, CANTOPEN/IOERR -> Io),
// with what the user can do about a full disk, a read-only or a moved file (sysErrno: the
// failed system call's errno, sqlite3_system_errno(), which tells a full disk behind an I/O error).
Error sqliteError(int code, std::string_view what, std::string_view detail, const std::string& path, int sysErrno = 0);

}  // namespace hearth

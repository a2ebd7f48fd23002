// The SQLite C API behind SqliteDb, Statement and Transaction.
#include "app/store/sqlite_db.h"

#include <sqlite3.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "app/store/kill_point.h"
#include "engine/str_cat.h"

namespace hearth {

namespace {

// What a user can do about the faults a disk or another program causes (tests/app/store/test_store_faults.cpp).
const char* faultHint(int code, int sysErrno) {
    // An I/O error's errno says what happened (a full disk when growing the -shm file, say);
    // for other codes it may be left from an earlier, harmless failure.
    if ((code & 0xff) == SQLITE_IOERR || (code & 0xff) == SQLITE_CANTOPEN) {
        if (sysErrno == ENOSPC || sysErrno == EDQUOT) code = SQLITE_FULL;
        if (sysErrno == EROFS || sysErrno == EACCES || sysErrno == EPERM) code = SQLITE_READONLY;
    }
    if (code == SQLITE_READONLY_DBMOVED)
        return ". The database file was moved or deleted while Hearth was running: nothing more can be saved to it";
    if ((code & 0xff) == SQLITE_FULL)
        return ". The disk is full: free some space and try again; what was saved before is kept";
    if ((code & 0xff) == SQLITE_READONLY)
        return ". The database file (or its folder) cannot be written: check its permissions; what was saved before is "
               "kept";
    return "";
}

}  // namespace

Error sqliteError(int code, std::string_view what, std::string_view detail, const std::string& path, int sysErrno) {
    const int primary = code & 0xff;
    ErrorCode ec = ErrorCode::Io;
    if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) ec = ErrorCode::InvalidFormat;
    else if (primary == SQLITE_NOMEM) ec = ErrorCode::OutOfMemory;
    else if (primary == SQLITE_CONSTRAINT || primary == SQLITE_MISMATCH || primary == SQLITE_RANGE)
        ec = ErrorCode::InvalidArgument;
    return Error{ec,
                 strCat(path, ": ", what, ": ", detail, " (", sqlite3_errstr(code), ")", faultHint(code, sysErrno))};
}

Statement::~Statement() {
    if (stmt_) sqlite3_finalize(stmt_);
}

Statement& Statement::bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
}

Statement& Statement::bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
}

Statement& Statement::bind(int i, std::string_view text) {
    sqlite3_bind_text64(stmt_, i, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    return *this;
}

Statement& Statement::bindBlob(int i, std::span<const uint8_t> bytes) {
    static const uint8_t empty = 0;
    sqlite3_bind_blob64(stmt_, i, bytes.empty() ? &empty : bytes.data(), bytes.size(), SQLITE_TRANSIENT);
    return *this;
}

Statement& Statement::bindNull(int i) {
    sqlite3_bind_null(stmt_, i);
    return *this;
}

namespace {

// In WAL mode SQLite goes on writing into a database file that was deleted or renamed (its
// checks are for rollback journals): what it wrote would vanish with the process. Every write
// asks first (one stat()).
bool databaseMoved(sqlite3* db) {
    int moved = 0;
    return sqlite3_file_control(db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved != 0;
}

Error movedError(std::string_view what, const std::string& path) {
    return sqliteError(SQLITE_READONLY_DBMOVED, what, "the file is no longer where it was opened", path);
}

}  // namespace

Result<bool> Statement::step() {
    sqlite3* db = sqlite3_db_handle(stmt_);
    if (!sqlite3_stmt_busy(stmt_) && !sqlite3_stmt_readonly(stmt_) && databaseMoved(db))
        return std::unexpected(movedError("cannot write", *path_));
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return std::unexpected(sqliteError(sqlite3_extended_errcode(db), "query failed", sqlite3_errmsg(db), *path_,
                                       sqlite3_system_errno(db)));
}

Result<void> Statement::run() {
    while (true) {
        auto r = step();
        if (!r) return std::unexpected(r.error());
        if (!*r) break;
    }
    reset();
    return {};
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

int64_t Statement::int64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::real(int col) const { return sqlite3_column_double(stmt_, col); }
bool Statement::isNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

std::string Statement::text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
}

std::span<const uint8_t> Statement::blobView(int col) const {
    const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, col));
    return p ? std::span<const uint8_t>(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::span<const uint8_t>();
}

std::vector<uint8_t> Statement::blob(int col) const {
    const auto v = blobView(col);
    return {v.begin(), v.end()};
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::open(const std::string& path) {
    installKillVfsIfAsked();
    sqlite3* db = nullptr;
    const int rc =
        sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        Error e = sqliteError(rc, "cannot open the database", db ? sqlite3_errmsg(db) : "", path);
        sqlite3_close(db);
        return std::unexpected(e);
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, 5000);
    return std::unique_ptr<SqliteDb>(new SqliteDb(db, path));
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::openImage(std::span<const uint8_t> image, const std::string& name) {
    sqlite3* db = nullptr;
    int rc =
        sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    auto* copy =
        rc == SQLITE_OK ? static_cast<unsigned char*>(sqlite3_malloc64(std::max<size_t>(image.size(), 1))) : nullptr;
    if (copy) {
        if (!image.empty()) std::memcpy(copy, image.data(), image.size());
        const auto n = static_cast<sqlite3_int64>(image.size());
        // FREEONCLOSE: SQLite owns (and frees) the copy, even when deserializing fails.
        rc =
            sqlite3_deserialize(db, "main", copy, n, n, SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
    } else if (rc == SQLITE_OK) {
        rc = SQLITE_NOMEM;
    }
    if (rc != SQLITE_OK) {
        Error e = sqliteError(rc, "cannot open the database image", db ? sqlite3_errmsg(db) : "", name);
        sqlite3_close(db);
        return std::unexpected(e);
    }
    sqlite3_extended_result_codes(db, 1);
    return std::unique_ptr<SqliteDb>(new SqliteDb(db, name));
}

Result<std::vector<uint8_t>> SqliteDb::serialize() {
    sqlite3_int64 size = 0;
    unsigned char* bytes = sqlite3_serialize(db_, "main", &size, 0);
    if (!bytes) return std::unexpected(lastError("cannot serialize the database"));
    std::vector<uint8_t> out(bytes, bytes + size);
    sqlite3_free(bytes);
    return out;
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

Error SqliteDb::lastError(std::string_view what) const {
    return sqliteError(sqlite3_extended_errcode(db_), what, sqlite3_errmsg(db_), path_, sqlite3_system_errno(db_));
}

Result<void> SqliteDb::exec(std::string_view sql) {
    const std::string s(sql);
    if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) return std::unexpected(lastError(s));
    return {};
}

Result<Statement> SqliteDb::prepare(std::string_view sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK)
        return std::unexpected(lastError(strCat("cannot prepare: ", sql)));
    return Statement(stmt, &path_);
}

Result<int64_t> SqliteDb::queryInt(std::string_view sql) {
    auto st = prepare(sql);
    if (!st) return std::unexpected(st.error());
    auto row = st->step();
    if (!row) return std::unexpected(row.error());
    return *row ? st->int64(0) : 0;
}

int64_t SqliteDb::lastInsertId() const { return sqlite3_last_insert_rowid(db_); }
int SqliteDb::changes() const { return sqlite3_changes(db_); }

Transaction::~Transaction() {
    if (open_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

Result<void> Transaction::begin() {
    if (databaseMoved(db_.handle())) return std::unexpected(movedError("cannot write", db_.path()));
    auto r = db_.exec("BEGIN IMMEDIATE");
    open_ = r.has_value();
    return r;
}

Result<void> Transaction::commit() {
    auto r = db_.exec("COMMIT");
    if (r) open_ = false;
    return r;
}

}  // namespace hearth

// The SQLite C API behind SqliteDb, Statement and Transaction.
#include "app/store/sqlite_db.h"

#include <sqlite3.h>

#include "app/store/kill_point.h"
#include "engine/str_cat.h"

namespace hearth {

Error sqliteError(int code, std::string_view what, std::string_view detail, const std::string& path) {
    const int primary = code & 0xff;
    ErrorCode ec = ErrorCode::Io;
    if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) ec = ErrorCode::InvalidFormat;
    else if (primary == SQLITE_NOMEM) ec = ErrorCode::OutOfMemory;
    else if (primary == SQLITE_CONSTRAINT || primary == SQLITE_MISMATCH || primary == SQLITE_RANGE) ec = ErrorCode::InvalidArgument;
    return Error{ec, strCat(path, ": ", what, ": ", detail, " (", sqlite3_errstr(code), ")")};
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

Result<bool> Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    sqlite3* db = sqlite3_db_handle(stmt_);
    return std::unexpected(sqliteError(sqlite3_extended_errcode(db), "query failed", sqlite3_errmsg(db), *path_));
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
    return p ? std::span<const uint8_t>(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : std::span<const uint8_t>();
}

std::vector<uint8_t> Statement::blob(int col) const {
    const auto v = blobView(col);
    return {v.begin(), v.end()};
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::open(const std::string& path) {
    installKillVfsIfAsked();
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        Error e = sqliteError(rc, "cannot open the database", db ? sqlite3_errmsg(db) : "", path);
        sqlite3_close(db);
        return std::unexpected(e);
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, 5000);
    return std::unique_ptr<SqliteDb>(new SqliteDb(db, path));
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

Error SqliteDb::lastError(std::string_view what) const {
    return sqliteError(sqlite3_extended_errcode(db_), what, sqlite3_errmsg(db_), path_);
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

// The store's schema and its step-by-step migrations (PRAGMA user_version). Version 1: the
// first schema, created with auto_vacuum=INCREMENTAL (it cannot be turned on later); each
// later version is one migration step from the one before.
#pragma once

#include "engine/error.h"

namespace hearth {

class SqliteDb;

inline constexpr int kSchemaVersion = 5;

// Sets the connection's pragmas (WAL, foreign keys, ...) and migrates the database from its
// user_version up to `target` (kSchemaVersion normally; tests stop earlier to make old
// databases). Errors: InvalidFormat for a newer version than this build knows, SQLite's.
Result<void> prepareSchema(SqliteDb& db, int target = kSchemaVersion);

}  // namespace hearth

// The SQLite saver's schema and its numbered migrations.
//
// Version 1: checkpoints (one row per checkpoint: header + metadata), channel_values (a value
//            or delta stored by one checkpoint for one channel), writes (pending writes).
// Version 2: an index on checkpoints(checkpoint_id) for listing across threads.
//
// The applied version is the single row of table schema_version. Thread-safety: none.
#pragma once

#include "checkpoint/sqlite_connection.h"

namespace tollgate::checkpoint_internal {

// The version the file has (0: a new, empty file).
int sqlite_schema_version(SqliteConnection& connection);

// Runs the migrations above the file's version up to `target`, all in one write transaction
// (so two processes opening the same new file do not both migrate). Throws Error(kConflict)
// when the file's version is newer than `target`.
void migrate_sqlite_schema(SqliteConnection& connection, int target);

}  // namespace tollgate::checkpoint_internal

// The SQLite saver's schema and its numbered migrations.
//
// Version 1: checkpoints (one row per checkpoint: header + metadata), channel_values (a value
//            or delta stored by one checkpoint for one channel; keyed by checkpoint first so
//            that one put touches one leaf page), writes (pending writes).
// Version 2: writes.task_path.
// A put writes two rows (checkpoint, values) and no secondary index: listing across threads
// sorts, which is rare and cheap next to the per-step cost an index would add.
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

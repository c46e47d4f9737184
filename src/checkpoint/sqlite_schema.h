// The SQLite saver's schema (component "checkpoints" of tollgate_schema, see sql/migrations.h)
// and its numbered migrations.
//
// Version 1: checkpoints (one row per checkpoint: header + metadata), channel_values (a value
//            or delta stored by one checkpoint for one channel; keyed by checkpoint first so
//            that one put touches one leaf page), writes (pending writes).
// Version 2: writes.task_path.
// A put writes two rows (checkpoint, values) and no secondary index: listing across threads
// sorts, which is rare and cheap next to the per-step cost an index would add.
//
// Files made before tollgate_schema kept the version in the single row of table
// schema_version; opening one moves it over.
#pragma once

#include "sql/migrations.h"

namespace tollgate::checkpoint_internal {

const sql::Schema& sqlite_checkpoint_schema();

}  // namespace tollgate::checkpoint_internal

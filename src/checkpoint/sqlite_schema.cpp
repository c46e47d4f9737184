#include "checkpoint/sqlite_schema.h"

#include <array>

#include "tollgate/sqlite_saver.h"

namespace tollgate::checkpoint_internal {
namespace {

// Index i holds the migration to version i + 1. Never edit a released migration: add one.
constexpr std::array<sql::Migration, 5> kMigrations = {{
    // 1: the tables.
    {R"sql(
CREATE TABLE checkpoints (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL,
  parent_checkpoint_id TEXT,
  header BLOB NOT NULL,
  metadata TEXT NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
) WITHOUT ROWID;
CREATE TABLE channel_values (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  channel TEXT NOT NULL,
  checkpoint_id TEXT NOT NULL,
  base_checkpoint_id TEXT,
  keep INTEGER NOT NULL DEFAULT 0,
  value BLOB NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, channel)
) WITHOUT ROWID;
CREATE TABLE writes (
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL DEFAULT '',
  checkpoint_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  channel TEXT NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) WITHOUT ROWID;
)sql"},
    // 2: the task path of each write (which subgraph task wrote it).
    {"ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT '';"},
    // 3: checkpoint headers written in format 2 (header_codec.h), which builds before this one
    // cannot read: the tables stay as they are, the version keeps those builds out.
    {"SELECT 1;"},
    // 4: checkpoint headers written in format 3 (small values kept in the header), which
    // builds before this one cannot read: likewise.
    {"SELECT 1;"},
    // 5: a row of writes may hold several of a task's writes (saver_rows.h).
    {"ALTER TABLE writes ADD COLUMN span INTEGER NOT NULL DEFAULT 1;"},
}};
static_assert(kMigrations.size() == kSqliteSchemaVersion);

int adopt_legacy_version(sql::Connection& connection) {
  return sql::take_legacy_version_table(connection, "schema_version");
}

}  // namespace

const sql::Schema& sqlite_checkpoint_schema() {
  static const sql::Schema kSchema{"checkpoints", kMigrations, adopt_legacy_version};
  return kSchema;
}

}  // namespace tollgate::checkpoint_internal

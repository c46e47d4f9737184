#include "checkpoint/sqlite_schema.h"

#include <array>
#include <string>

#include "tollgate/error.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate::checkpoint_internal {
namespace {

// Index i holds the migration to version i + 1. Never edit a released migration: add one.
constexpr std::array<const char*, 2> kMigrations = {
    // 1: the tables.
    R"sql(
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
)sql",
    // 2: the task path of each write (which subgraph task wrote it).
    "ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT '';",
};
static_assert(kMigrations.size() == kSqliteSchemaVersion);

}  // namespace

int sqlite_schema_version(SqliteConnection& connection) {
  SqliteStatement exists(
      connection, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'");
  if (!exists.step()) return 0;
  SqliteStatement version(connection, "SELECT version FROM schema_version");
  return version.step() ? static_cast<int>(version.integer(0)) : 0;
}

void migrate_sqlite_schema(SqliteConnection& connection, int target) {
  if (sqlite_schema_version(connection) == target) return;  // the common case: no write lock
  SqliteTransaction transaction(connection, SqliteTransaction::Kind::kWrite);
  connection.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  int version = sqlite_schema_version(connection);
  if (version > target) {
    throw Error::Conflict("sqlite: the database schema is version " + std::to_string(version) +
                          ", newer than this build supports (" + std::to_string(target) +
                          "); upgrade tollgate to open it");
  }
  if (version < 0) throw Error::Internal("sqlite: negative schema_version");
  for (; version < target; ++version)
    connection.exec(kMigrations[static_cast<std::size_t>(version)]);
  connection.exec("DELETE FROM schema_version");
  SqliteStatement record(connection, "INSERT INTO schema_version (version) VALUES (?)");
  record.bind(1, static_cast<std::int64_t>(target)).run();
  transaction.commit();
}

}  // namespace tollgate::checkpoint_internal

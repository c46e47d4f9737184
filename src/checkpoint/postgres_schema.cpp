#include "checkpoint/postgres_schema.h"

#include <array>

#include "tollgate/postgres_saver.h"

namespace tollgate::checkpoint_internal {
namespace {

// Index i holds the migration to version i + 1. Never edit a released migration: add one.
constexpr std::array<sql::Migration, 4> kMigrations = {{
    // 1: the tables.
    {"", R"sql(
CREATE TABLE checkpoints (
  thread_id TEXT COLLATE "C" NOT NULL,
  checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
  checkpoint_id TEXT COLLATE "C" NOT NULL,
  parent_checkpoint_id TEXT COLLATE "C",
  header BYTEA NOT NULL,
  metadata TEXT NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE TABLE channel_values (
  thread_id TEXT COLLATE "C" NOT NULL,
  checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
  channel TEXT COLLATE "C" NOT NULL,
  checkpoint_id TEXT COLLATE "C" NOT NULL,
  base_checkpoint_id TEXT COLLATE "C",
  keep BIGINT NOT NULL DEFAULT 0,
  value BYTEA NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, channel)
);
CREATE TABLE writes (
  thread_id TEXT COLLATE "C" NOT NULL,
  checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',
  checkpoint_id TEXT COLLATE "C" NOT NULL,
  task_id TEXT COLLATE "C" NOT NULL,
  idx BIGINT NOT NULL,
  channel TEXT NOT NULL,
  task_path TEXT NOT NULL DEFAULT '',
  value BYTEA NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
)sql"},
    // 2: checkpoint headers written in format 2 (header_codec.h), which builds before this one
    // cannot read: the tables stay as they are, the version keeps those builds out.
    {"", "SELECT 1;"},
    // 3: checkpoint headers written in format 3 (small values kept in the header), which
    // builds before this one cannot read: likewise.
    {"", "SELECT 1;"},
    // 4: a row of writes may hold several of a task's writes (saver_rows.h).
    {"", "ALTER TABLE writes ADD COLUMN span BIGINT NOT NULL DEFAULT 1;"},
}};
static_assert(kMigrations.size() == kPostgresSchemaVersion);

}  // namespace

const sql::Schema& postgres_checkpoint_schema() {
  static const sql::Schema kSchema{"checkpoints", kMigrations};
  return kSchema;
}

void setup_postgres_checkpoint_tables(sql::Connection& connection, const std::string& schema) {
  if (!schema.empty()) sql::create_postgres_schema(connection, schema);
  sql::migrate(connection, postgres_checkpoint_schema());
}

}  // namespace tollgate::checkpoint_internal

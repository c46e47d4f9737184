// One migration runner for every component that keeps tables in a database: the checkpoint
// saver, the server store and the audit log (by default they share one file). The database
// records each component's schema version in one table,
//
//   tollgate_schema (component TEXT PRIMARY KEY, version INTEGER)
//
// and opening a component runs the numbered migrations it lacks, all in one write
// transaction (so two processes opening the same new file do not both migrate; on PostgreSQL
// the transaction first takes an advisory lock that every migration takes, so two processes
// migrating one database at once run one after the other). A version
// newer than the build knows is refused. Each migration is written once per backend dialect.
//
// Files made before tollgate_schema kept versions in a table of each component's own (or, for
// the audit log, none): a schema's adopt_legacy_version reads it and removes it, in the same
// transaction, so nothing but tollgate_schema says a version afterwards.
//
// Thread-safety: none; the connection's owner serialises access.
#pragma once

#include <span>
#include <string_view>

#include "sql/connection.h"

namespace tollgate::sql {

inline constexpr std::string_view kSchemaTable = "tollgate_schema";

// One numbered step of a component's schema, in each backend's SQL. Never edit a released
// migration: add one.
struct Migration {
  // NOLINTNEXTLINE(google-explicit-constructor): tables of migrations are brace lists of SQL
  constexpr Migration(std::string_view sqlite_sql, std::string_view postgres_sql = {})
      : sqlite(sqlite_sql), postgres(postgres_sql) {}

  std::string_view sqlite;    // empty: the component has no SQLite tables
  std::string_view postgres;  // empty: the component has no PostgreSQL tables
};

struct Schema {
  std::string_view component;             // its row in tollgate_schema, e.g. "checkpoints"
  std::span<const Migration> migrations;  // migrations[i] takes the schema to version i + 1
  // The component's version in a file made before tollgate_schema (0: none), removing the old
  // marker; runs inside the migration's transaction. Null: the component had no older layout.
  int (*adopt_legacy_version)(Connection& connection) = nullptr;

  int latest() const { return static_cast<int>(migrations.size()); }
};

// The version recorded for `component`; 0 when none is.
int schema_version(Connection& connection, std::string_view component);

// Brings `schema` to `target` (by default its latest version). When the recorded version is
// already `target` this only reads. Throws Error(kConflict) when the database's version is
// newer than `target`.
void migrate(Connection& connection, const Schema& schema);
void migrate(Connection& connection, const Schema& schema, int target);

// PostgreSQL: creates the schema (namespace) `name` when missing, under the migrations'
// advisory lock, so that processes setting up one database at once do not collide.
void create_postgres_schema(Connection& connection, std::string_view name);

// Whether the database has a table called `table` (PostgreSQL: in the current schema).
bool table_exists(Connection& connection, std::string_view table);

// For adopt_legacy_version: the version in the single row of an old per-component table
// `table` (0 when it is missing or empty); drops the table.
int take_legacy_version_table(Connection& connection, std::string_view table);

}  // namespace tollgate::sql

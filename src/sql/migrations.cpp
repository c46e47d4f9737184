#include "sql/migrations.h"

#include <cassert>
#include <optional>
#include <string>

#include "sql/postgres_connection.h"
#include "tollgate/error.h"

namespace tollgate::sql {
namespace {

// The runner's own SQL, per dialect.
struct RunnerSql {
  std::string_view table_exists;
  std::string_view create_schema_table;
  std::string_view select_version;
  std::string_view record_version;
  std::string_view lock;  // serialises migrations across connections (empty: BEGIN does)
};

const RunnerSql& runner_sql(Dialect dialect) {
  static const RunnerSql kSqlite{
      "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
      "CREATE TABLE IF NOT EXISTS tollgate_schema (component TEXT PRIMARY KEY NOT NULL, "
      "version INTEGER NOT NULL)",
      "SELECT version FROM tollgate_schema WHERE component = ?",
      "INSERT INTO tollgate_schema (component, version) VALUES (?, ?) "
      "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
      "",
  };
  static const RunnerSql kPostgres{
      "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND "
      "tablename = $1",
      "CREATE TABLE IF NOT EXISTS tollgate_schema (component TEXT PRIMARY KEY NOT NULL, "
      "version BIGINT NOT NULL)",
      "SELECT version FROM tollgate_schema WHERE component = $1",
      "INSERT INTO tollgate_schema (component, version) VALUES ($1, $2) "
      "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
      // One key for every component and schema: migrations are rare and short.
      "SELECT pg_advisory_xact_lock(7238317604312)",
  };
  switch (dialect) {
    case Dialect::kSqlite:
      break;
    case Dialect::kPostgres:
      return kPostgres;
  }
  return kSqlite;
}

std::string_view migration_text(const Migration& migration, Dialect dialect) {
  switch (dialect) {
    case Dialect::kSqlite:
      break;
    case Dialect::kPostgres:
      return migration.postgres;
  }
  return migration.sqlite;
}

std::optional<int> recorded_version(Connection& connection, std::string_view component) {
  if (!table_exists(connection, kSchemaTable)) return std::nullopt;
  auto query = connection.prepare(runner_sql(connection.dialect()).select_version);
  query->bind(1, component);
  if (!query->step()) return std::nullopt;
  return static_cast<int>(query->integer(0));
}

}  // namespace

void create_postgres_schema(Connection& connection, std::string_view name) {
  assert(connection.dialect() == Dialect::kPostgres);
  Transaction transaction(connection, TransactionKind::kWrite);
  connection.prepare(runner_sql(Dialect::kPostgres).lock)->step();
  connection.exec("CREATE SCHEMA IF NOT EXISTS " + quote_identifier(name));
  transaction.commit();
}

bool table_exists(Connection& connection, std::string_view table) {
  auto query = connection.prepare(runner_sql(connection.dialect()).table_exists);
  query->bind(1, table);
  return query->step();
}

int take_legacy_version_table(Connection& connection, std::string_view table) {
  if (!table_exists(connection, table)) return 0;
  int version = 0;
  {
    auto query = connection.prepare("SELECT version FROM " + std::string(table));
    if (query->step()) version = static_cast<int>(query->integer(0));
  }
  connection.exec("DROP TABLE " + std::string(table));
  return version;
}

int schema_version(Connection& connection, std::string_view component) {
  return recorded_version(connection, component).value_or(0);
}

void migrate(Connection& connection, const Schema& schema) {
  migrate(connection, schema, schema.latest());
}

void migrate(Connection& connection, const Schema& schema, int target) {
  assert(target >= 0 && target <= schema.latest());
  if (recorded_version(connection, schema.component) == target) return;  // the common case
  const RunnerSql& sql = runner_sql(connection.dialect());
  Transaction transaction(connection, TransactionKind::kWrite);
  if (!sql.lock.empty()) connection.prepare(sql.lock)->step();
  connection.exec(sql.create_schema_table);
  const std::optional<int> recorded = recorded_version(connection, schema.component);
  int version = recorded                      ? *recorded
                : schema.adopt_legacy_version ? schema.adopt_legacy_version(connection)
                                              : 0;
  const std::string component(schema.component);
  if (version > target) {
    throw Error::Conflict("database: the " + component + " schema is version " +
                          std::to_string(version) + ", newer than this build supports (" +
                          std::to_string(target) + "); upgrade tollgate to open it");
  }
  if (version < 0) throw Error::Internal("database: negative " + component + " schema version");
  for (; version < target; ++version) {
    const std::string_view text =
        migration_text(schema.migrations[static_cast<std::size_t>(version)], connection.dialect());
    if (text.empty()) {
      throw Error::Internal("database: the " + component + " schema has no " +
                            (connection.dialect() == Dialect::kPostgres ? "PostgreSQL" : "SQLite") +
                            " migration to version " + std::to_string(version + 1));
    }
    connection.exec(text);
  }
  auto record = connection.prepare(sql.record_version);
  record->bind(1, schema.component).bind(2, std::int64_t{target}).run();
  record.reset();
  transaction.commit();
}

}  // namespace tollgate::sql

#include "server/storage.h"

#include <filesystem>

#include "server/sql_review_store.h"
#include "server/sql_store.h"
#include "server/sql_webhook_queue.h"
#include "checkpoint/sqlite_saver.h"
#include "sql/migrations.h"
#include "sql/postgres_connection.h"
#include "tollgate/error.h"
#include "tollgate/postgres_saver.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate::server {
namespace {

// A SQLite name whose every connection opens a database of its own.
bool in_memory(const std::string& path) {
  return path == ":memory:" || (path.rfind("file:", 0) == 0 &&
                                path.find("mode=memory") != std::string::npos);
}

}  // namespace

StorageLocation parse_storage_url(const std::string& url, const std::string& field) {
  if (url.empty()) throw Error::InvalidArgument(field + ": empty (a SQLite path or postgres:// URL)");
  for (const char* scheme : {"postgres://", "postgresql://"}) {
    if (url.rfind(scheme, 0) == 0) return {StorageLocation::Kind::kPostgres, url};
  }
  if (url.rfind("sqlite:", 0) == 0) {
    std::string path = url.substr(7);
    if (path.rfind("//", 0) == 0) path = path.substr(2);  // sqlite://PATH
    if (path.empty()) throw Error::InvalidArgument(field + ": sqlite: names no file");
    return {StorageLocation::Kind::kSqlite, path};
  }
  const std::size_t scheme_end = url.find("://");
  if (scheme_end != std::string::npos) {
    throw Error::InvalidArgument(field + ": unknown database scheme '" + url.substr(0, scheme_end) +
                                 "' (expected a SQLite path, sqlite:PATH or postgres://...)");
  }
  return {StorageLocation::Kind::kSqlite, url};
}

Storage open_storage(const std::string& url, const std::string& postgres_schema) {
  const StorageLocation where = parse_storage_url(url);
  Storage storage;
  if (where.kind == StorageLocation::Kind::kSqlite) {
    storage.webhooks = std::make_unique<SqliteWebhookQueue>(where.target);
    storage.store = std::make_unique<SqliteStore>(where.target);
    storage.audit = std::make_unique<AuditLog>(where.target);
    storage.reviews = std::make_unique<SqliteReviewStore>(where.target);
    storage.one_database = !in_memory(where.target);
    return storage;
  }
  const sql::PostgresOptions options{postgres_schema, /*synchronous_commit=*/true};
  auto connect = [&] { return std::make_unique<sql::PostgresConnection>(where.target, options); };
  if (!postgres_schema.empty()) {
    auto first = connect();
    sql::create_postgres_schema(*first, postgres_schema);
  }
  storage.webhooks = std::make_unique<SqlWebhookQueue>(connect());
  storage.store = std::make_unique<SqlStore>(connect(), AssistantWriters::kSeveralProcesses);
  storage.audit = std::make_unique<AuditLog>(connect());
  storage.reviews = std::make_unique<SqlReviewStore>(connect());
  storage.one_database = true;
  storage.shared = true;
  return storage;
}

std::unique_ptr<AuditLog> open_audit_log(const std::string& url, const std::string& field) {
  const StorageLocation where = parse_storage_url(url, field);
  if (where.kind == StorageLocation::Kind::kPostgres) {
    return std::make_unique<AuditLog>(std::make_unique<sql::PostgresConnection>(where.target));
  }
  if (!std::filesystem::exists(where.target)) {
    throw Error::NotFound(field + ": no database at " + where.target);
  }
  return std::make_unique<AuditLog>(where.target);
}

std::shared_ptr<Saver> open_checkpointer(const std::string& url,
                                         const std::string& postgres_schema) {
  const StorageLocation where = parse_storage_url(url);
  if (where.kind == StorageLocation::Kind::kSqlite) {
    return checkpoint_internal::open_shared_sqlite_saver(where.target);
  }
  PostgresSaverOptions options;
  options.schema = postgres_schema;
  return open_postgres_saver(where.target, options);
}

}  // namespace tollgate::server

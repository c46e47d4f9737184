// Storage: where a server keeps its tables, given to it as one bundle of interfaces — the
// server store (assistants, threads, runs, stream events), the review records, the webhook
// queue and the audit log — opened from one database URL:
//
//   ./tollgate.db, sqlite:./tollgate.db, :memory:   a SQLite file (today's layout)
//   postgres://user@host:port/db, postgresql://...  a PostgreSQL database (libpq URI)
//
// Each part has its own row in tollgate_schema; opening creates or migrates the tables. On
// PostgreSQL each part has a connection of its own. On a SQLite file the parts of this process
// share one connection, each taking its lock around its work (sql/connection_lock.h): one
// page cache and one writer, each part's commits as durable as its own setting. The
// checkpointer is not part of the bundle (ServerOptions::checkpointer), but open_checkpointer
// opens the one of the same URL (SqliteSaver or PostgresSaver), on that shared connection for
// SQLite.
#pragma once

#include <memory>
#include <string>

#include "server/audit_log.h"
#include "server/review_store.h"
#include "server/store.h"
#include "server/webhook_queue.h"
#include "tollgate/checkpoint.h"

namespace tollgate::server {

struct Storage {
  std::unique_ptr<ServerStore> store;
  std::unique_ptr<ReviewStore> reviews;
  std::unique_ptr<WebhookQueue> webhooks;
  std::unique_ptr<AuditLog> audit;
  // Every part is on the same database (a SQLite file, a PostgreSQL database), so one part's
  // transaction may write another's tables: a run's notifications are stored with its end
  // (ServerStore::end_run). False for ":memory:", where each connection is a database of its own.
  bool one_database = false;
  // Other processes may use the database at the same time (PostgreSQL: server replicas): the
  // parts were opened for that (the store caches no assistants), and the server polls for
  // what another process wrote (the review deadlines it stored). False for SQLite, which one
  // process uses.
  bool shared = false;
};

// What a database URL names.
struct StorageLocation {
  enum class Kind { kSqlite, kPostgres };
  Kind kind = Kind::kSqlite;
  std::string target;  // the SQLite path, or the PostgreSQL URL as given
};

// Throws Error(kInvalidArgument) naming `field` for an empty URL or another scheme
// ("mysql://..."); a string without "scheme://" is a SQLite path.
StorageLocation parse_storage_url(const std::string& url, const std::string& field = "db");

// Opens every part on the database `url`, in PostgreSQL schema `postgres_schema` when given
// (created if missing; "": the connection's default). Throws Error(kUnavailable) when the
// database cannot be reached ("postgres: cannot connect to 127.0.0.1:5432/tollgate: ..."),
// Error(kConflict) when a schema is newer than this build, Error(kInvalidArgument) for a bad
// URL.
Storage open_storage(const std::string& url, const std::string& postgres_schema = "");

// The audit log alone (`tollgate audit`); Error(kNotFound) naming `field` for a SQLite file
// that does not exist.
std::unique_ptr<AuditLog> open_audit_log(const std::string& url, const std::string& field = "db");

// The checkpointer of the same database (same errors).
std::shared_ptr<Saver> open_checkpointer(const std::string& url,
                                         const std::string& postgres_schema = "");

}  // namespace tollgate::server

// A Saver on PostgreSQL (libpq): for production, and for several processes sharing one
// database.
//
// It stores what the SQLite saver stores, in the same three tables (checkpoints,
// channel_values, writes) and the same way: unchanged channels are never written again and
// list channels given as ListDeltas are stored as deltas, so the bytes written per step do not
// grow with the length of the thread. A put is one round trip (its rows go in one pipeline,
// one implicit transaction); so is put_writes. Every Saver call is atomic.
//
// The schema carries a version (row "checkpoints" of table tollgate_schema in the saver's
// schema); opening runs the numbered migrations the database lacks, under an advisory lock, so
// any number of processes may open (set up) the same database at once. A database whose schema
// is newer than this build is refused.
//
// When the server cannot be reached, calls throw Error(kUnavailable) with a message naming it
// ("postgres: cannot connect to 10.0.0.5:5432/tollgate: ..."); nothing is half-written. A
// connection that broke (a server restart, a failover, pg_terminate_backend) is re-established
// on the next call, and a call that failed on a broken connection is tried once more on a new
// one: every Saver call may be repeated safely.
//
// Thread-safety: every method may be called concurrently; one mutex guards the saver's one
// connection. The saver counts what it stores (Saver::stats()).
#pragma once

#include <memory>
#include <string>

#include "tollgate/checkpoint.h"

namespace tollgate {

// The schema version this build writes (and the highest it can open).
inline constexpr int kPostgresSchemaVersion = 4;

struct PostgresSaverOptions {
  // The PostgreSQL schema holding the tables, created when missing. Empty: the connection's
  // default (normally "public").
  std::string schema;
  // True (the default): a call returns once its commit is durable by the server's settings
  // (with PostgreSQL's defaults, flushed to disk). False: commits return before their WAL is
  // flushed (the session's synchronous_commit = off): several times fewer waits per step; a
  // crash of the database server or its machine may lose the last fraction of a second of
  // checkpoints (never half of one, and never on a crash of this process).
  bool synchronous_commit = true;
};

// Connects to `url` (postgres://user[:password]@host[:port]/database[?sslmode=...], any libpq
// connection URI), creates or migrates the tables (idempotent) and returns the saver. Throws
// Error(kInvalidArgument) for a URL that is not postgres:// or postgresql://,
// Error(kUnavailable) when the server cannot be reached and Error(kConflict) when the schema
// is newer than kPostgresSchemaVersion.
std::shared_ptr<Saver> open_postgres_saver(const std::string& url,
                                           const PostgresSaverOptions& options = {});

}  // namespace tollgate

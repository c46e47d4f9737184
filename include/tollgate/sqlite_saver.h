// The embedded default Saver: one SQLite file (e.g. ./tollgate.db).
//
// The file runs in WAL mode; synchronous=NORMAL by default (a power loss may lose the last
// transactions but never corrupts the file; a process crash loses nothing committed), FULL on
// request. Several processes may share one file (e.g. `tollgate chat` resumed in another
// process): writers wait up to busy_timeout for each other. Every Saver call is one
// transaction. Values are stored like the memory saver stores them: unchanged channels are
// never written again and list channels given as ListDeltas are stored as deltas, so the bytes
// written per step do not grow with the length of the thread.
//
// The schema carries a version (row "checkpoints" of table tollgate_schema, which the server's
// tables sharing the file use too); opening a file runs the numbered migrations it lacks. A
// file whose schema is newer than this build is refused.
//
// Thread-safety: every method of the saver may be called concurrently; one mutex guards its
// connection. The saver counts what it stores (Saver::stats()).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "tollgate/checkpoint.h"

namespace tollgate {

// The schema version this build writes (and the highest it can open).
inline constexpr int kSqliteSchemaVersion = 5;

enum class SqliteSynchronous {
  kNormal,  // durable against process crashes; the default
  kFull,    // also durable against power loss, at the cost of an fsync per commit
};

struct SqliteOptions {
  SqliteSynchronous synchronous = SqliteSynchronous::kNormal;
  // How long a call waits for another connection (or process) holding the write lock.
  std::chrono::milliseconds busy_timeout{5000};
};

// Opens (creating when missing) the SQLite file at `path` and migrates its schema. Throws
// Error(kUnavailable) when the file cannot be opened and Error(kConflict) when its schema is
// newer than kSqliteSchemaVersion.
std::shared_ptr<Saver> open_sqlite_saver(const std::string& path,
                                         const SqliteOptions& options = {});

}  // namespace tollgate

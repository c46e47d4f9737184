// The embedded default Saver: one SQLite file (e.g. ./tollgate.db).
//
// The file runs in WAL mode; synchronous=NORMAL by default (a power loss may lose the last
// transactions but never corrupts the file; a process crash loses nothing committed), FULL on
// request. Several processes may share one file (e.g. `tollgate chat` resumed in another
// process): writers wait up to busy_timeout for each other. Every Saver call is one
// transaction. Values are stored like MemorySaver stores them: unchanged channels are never
// written again and list channels given as ListDeltas are stored as deltas, so the bytes
// written per step do not grow with the length of the thread.
//
// The schema carries a version (table schema_version); opening a file runs the numbered
// migrations it lacks. A file whose schema is newer than this build is refused.
//
// Thread-safety: every method may be called concurrently; one mutex guards the connection.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "tollgate/checkpoint.h"
#include "tollgate/saver_stats.h"

namespace tollgate {

// The schema version this build writes (and the highest it can open).
inline constexpr int kSqliteSchemaVersion = 2;

enum class SqliteSynchronous {
  kNormal,  // durable against process crashes; the default
  kFull,    // also durable against power loss, at the cost of an fsync per commit
};

struct SqliteOptions {
  SqliteSynchronous synchronous = SqliteSynchronous::kNormal;
  // How long a call waits for another connection (or process) holding the write lock.
  std::chrono::milliseconds busy_timeout{5000};
};

class SqliteSaver final : public Saver {
 public:
  // Prefer open_sqlite_saver(). Throws Error(kUnavailable) when the file cannot be opened and
  // Error(kConflict) when its schema is newer than kSqliteSchemaVersion.
  SqliteSaver(const std::string& path, const SqliteOptions& options);
  ~SqliteSaver() override;
  SqliteSaver(const SqliteSaver&) = delete;
  SqliteSaver& operator=(const SqliteSaver&) = delete;

  std::optional<CheckpointTuple> get_tuple(const CheckpointConfig& config,
                                           const GetOptions& options = {}) override;
  std::vector<CheckpointTuple> list(const ListQuery& query) override;
  CheckpointConfig put(const CheckpointConfig& config, const Checkpoint& checkpoint,
                       const Json& metadata, const ChannelVersions& new_versions,
                       const ChannelDeltas& deltas = {}) override;
  void put_writes(const CheckpointConfig& config,
                  const std::vector<std::pair<std::string, Json>>& writes,
                  const std::string& task_id, const std::string& task_path = "") override;
  void delete_thread(const std::string& thread_id) override;
  void prune(const std::vector<std::string>& thread_ids, PruneStrategy strategy) override;
  void copy_thread(const std::string& source_thread_id,
                   const std::string& target_thread_id) override;

  // What this connection has stored so far (bytes: encoded row payloads).
  SaverStats stats() const;
  std::uint64_t bytes_written() const { return stats().bytes_written; }

 private:
  struct Impl;
  mutable std::mutex mutex_;  // guards *impl_ (the connection, its statements, the stats)
  std::unique_ptr<Impl> impl_;
};

std::unique_ptr<SqliteSaver> open_sqlite_saver(const std::string& path,
                                               const SqliteOptions& options = {});

}  // namespace tollgate

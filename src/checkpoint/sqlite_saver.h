// The SQLite saver behind open_sqlite_saver() (tollgate/sqlite_saver.h says what it stores
// and how durably); sqlite_schema.h has its tables.
//
// Thread-safety: every method may be called concurrently; the connection's lock guards it
// (sql/connection_lock.h: the saver's own, or the one of a connection the server's other parts
// on the same file share).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sql/connection_lock.h"
#include "tollgate/checkpoint.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate::checkpoint_internal {

class SqliteSaver final : public Saver {
 public:
  // Throws Error(kUnavailable) when the file cannot be opened and Error(kConflict) when its
  // schema is newer than kSqliteSchemaVersion.
  SqliteSaver(const std::string& path, const SqliteOptions& options);
  // On `connection`, a SqliteConnection other parts may share (its durability is its lock's).
  explicit SqliteSaver(sql::SharedConnection connection);
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
  // The writes and the checkpoint in one transaction.
  CheckpointConfig put_after_writes(const CheckpointConfig& writes_config,
                                    const std::vector<std::pair<std::string, Json>>& writes,
                                    const std::string& task_id, const std::string& task_path,
                                    const CheckpointConfig& config, const Checkpoint& checkpoint,
                                    const Json& metadata, const ChannelVersions& new_versions,
                                    const ChannelDeltas& deltas = {}) override;
  void delete_thread(const std::string& thread_id) override;
  void prune(const std::vector<std::string>& thread_ids, PruneStrategy strategy) override;
  void copy_thread(const std::string& source_thread_id,
                   const std::string& target_thread_id) override;
  // What this connection has stored so far (bytes: encoded row payloads).
  SaverStats stats() const override;

 private:
  struct Impl;
  mutable sql::ConnectionLock mutex_;  // guards *impl_ (the connection, its statements, stats)
  std::unique_ptr<Impl> impl_;
};

// The saver on this process's connection to the SQLite file at `path`, which the server's
// other parts on the file share (sql/connection_lock.h); the same errors as open_sqlite_saver.
std::shared_ptr<Saver> open_shared_sqlite_saver(const std::string& path,
                                                const SqliteOptions& options = {});

}  // namespace tollgate::checkpoint_internal

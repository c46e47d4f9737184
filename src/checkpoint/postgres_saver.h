// The PostgreSQL saver behind open_postgres_saver() (tollgate/postgres_saver.h says what it
// stores and how it fails); postgres_schema.h has its tables, saver_rows.h the row handling it
// shares with the SQLite saver.
//
// Thread-safety: every method may be called concurrently; one mutex guards the connection.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tollgate/checkpoint.h"
#include "tollgate/postgres_saver.h"

namespace tollgate::checkpoint_internal {

class PostgresSaver final : public Saver {
 public:
  PostgresSaver(const std::string& url, const PostgresSaverOptions& options);
  ~PostgresSaver() override;
  PostgresSaver(const PostgresSaver&) = delete;
  PostgresSaver& operator=(const PostgresSaver&) = delete;

  std::optional<CheckpointTuple> get_tuple(const CheckpointConfig& config,
                                           const GetOptions& options = {}) override;
  std::vector<CheckpointTuple> list(const ListQuery& query) override;
  CheckpointConfig put(const CheckpointConfig& config, const Checkpoint& checkpoint,
                       const Json& metadata, const ChannelVersions& new_versions,
                       const ChannelDeltas& deltas = {}) override;
  void put_writes(const CheckpointConfig& config,
                  const std::vector<std::pair<std::string, Json>>& writes,
                  const std::string& task_id, const std::string& task_path = "") override;
  // The writes and the checkpoint in one pipeline: one transaction, one round trip.
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
  mutable std::mutex mutex_;  // guards *impl_ (the connection, its statements, the stats)
  std::unique_ptr<Impl> impl_;
};

}  // namespace tollgate::checkpoint_internal

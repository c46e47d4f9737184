// The memory saver behind make_memory_saver() (tollgate/memory_saver.h says what it keeps and
// how); memory_records.h packs its records.
//
// Thread-safety: every method may be called concurrently; one mutex guards all state.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tollgate/checkpoint.h"

namespace tollgate::checkpoint_internal {

class MemorySaver final : public Saver {
 public:
  MemorySaver();
  ~MemorySaver() override;
  MemorySaver(const MemorySaver&) = delete;
  MemorySaver& operator=(const MemorySaver&) = delete;

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
  SaverStats stats() const override;

 private:
  struct State;
  mutable std::mutex mutex_;  // guards *state_
  std::unique_ptr<State> state_;
};

}  // namespace tollgate::checkpoint_internal

// An in-memory Saver: for tests, demos and runs that need no persistence.
//
// Stores values like the persistent savers do (see Saver::put): unchanged channels are shared
// with the parent checkpoint, list channels given as ListDeltas keep only the appended items,
// with a full copy now and then so that reading any checkpoint stays cheap. Values that came
// with a delta, objects, arrays and pending writes are kept as their MessagePack encoding
// (one compact buffer each, decoded when read; a JSON tree takes several times the bytes, and
// the caller may append to a delta's list in place); nulls share one value; other scalars are
// kept as the caller's JsonPtr (immutable, shared, no copy). A checkpoint's header and
// metadata are one buffer too, naming channels and nodes by index into one table per saver:
// an agent HITL cycle (7 checkpoints, 15 writes) keeps about 10 KB.
//
// Thread-safety: every method may be called concurrently; one mutex guards all state.
#pragma once

#include <memory>
#include <mutex>

#include "tollgate/checkpoint.h"
#include "tollgate/saver_stats.h"

namespace tollgate {

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

  // What has been stored so far; bytes are MessagePack-encoded sizes.
  SaverStats stats() const;
  std::uint64_t bytes_written() const { return stats().bytes_written; }

 private:
  struct State;
  mutable std::mutex mutex_;  // guards *state_
  std::unique_ptr<State> state_;
};

std::unique_ptr<MemorySaver> make_memory_saver();

}  // namespace tollgate

// Checkpoints and the Saver interface that stores them.
//
// A checkpoint is the state of one graph (root or subgraph namespace) of one thread after a
// superstep: channel values, channel versions and which versions each node has seen. Pending
// writes are the writes of tasks that finished in the superstep that started from a
// checkpoint; they make resuming a paused step cheap and exact (finished tasks never re-run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tollgate/clock.h"
#include "tollgate/json.h"
#include "tollgate/saver_stats.h"

namespace tollgate {

using ChannelVersion = std::int64_t;
using ChannelVersions = std::map<std::string, ChannelVersion, std::less<>>;

// Names one checkpoint, or the latest one of (thread, namespace) when checkpoint_id is empty.
struct CheckpointConfig {
  std::string thread_id;
  std::string checkpoint_ns;  // "" for the root graph; "node:task_id[|node:task_id...]" below
  std::string checkpoint_id;  // "" means the latest

  bool operator==(const CheckpointConfig&) const = default;
};
void to_json(Json& j, const CheckpointConfig& config);

// Version of the in-memory checkpoint layout; persisted formats carry their own versions.
inline constexpr int kCheckpointFormatVersion = 1;

struct Checkpoint {
  int v = kCheckpointFormatVersion;
  std::string id;  // time-ordered UUID: a later checkpoint's id compares greater as a string
  std::string ts;  // ISO-8601 UTC creation time
  std::map<std::string, JsonPtr, std::less<>> channel_values;  // only channels holding a value
  ChannelVersions channel_versions;
  std::map<std::string, ChannelVersions, std::less<>> versions_seen;  // node -> channel -> version
  std::vector<std::string> updated_channels;

  bool operator==(const Checkpoint& other) const;  // deep comparison of the values
};

// How a list-valued channel (append, add_messages) changed relative to its value in the
// parent checkpoint: its first `keep` items are unchanged and the items of `appended` (a JSON
// array) follow them. Savers use it to store a step's change instead of the whole list.
struct ListDelta {
  std::size_t keep = 0;
  Json appended = Json::array();
};
using ChannelDeltas = std::map<std::string, ListDelta, std::less<>>;

// Writes of one task, saved as soon as the task finished.
struct PendingWrite {
  std::string task_id;
  std::string channel;
  Json value;

  bool operator==(const PendingWrite&) const = default;
};

struct CheckpointTuple {
  CheckpointConfig config;  // thread_id, checkpoint_ns, checkpoint_id of this checkpoint
  Checkpoint checkpoint;
  Json metadata = Json::object();  // {"source": "input"|"loop"|"update"|"fork", "step": n, ...}
  std::optional<CheckpointConfig> parent_config;
  std::vector<PendingWrite> pending_writes;  // ordered by (task_id, write index)
  // True when the caller asked (GetOptions::reuse_values_of) to skip loading channel values it
  // already holds for this checkpoint, or not to load any (GetOptions::skip_values);
  // checkpoint.channel_values is then empty.
  bool values_reused = false;
};

struct GetOptions {
  // If the checkpoint found has this id, its channel values are not loaded (see
  // CheckpointTuple::values_reused). Lets a caller with a warm copy skip reconstruction.
  std::string reuse_values_of;
  // No checkpoint's channel values are loaded (CheckpointTuple::values_reused is set): for a
  // caller that reads only the checkpoint's id, metadata or pending writes. A saver may load
  // them anyway.
  bool skip_values = false;
};

struct ListQuery {
  std::optional<std::string> thread_id;      // nullopt: every thread
  std::optional<std::string> checkpoint_ns;  // nullopt: every namespace
  std::optional<std::string> checkpoint_id;  // only this checkpoint
  Json filter;                               // object; each key must equal the metadata's
  std::optional<std::string> before;         // only checkpoints whose id is lower than this
  std::optional<std::size_t> limit;
};

enum class PruneStrategy {
  kKeepLatest,  // keep only the newest checkpoint of each namespace (and its writes)
  kDelete,      // delete everything of the thread
};

// Channels with a special meaning in pending writes. They are stored with a fixed negative
// index and replaced when written again; ordinary writes are idempotent (first one wins).
inline constexpr std::string_view kErrorChannel = "__error__";
inline constexpr std::string_view kScheduledChannel = "__scheduled__";
inline constexpr std::string_view kInterruptChannel = "__interrupt__";
inline constexpr std::string_view kResumeChannel = "__resume__";
inline constexpr std::string_view kNoWritesChannel = "__no_writes__";
inline constexpr std::string_view kTasksChannel = "__pregel_tasks";
// The task id of writes that come from a Command given as input, not from a task.
inline constexpr std::string_view kNullTaskId = "00000000-0000-0000-0000-000000000000";

// The fixed index of a special channel's write, or nullopt for an ordinary channel.
std::optional<int> special_write_index(std::string_view channel);
// Whether a pending write to `channel` shows that its task finished: a write to a channel of
// the state, or the mark of a task that wrote nothing (kNoWritesChannel) — not an interrupt,
// resume, error, effect intent or scheduled write.
bool marks_task_finished(std::string_view channel);

// A new checkpoint id: a time-ordered UUID (version 6) whose time is read from `clock` and
// whose clock sequence is the step, so ids compare in creation order within a process (even
// when the clock stands still or goes back) and across restarts. Thread-safe.
std::string new_checkpoint_id(std::int64_t step, const Clock& clock = system_clock());
// The time by `clock` in UTC as ISO-8601 with microseconds, e.g.
// "2026-11-30T03:41:19.123456+00:00" (a checkpoint's `ts`).
std::string utc_timestamp(const Clock& clock = system_clock());

// Stores checkpoints and pending writes.
// Thread-safety: every method may be called concurrently from any thread.
// Errors: invalid arguments (e.g. an empty thread_id on put) throw Error(kInvalidArgument);
// storage failures throw Error(kUnavailable) or Error(kInternal). Nothing is half-written:
// each call is atomic.
class Saver {
 public:
  virtual ~Saver() = default;

  // The checkpoint named by `config` (the latest of its namespace when checkpoint_id is
  // empty), with its pending writes; nullopt when there is none or thread_id is empty.
  virtual std::optional<CheckpointTuple> get_tuple(const CheckpointConfig& config,
                                                   const GetOptions& options = {}) = 0;

  // Checkpoints matching the query, newest first.
  virtual std::vector<CheckpointTuple> list(const ListQuery& query) = 0;

  // Stores `checkpoint` as a child of config.checkpoint_id (empty: a root checkpoint).
  // Only the channels in `new_versions` changed since the parent; the others keep the
  // parent's values and need not be stored again. `deltas` describes list channels as a
  // change of the parent's value. Returns the new checkpoint's config.
  virtual CheckpointConfig put(const CheckpointConfig& config, const Checkpoint& checkpoint,
                               const Json& metadata, const ChannelVersions& new_versions,
                               const ChannelDeltas& deltas = {}) = 0;

  // Saves writes of task `task_id` against the checkpoint config.checkpoint_id.
  virtual void put_writes(const CheckpointConfig& config,
                          const std::vector<std::pair<std::string, Json>>& writes,
                          const std::string& task_id, const std::string& task_path = "") = 0;

  // put_writes(writes_config, writes, task_id, task_path), then put(config, checkpoint, ...):
  // a step's last task's writes and the checkpoint that applies them, which the graph loop
  // saves back to back. A saver that can stores both in one transaction (one commit instead
  // of two); this default checks put()'s arguments, then calls the two methods in turn.
  virtual CheckpointConfig put_after_writes(
      const CheckpointConfig& writes_config,
      const std::vector<std::pair<std::string, Json>>& writes, const std::string& task_id,
      const std::string& task_path, const CheckpointConfig& config, const Checkpoint& checkpoint,
      const Json& metadata, const ChannelVersions& new_versions,
      const ChannelDeltas& deltas = {});

  // Removes every checkpoint and write of the thread, in all namespaces. No-op if unknown.
  virtual void delete_thread(const std::string& thread_id) = 0;

  virtual void prune(const std::vector<std::string>& thread_ids, PruneStrategy strategy) = 0;

  // Copies every checkpoint and write of one thread (all namespaces) to another thread id.
  virtual void copy_thread(const std::string& source_thread_id,
                           const std::string& target_thread_id) = 0;

  // The version a channel gets when it is updated; versions only need to increase.
  virtual ChannelVersion next_version(std::optional<ChannelVersion> current) const {
    return current ? *current + 1 : 1;
  }

  // What this saver has stored so far (see SaverStats), for benchmarks and tests. A saver
  // that keeps no counters returns zeros; a saver wrapping another returns the inner one's.
  virtual SaverStats stats() const { return {}; }
};

}  // namespace tollgate

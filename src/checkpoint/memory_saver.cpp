#include "tollgate/memory_saver.h"

#include <algorithm>
#include <tuple>

#include "checkpoint/saver_checks.h"
#include "checkpoint/value_store.h"
#include "tollgate/error.h"

namespace tollgate {

using checkpoint_internal::encoded_size;
using checkpoint_internal::StoredValue;
using checkpoint_internal::StoredValues;
using checkpoint_internal::ValueRef;
using checkpoint_internal::ValueRefs;

namespace {

struct StoredWrite {
  int idx = 0;  // the write's index in its task, or its special channel's fixed index
  std::string channel;
  std::vector<std::uint8_t> value;  // MessagePack: one compact buffer, not a JSON tree
};
// The writes of one task against one checkpoint, ordered by idx: (task id, idx) is the order
// writes come back in.
struct TaskWrites {
  std::string task_path;
  std::vector<StoredWrite> writes;
};
using StoredWrites = std::map<std::string, TaskWrites, std::less<>>;  // by task id

struct StoredCheckpoint {
  std::string parent_id;
  Checkpoint header;  // everything but channel_values
  Json metadata;
  ValueRefs refs;       // where each channel's value is
  StoredValues values;  // the values this checkpoint stored itself
};

struct NamespaceStore {
  std::map<std::string, StoredCheckpoint, std::less<>> checkpoints;  // by id
  std::map<std::string, StoredWrites, std::less<>> writes;           // by checkpoint id
};
using ThreadStore = std::map<std::string, NamespaceStore, std::less<>>;  // by namespace

// `memo` (optional): values rebuilt earlier in the same listing; `memo_prefix` names the
// thread, namespace and channel in it.
JsonPtr load_value(const NamespaceStore& store, const std::string& channel, const ValueRef& ref,
                   checkpoint_internal::ValueMemo* memo = nullptr,
                   std::string_view memo_prefix = {}) {
  return checkpoint_internal::reconstruct_value(
      ref,
      [&](const std::string& writer_id) -> const StoredValue& {
        auto checkpoint = store.checkpoints.find(writer_id);
        if (checkpoint != store.checkpoints.end()) {
          auto value = checkpoint->second.values.find(channel);
          if (value != checkpoint->second.values.end()) return value->second;
        }
        throw Error::Internal("value of channel '" + channel + "' stored by checkpoint " +
                              writer_id + " is missing");
      },
      memo, memo_prefix);
}

CheckpointTuple make_tuple(const std::string& thread_id, const std::string& ns,
                           const NamespaceStore& store, const StoredCheckpoint& stored,
                           const GetOptions& options,
                           checkpoint_internal::ValueMemo* memo = nullptr) {
  CheckpointTuple tuple;
  tuple.config = CheckpointConfig{thread_id, ns, stored.header.id};
  tuple.checkpoint = stored.header;
  tuple.metadata = stored.metadata;
  if (!stored.parent_id.empty())
    tuple.parent_config = CheckpointConfig{thread_id, ns, stored.parent_id};
  if (!options.reuse_values_of.empty() && options.reuse_values_of == stored.header.id) {
    tuple.values_reused = true;
  } else {
    std::string prefix;
    for (const auto& [channel, ref] : stored.refs) {
      if (memo != nullptr) prefix = thread_id + '\0' + ns + '\0' + channel + '\0';
      tuple.checkpoint.channel_values.emplace(channel,
                                              load_value(store, channel, ref, memo, prefix));
    }
  }
  auto writes = store.writes.find(stored.header.id);
  if (writes != store.writes.end()) {
    for (const auto& [task_id, task] : writes->second) {
      for (const StoredWrite& write : task.writes) {
        tuple.pending_writes.push_back(PendingWrite{
            task_id, write.channel,
            checkpoint_internal::decode_value(write.value.data(), write.value.size())});
      }
    }
  }
  return tuple;
}

}  // namespace

struct MemorySaver::State {
  std::map<std::string, ThreadStore, std::less<>> threads;
  SaverStats stats;

  const NamespaceStore* find_namespace(std::string_view thread_id, std::string_view ns) const {
    auto thread = threads.find(thread_id);
    if (thread == threads.end()) return nullptr;
    auto store = thread->second.find(ns);
    return store == thread->second.end() ? nullptr : &store->second;
  }
};

MemorySaver::MemorySaver() : state_(std::make_unique<State>()) {}
MemorySaver::~MemorySaver() = default;

std::unique_ptr<MemorySaver> make_memory_saver() {
  return std::make_unique<MemorySaver>();
}

SaverStats MemorySaver::stats() const {
  std::lock_guard lock(mutex_);
  return state_->stats;
}

std::optional<CheckpointTuple> MemorySaver::get_tuple(const CheckpointConfig& config,
                                                      const GetOptions& options) {
  if (config.thread_id.empty()) return std::nullopt;
  std::lock_guard lock(mutex_);
  const NamespaceStore* store = state_->find_namespace(config.thread_id, config.checkpoint_ns);
  if (store == nullptr || store->checkpoints.empty()) return std::nullopt;
  const StoredCheckpoint* stored = nullptr;
  if (config.checkpoint_id.empty()) {
    stored = &store->checkpoints.rbegin()->second;
  } else {
    auto it = store->checkpoints.find(config.checkpoint_id);
    if (it == store->checkpoints.end()) return std::nullopt;
    stored = &it->second;
  }
  return make_tuple(config.thread_id, config.checkpoint_ns, *store, *stored, options);
}

std::vector<CheckpointTuple> MemorySaver::list(const ListQuery& query) {
  checkpoint_internal::check_filter(query.filter);
  std::lock_guard lock(mutex_);
  struct Match {
    const std::string* thread_id;
    const std::string* ns;
    const NamespaceStore* store;
    const StoredCheckpoint* checkpoint;
  };
  std::vector<Match> matches;
  for (const auto& [thread_id, thread] : state_->threads) {
    if (query.thread_id && *query.thread_id != thread_id) continue;
    for (const auto& [ns, store] : thread) {
      if (query.checkpoint_ns && *query.checkpoint_ns != ns) continue;
      for (const auto& [id, checkpoint] : store.checkpoints) {
        if (query.checkpoint_id && *query.checkpoint_id != id) continue;
        if (query.before && !(id < *query.before)) continue;
        if (!checkpoint_internal::metadata_matches(checkpoint.metadata, query.filter)) continue;
        matches.push_back(Match{&thread_id, &ns, &store, &checkpoint});
      }
    }
  }
  std::sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) {
    return std::tie(a.checkpoint->header.id, *a.thread_id, *a.ns) >
           std::tie(b.checkpoint->header.id, *b.thread_id, *b.ns);
  });
  if (query.limit && matches.size() > *query.limit) matches.resize(*query.limit);
  std::vector<CheckpointTuple> tuples;
  tuples.reserve(matches.size());
  checkpoint_internal::ValueMemo memo;  // checkpoints of a history share their values
  for (const Match& match : matches) {
    tuples.push_back(
        make_tuple(*match.thread_id, *match.ns, *match.store, *match.checkpoint, {}, &memo));
  }
  return tuples;
}

CheckpointConfig MemorySaver::put(const CheckpointConfig& config, const Checkpoint& checkpoint,
                                  const Json& metadata, const ChannelVersions& new_versions,
                                  const ChannelDeltas& deltas) {
  checkpoint_internal::check_put_arguments(config, checkpoint, metadata);
  std::lock_guard lock(mutex_);
  NamespaceStore& store = state_->threads[config.thread_id][config.checkpoint_ns];
  checkpoint_internal::ParentValues parent;
  if (!config.checkpoint_id.empty() && config.checkpoint_id != checkpoint.id) {
    auto it = store.checkpoints.find(config.checkpoint_id);
    if (it != store.checkpoints.end()) {
      parent.refs = &it->second.refs;
      parent.versions = &it->second.header.channel_versions;
    }
  }
  checkpoint_internal::ValuePlan plan = checkpoint_internal::plan_values(
      checkpoint, parent, new_versions, deltas, checkpoint_internal::Encoding::kCompact);

  StoredCheckpoint stored;
  stored.parent_id = config.checkpoint_id == checkpoint.id ? "" : config.checkpoint_id;
  stored.header.v = checkpoint.v;
  stored.header.id = checkpoint.id;
  stored.header.ts = checkpoint.ts;
  stored.header.channel_versions = checkpoint.channel_versions;
  stored.header.versions_seen = checkpoint.versions_seen;
  stored.header.updated_channels = checkpoint.updated_channels;
  stored.metadata = metadata;
  stored.refs = std::move(plan.refs);
  SaverStats& stats = state_->stats;
  for (const auto& [channel, value] : plan.stored) {
    (value.is_delta ? stats.delta_values_written : stats.full_values_written) += 1;
  }
  stored.values = std::move(plan.stored);
  const std::uint64_t metadata_bytes = encoded_size(metadata);
  stats.bytes_written += plan.bytes + metadata_bytes;
  stats.value_bytes_written += plan.bytes;
  stats.checkpoints_written += 1;
  store.checkpoints.insert_or_assign(checkpoint.id, std::move(stored));
  return CheckpointConfig{config.thread_id, config.checkpoint_ns, checkpoint.id};
}

void MemorySaver::put_writes(const CheckpointConfig& config,
                             const std::vector<std::pair<std::string, Json>>& writes,
                             const std::string& task_id, const std::string& task_path) {
  checkpoint_internal::check_put_writes_arguments(config, task_id);
  std::lock_guard lock(mutex_);
  StoredWrites& stored =
      state_->threads[config.thread_id][config.checkpoint_ns].writes[config.checkpoint_id];
  auto task = stored.find(task_id);
  if (task == stored.end()) task = stored.emplace(task_id, TaskWrites{task_path, {}}).first;
  std::vector<StoredWrite>& task_writes = task->second.writes;
  task_writes.reserve(task_writes.size() + writes.size());
  for (std::size_t i = 0; i < writes.size(); ++i) {
    const auto& [channel, value] = writes[i];
    const std::optional<int> special = special_write_index(channel);
    const int idx = special.value_or(static_cast<int>(i));
    auto at = std::lower_bound(task_writes.begin(), task_writes.end(), idx,
                               [](const StoredWrite& write, int key) { return write.idx < key; });
    const bool exists = at != task_writes.end() && at->idx == idx;
    if (exists && !special) continue;  // first write wins
    StoredWrite write{idx, channel, checkpoint_internal::encode_value(value)};
    state_->stats.writes_written += 1;
    state_->stats.bytes_written += write.value.size();
    if (exists) {
      *at = std::move(write);
    } else {
      task_writes.insert(at, std::move(write));
    }
  }
}

void MemorySaver::delete_thread(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  state_->threads.erase(thread_id);
}

void MemorySaver::prune(const std::vector<std::string>& thread_ids, PruneStrategy strategy) {
  std::lock_guard lock(mutex_);
  for (const std::string& thread_id : thread_ids) {
    auto thread = state_->threads.find(thread_id);
    if (thread == state_->threads.end()) continue;
    if (strategy == PruneStrategy::kDelete) {
      state_->threads.erase(thread);
      continue;
    }
    for (auto& [ns, store] : thread->second) {
      if (store.checkpoints.empty()) {
        store.writes.clear();
        continue;
      }
      StoredCheckpoint& latest = std::prev(store.checkpoints.end())->second;
      // The latest checkpoint may refer to values stored by the checkpoints being removed.
      StoredValues values;
      ValueRefs refs;
      for (const auto& [channel, ref] : latest.refs) {
        JsonPtr value = load_value(store, channel, ref);
        const std::size_t length = value->is_array() ? value->size() : 0;
        refs.emplace(channel,
                     ValueRef{latest.header.id, latest.header.id, length, 0, encoded_size(*value)});
        values.emplace(channel, StoredValue{false, "", 0, std::move(value), {}});
      }
      latest.refs = std::move(refs);
      latest.values = std::move(values);
      const std::string latest_id = latest.header.id;
      auto latest_node = store.checkpoints.extract(latest_id);
      store.checkpoints.clear();
      store.checkpoints.insert(std::move(latest_node));
      auto latest_writes = store.writes.extract(store.checkpoints.begin()->first);
      store.writes.clear();
      if (latest_writes) store.writes.insert(std::move(latest_writes));
    }
  }
}

void MemorySaver::copy_thread(const std::string& source_thread_id,
                              const std::string& target_thread_id) {
  if (source_thread_id.empty() || target_thread_id.empty()) {
    throw Error::InvalidArgument("copy_thread: thread ids are required");
  }
  std::lock_guard lock(mutex_);
  if (source_thread_id == target_thread_id) return;
  auto source = state_->threads.find(source_thread_id);
  if (source == state_->threads.end()) return;
  ThreadStore copy = source->second;  // values are shared immutable JsonPtrs: a cheap copy
  ThreadStore& target = state_->threads[target_thread_id];
  for (auto& [ns, store] : copy) {
    NamespaceStore& target_store = target[ns];
    for (auto& [id, checkpoint] : store.checkpoints) {
      target_store.checkpoints.insert_or_assign(id, std::move(checkpoint));
    }
    for (auto& [id, writes] : store.writes) {
      target_store.writes.insert_or_assign(id, std::move(writes));
    }
  }
}

}  // namespace tollgate

#include "checkpoint/memory_saver.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "checkpoint/memory_records.h"
#include "checkpoint/saver_checks.h"
#include "checkpoint/value_store.h"
#include "tollgate/error.h"
#include "tollgate/memory_saver.h"

namespace tollgate {
namespace checkpoint_internal {
namespace {

using memory_internal::NameTable;
using memory_internal::pack_record;
using memory_internal::TaskWrites;
using memory_internal::unpack_header;
using memory_internal::unpack_metadata;
using memory_internal::unpack_version;
// The writes against one checkpoint, ordered by task id.
using StoredWrites = std::vector<TaskWrites>;

// A channel's entry in a stored checkpoint, the channel named by its NameTable index.
struct ChannelRef {
  std::uint32_t channel = 0;
  ValueRef ref;
};
struct ChannelValue {
  std::uint32_t channel = 0;
  StoredValue value;
};

struct StoredCheckpoint {
  checkpoint_internal::SharedId id;  // shared with the refs to the values it stores
  std::vector<std::uint8_t> record;  // parent id, header (but id and values) and metadata
  std::vector<ChannelRef> refs;      // where each channel's value is, in channel order
  std::vector<ChannelValue> values;  // the values this checkpoint stored, in channel order
  StoredWrites writes;               // the pending writes against it
};

// The entry of `channel` in `entries` (in channel order); nullptr when there is none.
template <class Entry>
const Entry* find_channel(const std::vector<Entry>& entries, const NameTable& names,
                          std::string_view channel) {
  auto it = std::lower_bound(entries.begin(), entries.end(), channel,
                             [&names](const Entry& entry, std::string_view key) {
                               return names.name(entry.channel) < key;
                             });
  if (it == entries.end() || names.name(it->channel) != channel) return nullptr;
  return &*it;
}

// Takes plan_values' decisions into a StoredCheckpoint: the refs directly (one per channel),
// the values through `values_scratch` so that the checkpoint's vector gets exactly their
// number (call finish()).
class StorePlan final : public checkpoint_internal::ValuePlanSink {
 public:
  StorePlan(StoredCheckpoint& stored, NameTable& names, SaverStats& stats,
            std::vector<ChannelValue>& values_scratch)
      : stored_(stored), names_(names), stats_(stats), values_(values_scratch) {
    values_.clear();
  }

  void add_ref(const std::string& channel, ValueRef ref, bool set_here) override {
    if (set_here) stats_.full_values_written += 1;
    stored_.refs.push_back(ChannelRef{names_.intern(channel), std::move(ref)});
  }
  void add_stored(const std::string& channel, StoredValue value) override {
    (value.is_delta ? stats_.delta_values_written : stats_.full_values_written) += 1;
    values_.push_back(ChannelValue{names_.intern(channel), std::move(value)});
  }
  void finish() {
    stored_.values.reserve(values_.size());
    std::move(values_.begin(), values_.end(), std::back_inserter(stored_.values));
    values_.clear();
  }

 private:
  StoredCheckpoint& stored_;
  NameTable& names_;
  SaverStats& stats_;
  std::vector<ChannelValue>& values_;
};

struct NamespaceStore {
  // Ordered by id. Ids grow with time, so a new checkpoint goes at the end.
  std::vector<StoredCheckpoint> checkpoints;
  // Writes against a checkpoint not stored (yet), by its id; they move into it when it is.
  std::map<std::string, StoredWrites, std::less<>> early_writes;

  std::vector<StoredCheckpoint>::iterator lower_bound(std::string_view id) {
    if (checkpoints.empty() || checkpoints.back().id.str() < id) return checkpoints.end();
    return std::lower_bound(
        checkpoints.begin(), checkpoints.end(), id,
        [](const StoredCheckpoint& entry, std::string_view key) { return entry.id.str() < key; });
  }
  StoredCheckpoint* find(std::string_view id) {
    auto it = lower_bound(id);
    return it != checkpoints.end() && it->id.str() == id ? &*it : nullptr;
  }
  const StoredCheckpoint* find(std::string_view id) const {
    return const_cast<NamespaceStore*>(this)->find(id);  // NOLINT: same lookup, read only
  }
  // Stores `checkpoint` in its place, replacing one with the same id.
  void insert(StoredCheckpoint checkpoint) {
    auto it = lower_bound(checkpoint.id.str());
    if (it != checkpoints.end() && it->id == checkpoint.id) {
      *it = std::move(checkpoint);
    } else {
      checkpoints.insert(it, std::move(checkpoint));
    }
  }
};
using ThreadStore = std::map<std::string, NamespaceStore, std::less<>>;  // by namespace

// `memo` (optional): values rebuilt earlier in the same listing; `memo_prefix` names the
// thread, namespace and channel in it.
JsonPtr load_value(const NamespaceStore& store, const NameTable& names, const std::string& channel,
                   const ValueRef& ref, checkpoint_internal::ValueMemo* memo = nullptr,
                   std::string_view memo_prefix = {}) {
  return checkpoint_internal::reconstruct_value(
      ref,
      [&](const std::string& writer_id) -> const StoredValue& {
        const StoredCheckpoint* checkpoint = store.find(writer_id);
        if (checkpoint != nullptr) {
          const ChannelValue* value = find_channel(checkpoint->values, names, channel);
          if (value != nullptr) return value->value;
        }
        throw Error::Internal("value of channel '" + channel + "' stored by checkpoint " +
                              writer_id + " is missing");
      },
      memo, memo_prefix);
}

CheckpointTuple build_tuple(const std::string& thread_id, const std::string& ns,
                            const NameTable& names, const NamespaceStore& store,
                            const StoredCheckpoint& stored, const GetOptions& options,
                            checkpoint_internal::ValueMemo* memo = nullptr) {
  const std::string& id = stored.id;
  CheckpointTuple tuple;
  tuple.config = CheckpointConfig{thread_id, ns, id};
  tuple.checkpoint.id = id;
  const std::string_view parent_id = unpack_header(stored.record, names, tuple.checkpoint);
  tuple.metadata = unpack_metadata(stored.record);
  if (!parent_id.empty())
    tuple.parent_config = CheckpointConfig{thread_id, ns, std::string(parent_id)};
  if (options.skip_values || (!options.reuse_values_of.empty() && options.reuse_values_of == id)) {
    tuple.values_reused = true;
  } else {
    std::string prefix;
    for (const auto& [channel_id, ref] : stored.refs) {
      const std::string& channel = names.name(channel_id);
      if (memo != nullptr) prefix = thread_id + '\0' + ns + '\0' + channel + '\0';
      tuple.checkpoint.channel_values.emplace_hint(
          tuple.checkpoint.channel_values.end(), channel,
          load_value(store, names, channel, ref, memo, prefix));
    }
  }
  for (const TaskWrites& task : stored.writes) {
    memory_internal::unpack_writes(task, names, tuple.pending_writes);
  }
  return tuple;
}

}  // namespace

struct MemorySaver::State {
  // Hashed: a lookup costs the same with a million threads. (list() sorts what it returns.)
  struct ThreadIdHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
  };
  std::unordered_map<std::string, ThreadStore, ThreadIdHash, std::equal_to<>> threads;
  NameTable names;                           // of every record in `threads`
  std::vector<std::uint8_t> scratch;         // reused by each put and put_writes
  std::vector<ChannelValue> values_scratch;  // reused by each put
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
  const StoredCheckpoint* stored =
      config.checkpoint_id.empty() ? &store->checkpoints.back() : store->find(config.checkpoint_id);
  if (stored == nullptr) return std::nullopt;
  return build_tuple(config.thread_id, config.checkpoint_ns, state_->names, *store, *stored,
                     options);
}

std::vector<CheckpointTuple> MemorySaver::list(const ListQuery& query) {
  checkpoint_internal::check_filter(query.filter);
  std::lock_guard lock(mutex_);
  struct Match {
    const std::string* thread_id;
    const std::string* ns;
    const NamespaceStore* store;
    const std::string* id;
    const StoredCheckpoint* checkpoint;
  };
  const bool filtered = query.filter.is_object() && !query.filter.empty();
  std::vector<Match> matches;
  for (const auto& [thread_id, thread] : state_->threads) {
    if (query.thread_id && *query.thread_id != thread_id) continue;
    for (const auto& [ns, store] : thread) {
      if (query.checkpoint_ns && *query.checkpoint_ns != ns) continue;
      for (const StoredCheckpoint& checkpoint : store.checkpoints) {
        const std::string& id = checkpoint.id;
        if (query.checkpoint_id && *query.checkpoint_id != id) continue;
        if (query.before && !(id < *query.before)) continue;
        if (filtered && !checkpoint_internal::metadata_matches(unpack_metadata(checkpoint.record),
                                                               query.filter)) {
          continue;
        }
        matches.push_back(Match{&thread_id, &ns, &store, &id, &checkpoint});
      }
    }
  }
  std::sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) {
    return std::tie(*a.id, *a.thread_id, *a.ns) > std::tie(*b.id, *b.thread_id, *b.ns);
  });
  if (query.limit && matches.size() > *query.limit) matches.resize(*query.limit);
  std::vector<CheckpointTuple> tuples;
  tuples.reserve(matches.size());
  checkpoint_internal::ValueMemo memo;  // checkpoints of a history share their values
  for (const Match& match : matches) {
    tuples.push_back(build_tuple(*match.thread_id, *match.ns, state_->names, *match.store,
                                 *match.checkpoint, {}, &memo));
  }
  return tuples;
}

CheckpointConfig MemorySaver::put(const CheckpointConfig& config, const Checkpoint& checkpoint,
                                  const Json& metadata, const ChannelVersions& new_versions,
                                  const ChannelDeltas& deltas) {
  checkpoint_internal::check_put_arguments(config, checkpoint, metadata);
  std::lock_guard lock(mutex_);
  NamespaceStore& store = state_->threads[config.thread_id][config.checkpoint_ns];
  const bool has_parent = !config.checkpoint_id.empty() && config.checkpoint_id != checkpoint.id;
  checkpoint_internal::ParentValues parent;
  if (has_parent) {
    if (const StoredCheckpoint* found = store.find(config.checkpoint_id); found != nullptr) {
      const StoredCheckpoint& stored = *found;
      const NameTable& names = state_->names;
      parent.refs = checkpoint_internal::ParentRefs(
          [&stored, &names](std::string_view channel) -> const ValueRef* {
            const ChannelRef* entry = find_channel(stored.refs, names, channel);
            return entry == nullptr ? nullptr : &entry->ref;
          });
      parent.versions =
          checkpoint_internal::ParentVersions([&stored, &names](std::string_view channel) {
            return unpack_version(stored.record, names, channel);
          });
    }
  }
  SaverStats& stats = state_->stats;
  const std::uint64_t metadata_bytes = encoded_size(metadata);
  StoredCheckpoint stored;
  stored.id = checkpoint_internal::SharedId(checkpoint.id);
  stored.record = pack_record(has_parent ? config.checkpoint_id : "", checkpoint, metadata,
                              metadata_bytes, state_->names, state_->scratch);
  stored.refs.reserve(checkpoint.channel_values.size());
  StorePlan sink(stored, state_->names, stats, state_->values_scratch);
  const std::uint64_t value_bytes =
      checkpoint_internal::plan_values(checkpoint, stored.id, parent, new_versions, deltas,
                                       checkpoint_internal::Encoding::kCompact, sink);
  sink.finish();
  stats.bytes_written += value_bytes + metadata_bytes;
  stats.value_bytes_written += value_bytes;
  stats.checkpoints_written += 1;
  // Writes already stored against this id stay with it. (The parent found above may move:
  // it is not used past this point.)
  if (StoredCheckpoint* existing = store.find(checkpoint.id); existing != nullptr) {
    stored.writes = std::move(existing->writes);
  } else if (auto early = store.early_writes.find(checkpoint.id);
             early != store.early_writes.end()) {
    stored.writes = std::move(early->second);
    store.early_writes.erase(early);
  }
  store.insert(std::move(stored));
  return CheckpointConfig{config.thread_id, config.checkpoint_ns, checkpoint.id};
}

// The task path is not kept: nothing reads it back.
void MemorySaver::put_writes(const CheckpointConfig& config,
                             const std::vector<std::pair<std::string, Json>>& writes,
                             const std::string& task_id, const std::string& /*task_path*/) {
  checkpoint_internal::check_put_writes_arguments(config, task_id);
  std::lock_guard lock(mutex_);
  NamespaceStore& store = state_->threads[config.thread_id][config.checkpoint_ns];
  StoredCheckpoint* checkpoint = store.find(config.checkpoint_id);
  StoredWrites& stored =
      checkpoint != nullptr ? checkpoint->writes : store.early_writes[config.checkpoint_id];
  auto task = std::lower_bound(
      stored.begin(), stored.end(), task_id,
      [](const TaskWrites& entry, const std::string& key) { return entry.task_id() < key; });
  if (task == stored.end() || task->task_id() != task_id) {
    task = stored.insert(task, TaskWrites(task_id));
  }
  const auto [added, bytes] =
      memory_internal::add_writes(*task, writes, state_->names, state_->scratch);
  state_->stats.writes_written += added;
  state_->stats.bytes_written += bytes;
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
      store.early_writes.clear();
      if (store.checkpoints.empty()) continue;
      StoredCheckpoint& latest = store.checkpoints.back();
      // The latest checkpoint may refer to values stored by the checkpoints being removed.
      std::vector<ChannelValue> values;
      std::vector<ChannelRef> refs;
      const checkpoint_internal::SharedId& self = latest.id;
      for (const auto& [channel, ref] : latest.refs) {
        JsonPtr value = load_value(store, state_->names, state_->names.name(channel), ref);
        std::optional<InlineValue> inlined = checkpoint_internal::inline_encoding(*value);
        const std::uint64_t bytes = inlined ? inlined->size : encoded_size(*value);
        refs.push_back(
            ChannelRef{channel, checkpoint_internal::full_value_ref(self, *value, bytes, inlined)});
        if (!inlined) {
          values.push_back(ChannelValue{channel, StoredValue{false, {}, 0, std::move(value), {}}});
        }
      }
      latest.refs = std::move(refs);
      latest.values = std::move(values);
      store.checkpoints.erase(store.checkpoints.begin(), store.checkpoints.end() - 1);
      store.checkpoints.shrink_to_fit();
    }
  }
}

void MemorySaver::copy_thread(const std::string& source_thread_id,
                              const std::string& target_thread_id) {
  if (!checkpoint_internal::check_copy_thread_arguments(source_thread_id, target_thread_id)) return;
  std::lock_guard lock(mutex_);
  auto source = state_->threads.find(source_thread_id);
  if (source == state_->threads.end()) return;
  ThreadStore copy = source->second;  // values are shared immutable JsonPtrs: a cheap copy
  ThreadStore& target = state_->threads[target_thread_id];
  for (auto& [ns, store] : copy) {
    NamespaceStore& target_store = target[ns];
    for (StoredCheckpoint& checkpoint : store.checkpoints) {
      target_store.insert(std::move(checkpoint));
    }
    for (auto& [id, writes] : store.early_writes) {
      target_store.early_writes.insert_or_assign(id, std::move(writes));
    }
  }
}

}  // namespace checkpoint_internal

std::shared_ptr<Saver> make_memory_saver() {
  return std::make_shared<checkpoint_internal::MemorySaver>();
}

}  // namespace tollgate

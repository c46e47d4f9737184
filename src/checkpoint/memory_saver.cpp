#include "tollgate/memory_saver.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

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

// The channel and node names of a saver's records, each stored once: a record refers to a
// name by its index. Names come from graph definitions, so the table stays small.
class NameTable {
 public:
  std::uint32_t intern(std::string_view name) {
    auto it = index_.find(name);
    if (it != index_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(names_.size());
    const std::string& stored = names_.emplace_back(name);  // deque: references stay valid
    index_.emplace(stored, id);
    return id;
  }
  std::optional<std::uint32_t> find(std::string_view name) const {
    auto it = index_.find(name);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }
  const std::string& name(std::uint64_t id) const {
    if (id >= names_.size()) {
      throw Error::Internal("memory saver: a stored checkpoint record is damaged");
    }
    return names_[id];
  }

 private:
  std::deque<std::string> names_;
  std::unordered_map<std::string_view, std::uint32_t> index_;
};

// A stored checkpoint's header (all but its id and values), parent id and metadata, packed
// in one buffer: one allocation instead of a node per channel version, node and metadata
// member, and names as indexes into the saver's NameTable. Only get_tuple and list unpack
// it; put reads the parent's versions in place.
// Layout (numbers as LEB128 varints, signed ones zigzagged; a string is its length and
// bytes; a name is its NameTable index):
//   u32 (little-endian) offset of the metadata, parent id, ts, v, versions, node count and
//   per node its name and versions, count and the updated channels' names, metadata as
//   MessagePack; versions are a count and per channel its name and version.
class RecordWriter {
 public:
  // out == nullptr: only count the bytes.
  RecordWriter(std::uint8_t* out, NameTable& names) : out_(out), names_(names) {}

  void u32(std::uint32_t n) { raw(&n, sizeof n); }
  void varint(std::uint64_t n) {
    while (n >= 0x80) {
      byte(static_cast<std::uint8_t>(n | 0x80));
      n >>= 7;
    }
    byte(static_cast<std::uint8_t>(n));
  }
  void signed_varint(std::int64_t n) {
    varint((static_cast<std::uint64_t>(n) << 1) ^ static_cast<std::uint64_t>(n >> 63));
  }
  void str(std::string_view text) {
    varint(text.size());
    raw(text.data(), text.size());
  }
  void name(std::string_view text) { varint(names_.intern(text)); }
  void versions(const ChannelVersions& versions) {
    varint(versions.size());
    for (const auto& [channel, version] : versions) {
      name(channel);
      signed_varint(version);
    }
  }
  std::size_t size() const { return size_; }

 private:
  void byte(std::uint8_t b) {
    if (out_ != nullptr) out_[size_] = b;
    ++size_;
  }
  void raw(const void* data, std::size_t length) {
    if (out_ != nullptr && length > 0) std::memcpy(out_ + size_, data, length);
    size_ += length;
  }
  std::uint8_t* out_;
  NameTable& names_;
  std::size_t size_ = 0;
};

class RecordReader {
 public:
  RecordReader(const std::vector<std::uint8_t>& record, const NameTable& names)
      : at_(record.data()), end_(record.data() + record.size()), names_(names) {}

  std::uint32_t u32() {
    std::uint32_t n = 0;
    need(sizeof n);
    std::memcpy(&n, at_, sizeof n);
    at_ += sizeof n;
    return n;
  }
  std::uint64_t varint() {
    std::uint64_t n = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      need(1);
      const std::uint8_t b = *at_++;
      n |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return n;
    }
    throw Error::Internal("memory saver: a stored checkpoint record is damaged");
  }
  std::int64_t signed_varint() {
    const std::uint64_t n = varint();
    return static_cast<std::int64_t>((n >> 1) ^ (~(n & 1) + 1));
  }
  std::string_view str() {
    const std::uint64_t length = varint();
    need(length);
    std::string_view text(reinterpret_cast<const char*>(at_), length);
    at_ += length;
    return text;
  }
  const std::string& name() { return names_.name(varint()); }
  ChannelVersions versions() {
    ChannelVersions versions;
    for (std::uint64_t n = varint(); n > 0; --n) {
      const std::string& channel = name();
      versions.emplace_hint(versions.end(), channel, signed_varint());
    }
    return versions;
  }
  // The version of the channel named `channel_id` while reading versions; skips past them.
  std::optional<ChannelVersion> find_version(std::uint64_t channel_id) {
    std::optional<ChannelVersion> found;
    for (std::uint64_t n = varint(); n > 0; --n) {
      const std::uint64_t id = varint();
      const std::int64_t version = signed_varint();
      if (id == channel_id) found = version;
    }
    return found;
  }

 private:
  void need(std::uint64_t length) const {
    if (static_cast<std::uint64_t>(end_ - at_) < length) {
      throw Error::Internal("memory saver: a stored checkpoint record is damaged");
    }
  }
  const std::uint8_t* at_;
  const std::uint8_t* end_;
  const NameTable& names_;
};

template <class Writer>
void write_header(Writer& out, std::string_view parent_id, const Checkpoint& checkpoint) {
  out.u32(0);  // the metadata's offset, filled in once known
  out.str(parent_id);
  out.str(checkpoint.ts);
  out.signed_varint(checkpoint.v);
  out.versions(checkpoint.channel_versions);
  out.varint(checkpoint.versions_seen.size());
  for (const auto& [node, versions] : checkpoint.versions_seen) {
    out.name(node);
    out.versions(versions);
  }
  out.varint(checkpoint.updated_channels.size());
  for (const std::string& channel : checkpoint.updated_channels) out.name(channel);
}

std::vector<std::uint8_t> pack_record(std::string_view parent_id, const Checkpoint& checkpoint,
                                      const Json& metadata, std::uint64_t metadata_bytes,
                                      NameTable& names) {
  RecordWriter counter(nullptr, names);
  write_header(counter, parent_id, checkpoint);
  std::vector<std::uint8_t> record(counter.size() + metadata_bytes);
  RecordWriter writer(record.data(), names);
  write_header(writer, parent_id, checkpoint);
  const auto offset = static_cast<std::uint32_t>(writer.size());
  std::memcpy(record.data(), &offset, sizeof offset);
  checkpoint_internal::write_value(metadata, record.data() + offset);
  return record;
}

Json unpack_metadata(const std::vector<std::uint8_t>& record) {
  std::uint32_t offset = 0;
  std::memcpy(&offset, record.data(), sizeof offset);
  return checkpoint_internal::decode_value(record.data() + offset, record.size() - offset);
}

// Unpacks the header into `checkpoint` (which has its id) and returns the parent id.
std::string_view unpack_header(const std::vector<std::uint8_t>& record, const NameTable& names,
                               Checkpoint& checkpoint) {
  RecordReader in(record, names);
  in.u32();
  const std::string_view parent_id = in.str();
  checkpoint.ts = in.str();
  checkpoint.v = static_cast<int>(in.signed_varint());
  checkpoint.channel_versions = in.versions();
  for (std::uint64_t n = in.varint(); n > 0; --n) {
    const std::string& node = in.name();
    checkpoint.versions_seen.emplace_hint(checkpoint.versions_seen.end(), node, in.versions());
  }
  const std::uint64_t updated = in.varint();
  checkpoint.updated_channels.reserve(updated);
  for (std::uint64_t n = 0; n < updated; ++n) checkpoint.updated_channels.push_back(in.name());
  return parent_id;
}

std::optional<ChannelVersion> unpack_version(const std::vector<std::uint8_t>& record,
                                             const NameTable& names, std::string_view channel) {
  const std::optional<std::uint32_t> channel_id = names.find(channel);
  if (!channel_id) return std::nullopt;  // no record names it
  RecordReader in(record, names);
  in.u32();
  in.str();
  in.str();
  in.signed_varint();
  return in.find_version(*channel_id);
}

struct StoredCheckpoint {
  std::vector<std::uint8_t> record;  // parent id, header (but id and values) and metadata
  ValueRefs refs;                    // where each channel's value is
  StoredValues values;               // the values this checkpoint stored itself
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

CheckpointTuple build_tuple(const std::string& thread_id, const std::string& ns,
                            const NameTable& names, const NamespaceStore& store,
                            const std::string& id, const StoredCheckpoint& stored,
                            const GetOptions& options,
                            checkpoint_internal::ValueMemo* memo = nullptr) {
  CheckpointTuple tuple;
  tuple.config = CheckpointConfig{thread_id, ns, id};
  tuple.checkpoint.id = id;
  const std::string_view parent_id = unpack_header(stored.record, names, tuple.checkpoint);
  tuple.metadata = unpack_metadata(stored.record);
  if (!parent_id.empty())
    tuple.parent_config = CheckpointConfig{thread_id, ns, std::string(parent_id)};
  if (!options.reuse_values_of.empty() && options.reuse_values_of == id) {
    tuple.values_reused = true;
  } else {
    std::string prefix;
    for (const auto& [channel, ref] : stored.refs) {
      if (memo != nullptr) prefix = thread_id + '\0' + ns + '\0' + channel + '\0';
      tuple.checkpoint.channel_values.emplace_hint(tuple.checkpoint.channel_values.end(), channel,
                                                   load_value(store, channel, ref, memo, prefix));
    }
  }
  auto writes = store.writes.find(id);
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
  NameTable names;  // of every record in `threads`
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
  auto it = config.checkpoint_id.empty() ? std::prev(store->checkpoints.end())
                                         : store->checkpoints.find(config.checkpoint_id);
  if (it == store->checkpoints.end()) return std::nullopt;
  return build_tuple(config.thread_id, config.checkpoint_ns, state_->names, *store, it->first,
                     it->second, options);
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
      for (const auto& [id, checkpoint] : store.checkpoints) {
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
                                 *match.id, *match.checkpoint, {}, &memo));
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
    auto it = store.checkpoints.find(config.checkpoint_id);
    if (it != store.checkpoints.end()) {
      const StoredCheckpoint& stored = it->second;
      parent.refs = &stored.refs;
      parent.versions = checkpoint_internal::ParentVersions(
          [&stored, &names = state_->names](std::string_view channel) {
            return unpack_version(stored.record, names, channel);
          });
    }
  }
  checkpoint_internal::ValuePlan plan = checkpoint_internal::plan_values(
      checkpoint, parent, new_versions, deltas, checkpoint_internal::Encoding::kCompact);

  const std::uint64_t metadata_bytes = encoded_size(metadata);
  StoredCheckpoint stored{pack_record(has_parent ? config.checkpoint_id : "", checkpoint, metadata,
                                      metadata_bytes, state_->names),
                          std::move(plan.refs),
                          {}};
  SaverStats& stats = state_->stats;
  for (const auto& [channel, value] : plan.stored) {
    (value.is_delta ? stats.delta_values_written : stats.full_values_written) += 1;
  }
  stored.values = std::move(plan.stored);
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
      const std::string latest_id = std::prev(store.checkpoints.end())->first;
      StoredCheckpoint& latest = std::prev(store.checkpoints.end())->second;
      // The latest checkpoint may refer to values stored by the checkpoints being removed.
      StoredValues values;
      ValueRefs refs;
      const checkpoint_internal::SharedId self(latest_id);
      for (const auto& [channel, ref] : latest.refs) {
        JsonPtr value = load_value(store, channel, ref);
        const std::size_t length = value->is_array() ? value->size() : 0;
        refs.emplace(channel, ValueRef{self, self, length, 0, encoded_size(*value)});
        values.emplace(channel, StoredValue{false, "", 0, std::move(value), {}});
      }
      latest.refs = std::move(refs);
      latest.values = std::move(values);
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

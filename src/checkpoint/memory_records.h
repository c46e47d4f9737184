// How the memory saver packs what it keeps: checkpoint records (header, parent id and
// metadata in one buffer) and task write logs, with channel and node names as indexes into
// one NameTable per saver. Internal to the memory saver.
//
// Thread-safety: plain functions and values; the saver guards them with its mutex.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tollgate/checkpoint.h"
#include "tollgate/error.h"
#include "tollgate/json.h"

namespace tollgate::memory_internal {

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

// The header (all but id and values) of a checkpoint whose parent is `parent_id` ("" for
// none), and its metadata, which takes `metadata_bytes` (encoded_size) bytes. `scratch`: a
// buffer to reuse across calls (the result has exactly the bytes it needs).
std::vector<std::uint8_t> pack_record(std::string_view parent_id, const Checkpoint& checkpoint,
                                      const Json& metadata, std::uint64_t metadata_bytes,
                                      NameTable& names, std::vector<std::uint8_t>& scratch);
Json unpack_metadata(const std::vector<std::uint8_t>& record);
// Unpacks the header into `checkpoint` (which has its id) and returns the parent id.
std::string_view unpack_header(const std::vector<std::uint8_t>& record, const NameTable& names,
                               Checkpoint& checkpoint);
// The record's version of `channel`, read in place; nullopt when it has none.
std::optional<ChannelVersion> unpack_version(const std::vector<std::uint8_t>& record,
                                             const NameTable& names, std::string_view channel);

// The writes of one task against one checkpoint in one buffer: the task id (its length as a
// varint, then its bytes), then the writes ordered by idx, the order they come back in. Per
// write: its idx (the index in its task, or its special channel's fixed index; zigzag
// varint), its channel (NameTable index, varint), its value's length (varint) and the value
// as MessagePack.
class TaskWrites {
 public:
  explicit TaskWrites(std::string_view task_id);  // no writes yet

  std::string_view task_id() const;

 private:
  friend std::pair<std::uint64_t, std::uint64_t> add_writes(
      TaskWrites&, const std::vector<std::pair<std::string, Json>>&, NameTable&,
      std::vector<std::uint8_t>&);
  friend void unpack_writes(const TaskWrites&, const NameTable&, std::vector<PendingWrite>&);

  std::vector<std::uint8_t> log_;
};

// Adds a task's `writes` to its log: the first write at an idx wins, except that a special
// channel's write replaces the one before it. Returns the number of writes and of value bytes
// stored. `scratch` as for pack_record.
std::pair<std::uint64_t, std::uint64_t> add_writes(
    TaskWrites& task, const std::vector<std::pair<std::string, Json>>& writes, NameTable& names,
    std::vector<std::uint8_t>& scratch);

// Appends the task's writes to `out` in order.
void unpack_writes(const TaskWrites& task, const NameTable& names, std::vector<PendingWrite>& out);

}  // namespace tollgate::memory_internal

#include "checkpoint/memory_records.h"

#include <algorithm>
#include <cstring>

#include "checkpoint/value_store.h"

namespace tollgate::memory_internal {
namespace {

// A checkpoint record: the header (all but its id and values), parent id and metadata packed
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
  // Appends to `out`. Without a NameTable it writes no names.
  explicit RecordWriter(std::vector<std::uint8_t>& out, NameTable* names = nullptr)
      : out_(out), names_(names) {}

  void u32(std::uint32_t n) { raw(&n, sizeof n); }
  void varint(std::uint64_t n) {
    while (n >= 0x80) {
      out_.push_back(static_cast<std::uint8_t>(n | 0x80));
      n >>= 7;
    }
    out_.push_back(static_cast<std::uint8_t>(n));
  }
  void signed_varint(std::int64_t n) {
    varint((static_cast<std::uint64_t>(n) << 1) ^ static_cast<std::uint64_t>(n >> 63));
  }
  void str(std::string_view text) {
    varint(text.size());
    raw(text.data(), text.size());
  }
  void name(std::string_view text) { varint(names_->intern(text)); }
  void versions(const ChannelVersions& versions) {
    varint(versions.size());
    for (const auto& [channel, version] : versions) {
      name(channel);
      signed_varint(version);
    }
  }
  // Appends `length` bytes for the caller to fill; returns where they are.
  std::uint8_t* claim(std::size_t length) {
    const std::size_t at = out_.size();
    out_.resize(at + length);
    return out_.data() + at;
  }

 private:
  void raw(const void* data, std::size_t length) {
    const auto* bytes = static_cast<const std::uint8_t*>(data);
    out_.insert(out_.end(), bytes, bytes + length);
  }
  std::vector<std::uint8_t>& out_;
  NameTable* names_;
};

// `scratch` as an exact-size buffer of its own, `extra` more bytes at the end.
std::vector<std::uint8_t> exact_copy(const std::vector<std::uint8_t>& scratch,
                                     std::size_t extra = 0) {
  std::vector<std::uint8_t> copy;
  copy.reserve(scratch.size() + extra);
  copy.assign(scratch.begin(), scratch.end());
  copy.resize(scratch.size() + extra);
  return copy;
}

class RecordReader {
 public:
  // Without a NameTable it reads no names.
  explicit RecordReader(const std::vector<std::uint8_t>& record, const NameTable* names = nullptr)
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
  const std::string& name() { return names_->name(varint()); }
  // The next `length` bytes, in place.
  const std::uint8_t* bytes(std::uint64_t length) {
    need(length);
    const std::uint8_t* at = at_;
    at_ += length;
    return at;
  }
  bool done() const { return at_ == end_; }
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
  const NameTable* names_;
};

void write_header(RecordWriter& out, std::string_view parent_id, const Checkpoint& checkpoint) {
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

}  // namespace

std::vector<std::uint8_t> pack_record(std::string_view parent_id, const Checkpoint& checkpoint,
                                      const Json& metadata, std::uint64_t metadata_bytes,
                                      NameTable& names, std::vector<std::uint8_t>& scratch) {
  scratch.clear();
  RecordWriter writer(scratch, &names);
  write_header(writer, parent_id, checkpoint);
  const auto offset = static_cast<std::uint32_t>(scratch.size());
  std::vector<std::uint8_t> record = exact_copy(scratch, metadata_bytes);
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
  RecordReader in(record, &names);
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
  RecordReader in(record, &names);
  in.u32();
  in.str();
  in.str();
  in.signed_varint();
  return in.find_version(*channel_id);
}

namespace {

struct WriteEntry {
  std::int64_t idx = 0;
  std::uint64_t channel = 0;              // NameTable index
  const Json* value = nullptr;            // a new write, or
  const std::uint8_t* encoded = nullptr;  // a stored one's MessagePack
  std::uint64_t size = 0;                 // of the encoding
};

// The writes of a task's log (after its id).
std::vector<WriteEntry> read_entries(const std::vector<std::uint8_t>& log, const NameTable& names) {
  std::vector<WriteEntry> entries;
  RecordReader in(log, &names);
  in.str();
  while (!in.done()) {
    WriteEntry entry;
    entry.idx = in.signed_varint();
    entry.channel = in.varint();
    entry.size = in.varint();
    entry.encoded = in.bytes(entry.size);
    entries.push_back(entry);
  }
  return entries;
}

}  // namespace

TaskWrites::TaskWrites(std::string_view task_id) {
  log_.reserve(task_id.size() + 2);
  RecordWriter(log_).str(task_id);
}

std::string_view TaskWrites::task_id() const {
  return RecordReader(log_).str();
}

std::pair<std::uint64_t, std::uint64_t> add_writes(
    TaskWrites& task, const std::vector<std::pair<std::string, Json>>& writes, NameTable& names,
    std::vector<std::uint8_t>& scratch) {
  std::vector<WriteEntry> entries = read_entries(task.log_, names);
  std::uint64_t added = 0;
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < writes.size(); ++i) {
    const auto& [channel, value] = writes[i];
    const std::optional<int> special = special_write_index(channel);
    const std::int64_t idx = special.value_or(static_cast<int>(i));
    auto at =
        std::lower_bound(entries.begin(), entries.end(), idx,
                         [](const WriteEntry& entry, std::int64_t key) { return entry.idx < key; });
    const bool exists = at != entries.end() && at->idx == idx;
    if (exists && !special) continue;  // first write wins
    const WriteEntry entry{idx, names.intern(channel), &value, nullptr,
                           checkpoint_internal::encoded_size(value)};
    added += 1;
    bytes += entry.size;
    if (exists) {
      *at = entry;
    } else {
      entries.insert(at, entry);
    }
  }
  if (added == 0) return {0, 0};

  scratch.clear();
  RecordWriter writer(scratch, &names);
  writer.str(task.task_id());
  for (const WriteEntry& entry : entries) {
    writer.signed_varint(entry.idx);
    writer.varint(entry.channel);
    writer.varint(entry.size);
    std::uint8_t* out = writer.claim(entry.size);
    if (entry.value != nullptr) {
      checkpoint_internal::write_value(*entry.value, out);
    } else if (entry.size > 0) {
      std::memcpy(out, entry.encoded, entry.size);
    }
  }
  task.log_ = exact_copy(scratch);  // the old log (which `entries` pointed into) goes only now
  return {added, bytes};
}

void unpack_writes(const TaskWrites& task, const NameTable& names, std::vector<PendingWrite>& out) {
  const std::string task_id(task.task_id());
  for (const WriteEntry& entry : read_entries(task.log_, names)) {
    out.push_back(PendingWrite{task_id, names.name(entry.channel),
                               checkpoint_internal::decode_value(entry.encoded, entry.size)});
  }
}

}  // namespace tollgate::memory_internal

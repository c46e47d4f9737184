#include "checkpoint/header_codec.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/message_pack.h"
#include "core/hex.h"
#include "core/ids.h"
#include "tollgate/error.h"

namespace tollgate::checkpoint_internal {
namespace {

namespace mp = message_pack;

constexpr int kMapFormat = 1;  // the layout of rows written before format 2

// ------------------------------------------------------------------------- formats 2 and 3
//
// [3, v, ts, names, ids, cv, refs, uc, vs, iv]
//   names  every channel and node name the fields below use, once each, in order of first use;
//          the fields name them by index
//   ids    every checkpoint id the refs name, once each: 16 bytes (bin) for a UUID in its
//          canonical lowercase text, else the text
//   cv     channel, version, channel, version, ...                      (channels ascending)
//   refs   channel, writer id, full id, length, chain bytes, full bytes, ... (ascending)
//   uc     channel, ...
//   vs     node, [channel, version, ...], node, [...], ...              (nodes ascending)
//   iv     channel, value, ...: the refs' values kept inline, each its MessagePack encoding
//          as a bin item                                      (channels ascending, of refs)
// Format 2 is the same without iv (9 fields): no value inline.
// Format 1 repeated each name in every field and each id as 36 characters: a checkpoint's
// header was ~840 bytes in the demo agent, its row over the ~1,000 bytes SQLite keeps of an
// index B-tree cell in the page, so every checkpoint also wrote an overflow page. This one is
// about half that.

constexpr int kFormat2 = 2;
constexpr std::size_t kFormat2Fields = 9;
constexpr std::size_t kFormat3Fields = 10;

// The names or ids a header lists once: index of each, in order of first use.
class Table {
 public:
  std::uint32_t operator()(std::string_view item) {
    for (std::size_t i = 0; i < items_.size(); ++i) {
      if (items_[i] == item) return static_cast<std::uint32_t>(i);
    }
    items_.push_back(item);
    return static_cast<std::uint32_t>(items_.size() - 1);
  }
  const std::vector<std::string_view>& items() const { return items_; }

 private:
  std::vector<std::string_view> items_;
};

// The 16 bytes of a UUID whose text core::format_uuid gives back exactly (lowercase).
std::optional<std::array<std::uint8_t, 16>> pack_uuid(std::string_view text) {
  if (!core::is_uuid(text) ||
      std::any_of(text.begin(), text.end(), [](char c) { return c >= 'A' && c <= 'F'; })) {
    return std::nullopt;
  }
  std::array<std::uint8_t, 16> bytes{};
  std::size_t at = 0;
  for (std::uint8_t& byte : bytes) {
    if (text[at] == '-') ++at;
    byte = static_cast<std::uint8_t>(core::hex_byte_at(text, at));
    at += 2;
  }
  return bytes;
}

std::string unpack_uuid(std::string_view packed) {
  std::array<std::uint8_t, 16> bytes{};
  std::copy(packed.begin(), packed.end(), bytes.begin());
  return core::format_uuid(bytes);
}

// A ref's length, chain bytes and full bytes, as both formats write them (unsigned, the whole
// 64-bit range).
void read_sizes(mp::Reader& in, ValueRef& ref) {
  ref.length = static_cast<std::size_t>(in.unsigned_integer());
  ref.chain_bytes = in.unsigned_integer();
  ref.full_bytes = in.unsigned_integer();
}

// Sizes what format2() writes (the Writer writes into a buffer sized beforehand).
struct Measure {
  std::uint64_t size = 0;
  void unsigned_integer(std::uint64_t n) { size += mp::unsigned_size(n); }
  void integer(std::int64_t n) { size += mp::integer_size(n); }
  void string(std::string_view text) { size += mp::string_size(text.size()); }
  void binary(const std::uint8_t*, std::size_t length) { size += mp::binary_size(length); }
  void array_header(std::size_t count) { size += mp::container_header_size(count); }
};

// A header's tables, and the index of each name and id its fields write, in the order they
// write them: found once, then written by both passes (measure, write) without a search.
struct Indexed {
  Table names;
  Table ids;
  std::vector<std::optional<std::array<std::uint8_t, 16>>> packed;  // of each id
  std::vector<std::uint32_t> order;
  std::size_t next = 0;  // the next index a pass writes
  std::uint32_t take() { return order[next++]; }
};

Indexed index_fields(const Checkpoint& checkpoint, const ValueRefs& refs) {
  Indexed indexed;
  indexed.order.reserve(checkpoint.channel_versions.size() + 3 * refs.size() +
                        checkpoint.updated_channels.size() + 4 * checkpoint.versions_seen.size());
  // The tables are filled in the order the fields name their items (channel versions first),
  // then the indices are kept in the order the fields are written.
  for (const auto& [channel, version] : checkpoint.channel_versions) {
    indexed.order.push_back(indexed.names(channel));
  }
  for (const auto& [channel, ref] : refs) {
    indexed.order.push_back(indexed.names(channel));
    indexed.order.push_back(indexed.ids(ref.writer_id.str()));
    indexed.order.push_back(indexed.ids(ref.full_id.str()));
  }
  for (const std::string& channel : checkpoint.updated_channels) {
    indexed.order.push_back(indexed.names(channel));
  }
  for (const auto& [node, seen] : checkpoint.versions_seen) {
    indexed.order.push_back(indexed.names(node));
    for (const auto& [channel, version] : seen) indexed.order.push_back(indexed.names(channel));
  }
  for (const auto& [channel, ref] : refs) {
    if (ref.inline_value) indexed.order.push_back(indexed.names(channel));
  }
  indexed.packed.reserve(indexed.ids.items().size());
  for (std::string_view id : indexed.ids.items()) indexed.packed.push_back(pack_uuid(id));
  return indexed;
}

// Writes (or measures) a format-3 header from its indexed fields.
template <class Out>
void format3(Out& out, const Checkpoint& checkpoint, const ValueRefs& refs, Indexed& indexed) {
  indexed.next = 0;
  auto versions = [&out, &indexed](const ChannelVersions& list) {
    out.array_header(2 * list.size());
    for (const auto& [channel, version] : list) {
      out.unsigned_integer(indexed.take());
      out.integer(version);
    }
  };
  out.array_header(kFormat3Fields);
  out.integer(kHeaderFormat);
  out.integer(checkpoint.v);
  out.string(checkpoint.ts);
  out.array_header(indexed.names.items().size());
  for (std::string_view name : indexed.names.items()) out.string(name);
  const std::vector<std::string_view>& ids = indexed.ids.items();
  out.array_header(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (const auto& packed = indexed.packed[i]) {
      out.binary(packed->data(), packed->size());
    } else {
      out.string(ids[i]);
    }
  }
  versions(checkpoint.channel_versions);
  out.array_header(6 * refs.size());
  for (const auto& [channel, ref] : refs) {
    out.unsigned_integer(indexed.take());
    out.unsigned_integer(indexed.take());
    out.unsigned_integer(indexed.take());
    out.unsigned_integer(ref.length);
    out.unsigned_integer(ref.chain_bytes);
    out.unsigned_integer(ref.full_bytes);
  }
  out.array_header(checkpoint.updated_channels.size());
  for (std::size_t n = checkpoint.updated_channels.size(); n > 0; --n) {
    out.unsigned_integer(indexed.take());
  }
  out.array_header(2 * checkpoint.versions_seen.size());
  for (const auto& [node, seen] : checkpoint.versions_seen) {
    out.unsigned_integer(indexed.take());
    versions(seen);
  }
  const auto inlined = static_cast<std::size_t>(std::count_if(
      refs.begin(), refs.end(), [](const auto& entry) { return bool(entry.second.inline_value); }));
  out.array_header(2 * inlined);
  for (const auto& [channel, ref] : refs) {
    if (!ref.inline_value) continue;
    out.unsigned_integer(indexed.take());
    out.binary(ref.inline_value.bytes.data(), ref.inline_value.size);
  }
}

// Reads a format-3 or format-2 header; throws mp::Reader::Mismatch on anything else.
void read_format3(const std::uint8_t* data, std::size_t size, Checkpoint& checkpoint,
                  ValueRefs& refs) {
  mp::Reader in(data, size);
  const std::size_t fields = in.array_header();
  const std::int64_t format = in.integer();
  if (!(fields == kFormat3Fields && format == kHeaderFormat) &&
      !(fields == kFormat2Fields && format == kFormat2)) {
    throw mp::Reader::Mismatch();
  }
  const std::int64_t v = in.integer();
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    throw mp::Reader::Mismatch();
  }
  checkpoint.v = static_cast<int>(v);
  checkpoint.ts = std::string(in.string());
  std::vector<std::string_view> names(in.array_header());
  for (std::string_view& name : names) name = in.string();
  std::vector<SharedId> ids(in.array_header());
  for (SharedId& id : ids) {
    if (in.string_next()) {
      id = SharedId(std::string(in.string()));
      continue;
    }
    std::string_view bytes = in.binary();
    if (bytes.size() != 16) throw mp::Reader::Mismatch();
    id = SharedId(unpack_uuid(bytes));
  }
  auto index = [&in](std::size_t count) {
    const std::int64_t i = in.integer();
    if (i < 0 || static_cast<std::uint64_t>(i) >= count) throw mp::Reader::Mismatch();
    return static_cast<std::size_t>(i);
  };
  auto name = [&](std::string_view after) {
    std::string_view n = names[index(names.size())];
    if (!after.empty() && !(after < n)) throw mp::Reader::Mismatch();  // ascending, once each
    return n;
  };
  auto pairs = [&in](std::size_t per_item) {
    const std::size_t count = in.array_header();
    if (count % per_item != 0) throw mp::Reader::Mismatch();
    return count / per_item;
  };
  auto read_versions = [&](ChannelVersions& out) {
    out.clear();
    std::string_view last;
    for (std::size_t n = pairs(2); n > 0; --n) {
      last = name(last);
      out.emplace_hint(out.end(), std::string(last), in.integer());
    }
  };
  read_versions(checkpoint.channel_versions);
  ValueRefs read_refs;
  std::string_view last;
  const std::size_t channels = pairs(6);
  read_refs.reserve(channels);
  for (std::size_t n = channels; n > 0; --n) {
    last = name(last);
    ValueRef ref;
    ref.writer_id = ids[index(ids.size())];
    ref.full_id = ids[index(ids.size())];
    read_sizes(in, ref);
    read_refs.emplace_hint(read_refs.end(), std::string(last), std::move(ref));
  }
  checkpoint.updated_channels.clear();
  for (std::size_t n = in.array_header(); n > 0; --n) {
    checkpoint.updated_channels.emplace_back(names[index(names.size())]);
  }
  checkpoint.versions_seen.clear();
  last = {};
  for (std::size_t n = pairs(2); n > 0; --n) {
    last = name(last);
    read_versions(
        checkpoint.versions_seen
            .emplace_hint(checkpoint.versions_seen.end(), std::string(last), ChannelVersions{})
            ->second);
  }
  if (fields == kFormat3Fields) {
    last = {};
    for (std::size_t n = pairs(2); n > 0; --n) {
      last = name(last);
      auto ref = read_refs.find(last);
      std::string_view bytes = in.binary();
      if (ref == read_refs.end() || bytes.empty() || bytes.size() > kInlineValueBytes) {
        throw mp::Reader::Mismatch();
      }
      InlineValue& value = ref->second.inline_value;
      value.size = static_cast<std::uint8_t>(bytes.size());
      std::copy(bytes.begin(), bytes.end(), value.bytes.begin());
    }
  }
  if (!in.at_end()) throw mp::Reader::Mismatch();
  refs = std::move(read_refs);
}

// ------------------------------------------------------------------------- format 1

// Reads a format-1 header as it was written: a map with the members in the order nlohmann
// wrote them when the header was a JSON object (sorted keys: cv, f, refs, ts, uc, v, vs).
// Throws mp::Reader::Mismatch on anything else (an older layout, a damaged row), which the
// general decoder below then reads or reports.
void read_format1(const std::uint8_t* data, std::size_t size, Checkpoint& checkpoint,
                  ValueRefs& refs) {
  mp::Reader in(data, size);
  if (in.map_header() != 7) throw mp::Reader::Mismatch();
  auto expect_key = [&in](std::string_view expected) {
    if (in.string() != expected) throw mp::Reader::Mismatch();
  };
  // Keys come sorted and once each, as a JSON object's members; anything else is read by the
  // general decoder (which keeps the last of repeated keys).
  auto ascending = [](const auto& map, std::string_view key) {
    if (!map.empty() && !(map.rbegin()->first < key)) throw mp::Reader::Mismatch();
  };
  auto read_versions = [&in, &ascending](ChannelVersions& versions) {
    for (std::size_t n = in.map_header(); n > 0; --n) {
      std::string channel(in.string());
      ascending(versions, channel);
      versions.emplace_hint(versions.end(), std::move(channel), in.integer());
    }
  };
  expect_key("cv");
  checkpoint.channel_versions.clear();
  read_versions(checkpoint.channel_versions);
  expect_key("f");
  if (in.integer() != kMapFormat) throw mp::Reader::Mismatch();
  expect_key("refs");
  ValueRefs read_refs;
  const std::size_t channels = in.map_header();
  read_refs.reserve(channels);
  SharedId last_id;  // the refs of a checkpoint mostly name the same few checkpoints
  auto shared = [&last_id](std::string_view id) {
    if (last_id.str() != id) last_id = SharedId(std::string(id));
    return last_id;
  };
  for (std::size_t n = channels; n > 0; --n) {
    std::string channel(in.string());
    ascending(read_refs, channel);
    if (in.array_header() != 5) throw mp::Reader::Mismatch();
    ValueRef ref;
    ref.writer_id = shared(in.string());
    ref.full_id = shared(in.string());
    read_sizes(in, ref);
    read_refs.emplace_hint(read_refs.end(), std::move(channel), std::move(ref));
  }
  expect_key("ts");
  checkpoint.ts = std::string(in.string());
  expect_key("uc");
  checkpoint.updated_channels.clear();
  for (std::size_t n = in.array_header(); n > 0; --n) {
    checkpoint.updated_channels.emplace_back(in.string());
  }
  expect_key("v");
  checkpoint.v = static_cast<int>(in.integer());
  expect_key("vs");
  checkpoint.versions_seen.clear();
  for (std::size_t n = in.map_header(); n > 0; --n) {
    std::string node(in.string());
    ascending(checkpoint.versions_seen, node);
    read_versions(checkpoint.versions_seen[node]);
  }
  if (!in.at_end()) throw mp::Reader::Mismatch();
  refs = std::move(read_refs);
}

// The general decoder of format 1: any header nlohmann can read, with the errors it has always
// reported.
void decode_header_document(const std::uint8_t* data, std::size_t size, Checkpoint& checkpoint,
                            ValueRefs& refs) {
  Json header = decode_value(data, size);
  try {
    const int format = header.at("f").get<int>();
    if (format != kMapFormat) {
      throw Error::Internal("stored checkpoint header has unknown format " +
                            std::to_string(format));
    }
    checkpoint.v = header.at("v").get<int>();
    checkpoint.ts = header.at("ts").get<std::string>();
    checkpoint.channel_versions.clear();
    for (const auto& [channel, version] : header.at("cv").items()) {
      checkpoint.channel_versions.emplace(channel, version.get<ChannelVersion>());
    }
    checkpoint.versions_seen.clear();
    for (const auto& [node, versions] : header.at("vs").items()) {
      ChannelVersions& seen = checkpoint.versions_seen[node];
      for (const auto& [channel, version] : versions.items()) {
        seen.emplace(channel, version.get<ChannelVersion>());
      }
    }
    checkpoint.updated_channels = header.at("uc").get<std::vector<std::string>>();
    refs = refs_from_json(header.at("refs"));
  } catch (const Json::exception& e) {
    throw Error::Internal(std::string("stored checkpoint header is malformed: ") + e.what());
  }
}

}  // namespace

std::vector<std::uint8_t> encode_header(const Checkpoint& checkpoint, const ValueRefs& refs) {
  Indexed indexed = index_fields(checkpoint, refs);
  Measure measure;
  format3(measure, checkpoint, refs, indexed);
  std::vector<std::uint8_t> encoded(measure.size);
  mp::Writer out(encoded.data());
  format3(out, checkpoint, refs, indexed);
  return encoded;
}

void decode_header(const std::uint8_t* data, std::size_t size, Checkpoint& checkpoint,
                   ValueRefs& refs) {
  const bool array =
      size > 0 && ((data[0] >= 0x90 && data[0] <= 0x9F) || data[0] == 0xDC || data[0] == 0xDD);
  if (array) {
    try {
      read_format3(data, size, checkpoint, refs);
    } catch (const mp::Reader::Mismatch&) {
      throw Error::Internal("stored checkpoint header is malformed (format 2 or 3)");
    }
    return;
  }
  try {
    read_format1(data, size, checkpoint, refs);
  } catch (const mp::Reader::Mismatch&) {
    decode_header_document(data, size, checkpoint, refs);
  }
}

}  // namespace tollgate::checkpoint_internal

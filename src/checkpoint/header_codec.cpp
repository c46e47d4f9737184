#include "checkpoint/header_codec.h"

#include <string>

#include "checkpoint/message_pack.h"
#include "tollgate/error.h"

namespace tollgate::checkpoint_internal {
namespace {

namespace mp = message_pack;

// The header is a MessagePack map with the members in the order nlohmann wrote them when the
// header was a JSON object (sorted keys: cv, f, refs, ts, uc, v, vs), so rows written field by
// field here and rows written before read alike. Every checkpoint writes one and every read
// decodes one: building a JSON document in between cost more than the rest of the codec.

std::uint64_t versions_size(const ChannelVersions& versions) {
  std::uint64_t size = mp::container_header_size(versions.size());
  for (const auto& [channel, version] : versions) {
    size += mp::string_size(channel.size()) + mp::integer_size(version);
  }
  return size;
}

void write_versions(mp::Writer& out, const ChannelVersions& versions) {
  out.map_header(versions.size());
  for (const auto& [channel, version] : versions) {
    out.string(channel);
    out.integer(version);
  }
}

std::uint64_t header_size(const Checkpoint& checkpoint, const ValueRefs& refs) {
  std::uint64_t size = mp::container_header_size(7);
  size += mp::string_size(2) + versions_size(checkpoint.channel_versions);
  size += mp::string_size(1) + mp::integer_size(kHeaderFormat);
  size += mp::string_size(4) + mp::container_header_size(refs.size());
  for (const auto& [channel, ref] : refs) {
    size += mp::string_size(channel.size()) + mp::container_header_size(5) +
            mp::string_size(ref.writer_id.str().size()) +
            mp::string_size(ref.full_id.str().size()) + mp::unsigned_size(ref.length) +
            mp::unsigned_size(ref.chain_bytes) + mp::unsigned_size(ref.full_bytes);
  }
  size += mp::string_size(2) + mp::string_size(checkpoint.ts.size());
  size += mp::string_size(2) + mp::container_header_size(checkpoint.updated_channels.size());
  for (const std::string& channel : checkpoint.updated_channels) {
    size += mp::string_size(channel.size());
  }
  size += mp::string_size(1) + mp::integer_size(checkpoint.v);
  size += mp::string_size(2) + mp::container_header_size(checkpoint.versions_seen.size());
  for (const auto& [node, versions] : checkpoint.versions_seen) {
    size += mp::string_size(node.size()) + versions_size(versions);
  }
  return size;
}

// Reads the header the way encode_header writes it; throws mp::Reader::Mismatch on anything
// else (an older layout, a damaged row), which the general decoder below then reads or
// reports.
void read_header(const std::uint8_t* data, std::size_t size, Checkpoint& checkpoint,
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
  if (in.integer() != kHeaderFormat) throw mp::Reader::Mismatch();
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
    const std::int64_t length = in.integer();
    const std::int64_t chain_bytes = in.integer();
    const std::int64_t full_bytes = in.integer();
    if (length < 0 || chain_bytes < 0 || full_bytes < 0) throw mp::Reader::Mismatch();
    ref.length = static_cast<std::size_t>(length);
    ref.chain_bytes = static_cast<std::uint64_t>(chain_bytes);
    ref.full_bytes = static_cast<std::uint64_t>(full_bytes);
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

// The general decoder: any header nlohmann can read, with the errors it has always reported.
void decode_header_document(const std::uint8_t* data, std::size_t size, Checkpoint& checkpoint,
                            ValueRefs& refs) {
  Json header = decode_value(data, size);
  try {
    const int format = header.at("f").get<int>();
    if (format != kHeaderFormat) {
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
  std::vector<std::uint8_t> encoded(header_size(checkpoint, refs));
  mp::Writer out(encoded.data());
  out.map_header(7);
  out.string("cv");
  write_versions(out, checkpoint.channel_versions);
  out.string("f");
  out.integer(kHeaderFormat);
  out.string("refs");
  out.map_header(refs.size());
  for (const auto& [channel, ref] : refs) {
    out.string(channel);
    out.array_header(5);
    out.string(ref.writer_id.str());
    out.string(ref.full_id.str());
    out.unsigned_integer(ref.length);
    out.unsigned_integer(ref.chain_bytes);
    out.unsigned_integer(ref.full_bytes);
  }
  out.string("ts");
  out.string(checkpoint.ts);
  out.string("uc");
  out.array_header(checkpoint.updated_channels.size());
  for (const std::string& channel : checkpoint.updated_channels) out.string(channel);
  out.string("v");
  out.integer(checkpoint.v);
  out.string("vs");
  out.map_header(checkpoint.versions_seen.size());
  for (const auto& [node, versions] : checkpoint.versions_seen) {
    out.string(node);
    write_versions(out, versions);
  }
  return encoded;
}

void decode_header(const std::uint8_t* data, std::size_t size, Checkpoint& checkpoint,
                   ValueRefs& refs) {
  try {
    read_header(data, size, checkpoint, refs);
  } catch (const mp::Reader::Mismatch&) {
    decode_header_document(data, size, checkpoint, refs);
  }
}

}  // namespace tollgate::checkpoint_internal

#include "checkpoint/header_codec.h"

#include <string>

#include "tollgate/error.h"

namespace tollgate::checkpoint_internal {

std::vector<std::uint8_t> encode_header(const Checkpoint& checkpoint, const ValueRefs& refs) {
  Json versions_seen = Json::object();
  for (const auto& [node, versions] : checkpoint.versions_seen) versions_seen[node] = versions;
  Json header{{"f", kHeaderFormat},
              {"v", checkpoint.v},
              {"ts", checkpoint.ts},
              {"cv", checkpoint.channel_versions},
              {"vs", std::move(versions_seen)},
              {"uc", checkpoint.updated_channels},
              {"refs", refs_to_json(refs)}};
  return Json::to_msgpack(header);
}

void decode_header(const std::uint8_t* data, std::size_t size, Checkpoint& checkpoint,
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

}  // namespace tollgate::checkpoint_internal

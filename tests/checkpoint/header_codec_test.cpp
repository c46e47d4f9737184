// The checkpoint header is written and read field by field; rows must stay what they were when
// the header was a JSON document (written before, and read by older builds).
#include "checkpoint/header_codec.h"

#include <gtest/gtest.h>

#include "tollgate/error.h"

namespace tollgate::checkpoint_internal {
namespace {

Checkpoint sample_checkpoint() {
  Checkpoint checkpoint;
  checkpoint.ts = "2026-12-02T08:00:00.000000+00:00";
  checkpoint.channel_versions = {{"messages", 300}, {"branch:to:model", 7}, {"jump_to", -40}};
  checkpoint.versions_seen = {{"model", {{"messages", 299}}}, {"__input__", {}}};
  checkpoint.updated_channels = {"messages", "jump_to"};
  return checkpoint;
}

ValueRefs sample_refs() {
  SharedId writer("1f1ee1fa-ea2c-6da1-bfff-fcd5c9ce4257");
  ValueRefs refs;
  refs.emplace("messages", ValueRef{writer, "1f1ee1fa-0000-6da1-bfff-fcd5c9ce4257", 4, 70000, 9});
  refs.emplace("jump_to", ValueRef{writer, writer, 0, 0, 1});
  return refs;
}

// The header as it was encoded before: a JSON object written by nlohmann's MessagePack writer.
std::vector<std::uint8_t> document_header(const Checkpoint& checkpoint, const ValueRefs& refs) {
  Json versions_seen = Json::object();
  for (const auto& [node, versions] : checkpoint.versions_seen) versions_seen[node] = versions;
  return Json::to_msgpack(Json{{"f", kHeaderFormat},
                               {"v", checkpoint.v},
                               {"ts", checkpoint.ts},
                               {"cv", checkpoint.channel_versions},
                               {"vs", std::move(versions_seen)},
                               {"uc", checkpoint.updated_channels},
                               {"refs", refs_to_json(refs)}});
}

TEST(HeaderCodecTest, WritesTheBytesTheJsonDocumentWrote) {
  EXPECT_EQ(encode_header(sample_checkpoint(), sample_refs()),
            document_header(sample_checkpoint(), sample_refs()));
  EXPECT_EQ(encode_header(Checkpoint{}, ValueRefs{}), document_header(Checkpoint{}, ValueRefs{}));
}

TEST(HeaderCodecTest, ReadsBackEveryField) {
  const Checkpoint written = sample_checkpoint();
  const std::vector<std::uint8_t> header = encode_header(written, sample_refs());
  Checkpoint read;
  read.channel_versions = {{"stale", 1}};
  ValueRefs refs;
  decode_header(header.data(), header.size(), read, refs);
  EXPECT_EQ(read.v, written.v);
  EXPECT_EQ(read.ts, written.ts);
  EXPECT_EQ(read.channel_versions, written.channel_versions);
  EXPECT_EQ(read.versions_seen, written.versions_seen);
  EXPECT_EQ(read.updated_channels, written.updated_channels);
  EXPECT_EQ(refs, sample_refs());
}

TEST(HeaderCodecTest, AHeaderInAnotherLayoutIsReadByTheGeneralDecoder) {
  // A version written as a float and a member no header has: not the codec's own layout.
  Json document = Json::from_msgpack(encode_header(sample_checkpoint(), sample_refs()));
  document["cv"]["messages"] = 300.0;
  document["extra"] = true;
  const std::vector<std::uint8_t> header = Json::to_msgpack(document);
  Checkpoint read;
  ValueRefs refs;
  decode_header(header.data(), header.size(), read, refs);
  EXPECT_EQ(read.channel_versions.at("messages"), 300);
  EXPECT_EQ(refs, sample_refs());
}

TEST(HeaderCodecTest, AnUnknownFormatIsRefused) {
  Json document = Json::from_msgpack(encode_header(sample_checkpoint(), sample_refs()));
  document["f"] = kHeaderFormat + 1;
  const std::vector<std::uint8_t> header = Json::to_msgpack(document);
  Checkpoint read;
  ValueRefs refs;
  EXPECT_THROW(decode_header(header.data(), header.size(), read, refs), Error);
}

TEST(HeaderCodecTest, ATruncatedHeaderIsRefused) {
  std::vector<std::uint8_t> header = encode_header(sample_checkpoint(), sample_refs());
  header.resize(header.size() / 2);
  Checkpoint read;
  ValueRefs refs;
  EXPECT_THROW(decode_header(header.data(), header.size(), read, refs), Error);
}

}  // namespace
}  // namespace tollgate::checkpoint_internal

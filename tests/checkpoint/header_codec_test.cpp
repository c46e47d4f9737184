// The checkpoint header is written in format 3 and read field by field; rows of formats 2 and 1
// (the latter the JSON document's layout), written by builds before, read as they always did.
#include "checkpoint/header_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

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
  refs.emplace("messages",
               ValueRef{writer, "1f1ee1fa-0000-6da1-bfff-fcd5c9ce4257", 4, 70000, 9, {}});
  refs.emplace("jump_to", ValueRef{writer, writer, 0, 0, 1, {}});
  return refs;
}

InlineValue inline_value(std::initializer_list<std::uint8_t> bytes) {
  InlineValue value;
  value.size = static_cast<std::uint8_t>(bytes.size());
  std::copy(bytes.begin(), bytes.end(), value.bytes.begin());
  return value;
}

// sample_refs with two values kept inline: jump_to null, and "todos" ["a"].
ValueRefs inline_refs() {
  ValueRefs refs = sample_refs();
  refs.at("jump_to").inline_value = inline_value({0xC0});
  SharedId writer("1f1ee1fa-ea2c-6da1-bfff-fcd5c9ce4257");
  refs.emplace("todos", ValueRef{writer, writer, 1, 0, 3, inline_value({0x91, 0xA1, 'a'})});
  return refs;
}

std::string hex(const std::vector<std::uint8_t>& bytes) {
  std::string out;
  for (std::uint8_t byte : bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    out += kDigits[byte >> 4];
    out += kDigits[byte & 0xF];
  }
  return out;
}

std::vector<std::uint8_t> unhex(std::string_view text) {
  std::vector<std::uint8_t> bytes;
  for (std::size_t at = 0; at + 1 < text.size(); at += 2) {
    bytes.push_back(
        static_cast<std::uint8_t>(std::stoi(std::string(text.substr(at, 2)), nullptr, 16)));
  }
  return bytes;
}

// A format-1 header, as builds before format 2 wrote it: a JSON object written by nlohmann's
// MessagePack writer.
std::vector<std::uint8_t> document_header(const Checkpoint& checkpoint, const ValueRefs& refs) {
  Json versions_seen = Json::object();
  for (const auto& [node, versions] : checkpoint.versions_seen) versions_seen[node] = versions;
  return Json::to_msgpack(Json{{"f", 1},
                               {"v", checkpoint.v},
                               {"ts", checkpoint.ts},
                               {"cv", checkpoint.channel_versions},
                               {"vs", std::move(versions_seen)},
                               {"uc", checkpoint.updated_channels},
                               {"refs", refs_to_json(refs)}});
}

void expect_same(const Checkpoint& read, const Checkpoint& written) {
  EXPECT_EQ(read.v, written.v);
  EXPECT_EQ(read.ts, written.ts);
  EXPECT_EQ(read.channel_versions, written.channel_versions);
  EXPECT_EQ(read.versions_seen, written.versions_seen);
  EXPECT_EQ(read.updated_channels, written.updated_channels);
}

std::size_t occurrences(const std::vector<std::uint8_t>& bytes, std::string_view text) {
  const std::string haystack(bytes.begin(), bytes.end());
  std::size_t count = 0;
  for (std::size_t at = haystack.find(text); at != std::string::npos;
       at = haystack.find(text, at + 1)) {
    ++count;
  }
  return count;
}

TEST(HeaderCodecTest, ReadsBackEveryField) {
  const Checkpoint written = sample_checkpoint();
  const std::vector<std::uint8_t> header = encode_header(written, sample_refs());
  Checkpoint read;
  read.channel_versions = {{"stale", 1}};
  read.versions_seen = {{"stale", {{"stale", 1}}}};
  read.updated_channels = {"stale"};
  ValueRefs refs;
  decode_header(header.data(), header.size(), read, refs);
  expect_same(read, written);
  EXPECT_EQ(refs, sample_refs());
}

TEST(HeaderCodecTest, AnEmptyCheckpointReadsBack) {
  const std::vector<std::uint8_t> header = encode_header(Checkpoint{}, ValueRefs{});
  Checkpoint read;
  read.channel_versions = {{"stale", 1}};
  ValueRefs refs;
  decode_header(header.data(), header.size(), read, refs);
  expect_same(read, Checkpoint{});
  EXPECT_TRUE(refs.empty());
}

TEST(HeaderCodecTest, AFormat1HeaderWrittenBeforeReadsBack) {
  const Checkpoint written = sample_checkpoint();
  const std::vector<std::uint8_t> header = document_header(written, sample_refs());
  Checkpoint read;
  ValueRefs refs;
  decode_header(header.data(), header.size(), read, refs);
  expect_same(read, written);
  EXPECT_EQ(refs, sample_refs());
}

TEST(HeaderCodecTest, WritesEachNameAndEachIdOnce) {
  const std::vector<std::uint8_t> header = encode_header(sample_checkpoint(), sample_refs());
  EXPECT_EQ(occurrences(header, "messages"), 1U);  // in cv, refs, uc and vs
  EXPECT_EQ(occurrences(header, "jump_to"), 1U);
  // The ids are canonical UUIDs: 16 bytes each, not their text.
  EXPECT_EQ(occurrences(header, "1f1ee1fa"), 0U);
  EXPECT_LT(header.size() * 2, document_header(sample_checkpoint(), sample_refs()).size());
}

// A checkpoint and refs of every kind: the fixed bytes below are theirs.
Checkpoint fixed_checkpoint() {
  Checkpoint checkpoint = sample_checkpoint();
  checkpoint.versions_seen["tools"] = {{"branch:to:tools", 2}, {"messages", 12}};
  checkpoint.updated_channels.push_back("branch:to:tools");
  return checkpoint;
}
ValueRefs fixed_refs() {
  ValueRefs refs = sample_refs();
  refs.emplace("todos",
               ValueRef{"checkpoint-7", "1f1ee1fa-0000-6da1-bfff-fcd5c9ce4257", 1, 2, 3, {}});
  return refs;
}

// The bytes a build writing format 2 wrote for fixed_checkpoint() and fixed_refs(). A name or id
// is listed at its first use (channel versions, refs, updated channels, versions seen) and each
// field names it by that index.
constexpr std::string_view kFormat2Bytes =
    "990201d920323032362d31322d30325430383a30303a30302e3030303030302b30303a303098af6272"
    "616e63683a746f3a6d6f64656ca76a756d705f746fa86d65737361676573a5746f646f73af6272616e"
    "63683a746f3a746f6f6c73a95f5f696e7075745f5fa56d6f64656ca5746f6f6c7393c4101f1ee1faea"
    "2c6da1bffffcd5c9ce4257c4101f1ee1fa00006da1bffffcd5c9ce4257ac636865636b706f696e742d"
    "3796000701d0d802cd012cdc001201000000000102000104ce000111700903020101020393020104960"
    "590069202cd012b07940402020c";

// Rows written by builds before format 3 read as they did.
TEST(HeaderCodecTest, AFormat2HeaderWrittenBeforeReadsBack) {
  const std::vector<std::uint8_t> header = unhex(kFormat2Bytes);
  Checkpoint read;
  ValueRefs refs;
  decode_header(header.data(), header.size(), read, refs);
  expect_same(read, fixed_checkpoint());
  EXPECT_EQ(refs, fixed_refs());
}

// The bytes of format 3 are fixed: rows written by this build and by later ones read alike.
// Without values inline they are format 2's with the format number 3, a tenth field and an
// empty list of inline values at the end.
TEST(HeaderCodecTest, TheBytesOfFormat3AreFixed) {
  std::string expected(kFormat2Bytes);
  expected.replace(0, 4, "9a03");
  expected += "90";
  EXPECT_EQ(hex(encode_header(fixed_checkpoint(), fixed_refs())), expected);
  ValueRefs refs = fixed_refs();
  refs.at("jump_to").inline_value = inline_value({0xC0});
  refs.at("todos").inline_value = inline_value({0x91, 0xA1, 'a'});
  // iv: jump_to (name 1) null, todos (name 3) ["a"].
  expected.replace(expected.size() - 2, 2, "9401c401c003c40391a161");
  EXPECT_EQ(hex(encode_header(fixed_checkpoint(), refs)), expected);
}

TEST(HeaderCodecTest, ValuesKeptInlineReadBack) {
  const std::vector<std::uint8_t> header = encode_header(sample_checkpoint(), inline_refs());
  Checkpoint read;
  ValueRefs refs;
  decode_header(header.data(), header.size(), read, refs);
  EXPECT_EQ(refs, inline_refs());
  EXPECT_EQ(refs.at("todos").inline_value.size, 3U);
  EXPECT_FALSE(refs.at("messages").inline_value);
}

// A damaged list of inline values: a value longer than an InlineValue holds, an empty one, or
// one of a channel without a ref. An Error each, never a value read past its bounds.
TEST(HeaderCodecTest, AnInlineValueThatNoRefCanHoldIsRefused) {
  const std::vector<std::uint8_t> header = encode_header(sample_checkpoint(), inline_refs());
  const std::string written = hex(header);
  // The last field: [jump_to, null, todos, ["a"]] as 94 <name> c401c0 <name> c40391a161.
  const std::size_t iv = written.rfind("94");
  ASSERT_EQ(written.substr(iv + 4, 6), "c401c0");
  const std::string jump_to_name = written.substr(iv + 2, 2);
  const std::string todos_name = written.substr(iv + 10, 2);
  const std::string head = written.substr(0, iv);
  const std::vector<std::string> damaged = {
      head + "94" + jump_to_name + "c410" + std::string(32, '0') + todos_name + "c40391a161",
      head + "94" + jump_to_name + "c400" + todos_name + "c40391a161",
      head + "92" + "7f" + "c401c0",                                  // name 127: none
      head + "94" + todos_name + "c401c0" + jump_to_name + "c401c0",  // not ascending
  };
  for (const std::string& bad : damaged) {
    const std::vector<std::uint8_t> bytes = unhex(bad);
    Checkpoint read;
    ValueRefs refs;
    EXPECT_THROW(decode_header(bytes.data(), bytes.size(), read, refs), Error) << bad;
  }
}

// A format number and a field count that do not go together: refused.
TEST(HeaderCodecTest, AFormatNumberWithTheOtherFormatsFieldsIsRefused) {
  std::string format3_as_2 = hex(encode_header(fixed_checkpoint(), fixed_refs()));
  format3_as_2.replace(0, 4, "9a02");
  std::string format2_as_3(kFormat2Bytes);
  format2_as_3.replace(0, 4, "9903");
  for (const std::string& bad : {format3_as_2, format2_as_3}) {
    const std::vector<std::uint8_t> bytes = unhex(bad);
    Checkpoint read;
    ValueRefs refs;
    EXPECT_THROW(decode_header(bytes.data(), bytes.size(), read, refs), Error) << bad;
  }
}

TEST(HeaderCodecTest, IdsThatAreNotCanonicalUuidsReadBackAsWritten) {
  ValueRefs written;
  written.emplace("a", ValueRef{"1F1EE1FA-EA2C-6DA1-BFFF-FCD5C9CE4257", "", 0, 0, 1, {}});
  written.emplace("b",
                  ValueRef{"checkpoint-7", "1f1ee1fa-ea2c-6da1-bfff-fcd5c9ce425", 1, 2, 3, {}});
  written.emplace("c", ValueRef{"1f1ee1fa-ea2c-6da1-bfff-fcd5c9ce42570",
                                "1f1ee1fa_ea2c_6da1_bfff_fcd5c9ce4257",
                                0,
                                0,
                                0,
                                {}});
  const std::vector<std::uint8_t> header = encode_header(Checkpoint{}, written);
  Checkpoint read;
  ValueRefs refs;
  decode_header(header.data(), header.size(), read, refs);
  EXPECT_EQ(refs, written);
}

TEST(HeaderCodecTest, RefSizesOfTheWhole64BitRangeReadBack) {
  // A format-1 header (read by nlohmann) may hold them; written again they must read back.
  ValueRefs written;
  written.emplace("a", ValueRef{"w", "f", SIZE_MAX, UINT64_MAX, std::uint64_t{1} << 63, {}});
  for (const std::vector<std::uint8_t>& header :
       {encode_header(Checkpoint{}, written), document_header(Checkpoint{}, written)}) {
    Checkpoint read;
    ValueRefs refs;
    decode_header(header.data(), header.size(), read, refs);
    EXPECT_EQ(refs, written);
  }
}

TEST(HeaderCodecTest, ACountLargerThanTheRestOfTheHeaderIsRefusedBeforeAnythingIsSized) {
  // A damaged row claiming 2^32 - 1 names (format 2) or refs (format 1): an Error, not an
  // allocation of that many.
  const std::vector<std::uint8_t> names = {0x99, 0x02, 0x01, 0xA0, 0xDD, 0xFF, 0xFF, 0xFF, 0xFF};
  const std::vector<std::uint8_t> refs = {0x87, 0xA2, 'c', 'v', 0x80, 0xA1, 'f',  0x01, 0xA4,
                                          'r',  'e',  'f', 's', 0xDF, 0xFF, 0xFF, 0xFF, 0xFF};
  for (const std::vector<std::uint8_t>& header : {names, refs}) {
    Checkpoint read;
    ValueRefs read_refs;
    EXPECT_THROW(decode_header(header.data(), header.size(), read, read_refs), Error);
  }
}

TEST(HeaderCodecTest, AnIndexPastItsTableIsRefused) {
  Checkpoint checkpoint;
  checkpoint.updated_channels = {"messages"};
  std::vector<std::uint8_t> header = encode_header(checkpoint, ValueRefs{});
  // The last items: uc [0], vs [] and iv []; name 5 instead of 0.
  ASSERT_GE(header.size(), 4U);
  ASSERT_EQ(header[header.size() - 3], 0x00);
  header[header.size() - 3] = 0x05;
  Checkpoint read;
  ValueRefs refs;
  EXPECT_THROW(decode_header(header.data(), header.size(), read, refs), Error);
}

TEST(HeaderCodecTest, AHeaderInAnotherLayoutIsReadByTheGeneralDecoder) {
  // A version written as a float and a member no header has: not format 1's own layout.
  Json document = Json::from_msgpack(document_header(sample_checkpoint(), sample_refs()));
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
  Json document = Json::from_msgpack(document_header(sample_checkpoint(), sample_refs()));
  document["f"] = kHeaderFormat + 1;
  std::vector<std::uint8_t> header = Json::to_msgpack(document);
  Checkpoint read;
  ValueRefs refs;
  EXPECT_THROW(decode_header(header.data(), header.size(), read, refs), Error);
  header = encode_header(sample_checkpoint(), sample_refs());
  ASSERT_EQ(header[1], kHeaderFormat);  // [format, ...]
  header[1] = kHeaderFormat + 1;
  EXPECT_THROW(decode_header(header.data(), header.size(), read, refs), Error);
}

TEST(HeaderCodecTest, ATruncatedHeaderIsRefused) {
  for (std::vector<std::uint8_t> header : {encode_header(sample_checkpoint(), sample_refs()),
                                           document_header(sample_checkpoint(), sample_refs())}) {
    for (std::size_t size : {header.size() - 1, header.size() / 2, std::size_t{1}}) {
      Checkpoint read;
      ValueRefs refs;
      EXPECT_THROW(decode_header(header.data(), size, read, refs), Error) << size;
    }
  }
}

}  // namespace
}  // namespace tollgate::checkpoint_internal

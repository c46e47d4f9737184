// The planning rules of delta storage, checked on plan_values directly.
#include "checkpoint/value_store.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "checkpoint/saver_test_util.h"
#include "tollgate/error.h"

namespace tollgate::checkpoint_internal {
namespace {

using ::tollgate::testing::make_checkpoint;
using ::tollgate::testing::message;

// Plans `count` steps of a list channel that gains one message per step. Like the graph
// runtime, it appends in place to the list it solely owns (plan_values copies what it keeps).
struct Chain {
  std::vector<Checkpoint> checkpoints;  // without values
  std::vector<ValuePlan> plans;
  std::vector<std::uint64_t> value_bytes;  // encoded size of the list after each step
  JsonPtr messages = make_json_ptr(Json::array());

  explicit Chain(int count) {
    std::uint64_t item_bytes = 0;
    for (int i = 0; i < count; ++i) {
      const_cast<Json&>(*messages).push_back(message(i));
      item_bytes += encode_value(message(i)).size();
      value_bytes.push_back(item_bytes + 1);  // at least a one-byte array header
      Checkpoint checkpoint = make_checkpoint(i, {}, {{"messages", i + 1}});
      checkpoint.channel_values.emplace("messages", messages);
      ParentValues parent;
      if (i > 0) parent = {&plans.back().refs, &checkpoints.back().channel_versions};
      ChannelDeltas deltas{
          {"messages", ListDelta{messages->size() - 1, Json::array({message(i)})}}};
      plans.push_back(plan_values(checkpoint, parent, {{"messages", i + 1}}, deltas));
      checkpoint.channel_values.clear();
      checkpoints.push_back(std::move(checkpoint));
    }
  }
};

TEST(ValueStoreTest, AnUnchangedChannelKeepsItsParentsReference) {
  Checkpoint parent = make_checkpoint(-1, {{"a", 1}});
  ValuePlan parent_plan = plan_values(parent, {}, {{"a", 1}}, {});
  Checkpoint child = make_checkpoint(0, {{"a", 1}});
  ValuePlan plan = plan_values(child, {&parent_plan.refs, &parent.channel_versions}, {}, {});
  EXPECT_TRUE(plan.stored.empty());
  EXPECT_EQ(plan.refs.at("a"), parent_plan.refs.at("a"));
  EXPECT_EQ(plan.bytes, 0u);
}

TEST(ValueStoreTest, AnAppendIsStoredAsADeltaOnItsParent) {
  Chain chain(2);
  const StoredValue& stored = chain.plans[1].stored.at("messages");
  ASSERT_TRUE(stored.is_delta);
  EXPECT_EQ(stored.base_id, chain.checkpoints[0].id);
  EXPECT_EQ(stored.keep, 1u);
  EXPECT_EQ(*stored_json(stored), Json::array({message(1)}));
}

TEST(ValueStoreTest, ReadCostStaysWithinTwiceTheValueSize) {
  Chain chain(3000);
  int snapshots = 0;
  for (std::size_t i = 0; i < chain.plans.size(); ++i) {
    const ValueRef& ref = chain.plans[i].refs.at("messages");
    const std::uint64_t value_bytes = chain.value_bytes[i] + 2;  // array header up to 3 bytes
    // Reading = the last full value plus the deltas since; both bounded by the value itself.
    ASSERT_LE(ref.chain_bytes, ref.full_bytes) << "step " << i;
    ASSERT_LE(ref.full_bytes + ref.chain_bytes, 2 * value_bytes) << "step " << i;
    if (!chain.plans[i].stored.at("messages").is_delta) ++snapshots;
  }
  // Snapshots are geometrically spaced: about log2(3000) of them.
  EXPECT_LE(snapshots, 14);
}

TEST(ValueStoreTest, ReconstructionFollowsTheChain) {
  Chain chain(100);
  auto lookup = [&](const std::string& writer_id) -> const StoredValue& {
    for (std::size_t i = 0; i < chain.checkpoints.size(); ++i) {
      if (chain.checkpoints[i].id == writer_id) return chain.plans[i].stored.at("messages");
    }
    throw std::runtime_error("missing " + writer_id);
  };
  EXPECT_EQ(*reconstruct_value(chain.plans[99].refs.at("messages"), lookup), *chain.messages);
  Json first_fifty(chain.messages->begin(), chain.messages->begin() + 50);
  EXPECT_EQ(*reconstruct_value(chain.plans[49].refs.at("messages"), lookup), first_fifty);
}

// Values too large to be kept inline (an InlineValue holds 15 bytes).
const Json kLongList = Json::array({"a value of more than fifteen bytes"});
const Json kLongText = "another value of more than fifteen bytes";

TEST(ValueStoreTest, ValuesOfDeltaChannelsAreKeptEncodedOthersShared) {
  Checkpoint checkpoint = make_checkpoint(-1, {{"list", kLongList}, {"other", kLongText}});
  ValuePlan plan =
      plan_values(checkpoint, {}, {{"list", 1}, {"other", 1}}, {{"list", ListDelta{0, kLongList}}});
  const StoredValue& list = plan.stored.at("list");
  EXPECT_EQ(list.payload, nullptr);
  EXPECT_EQ(decode_value(list.encoded.data(), list.encoded.size()), kLongList);
  EXPECT_EQ(plan.stored.at("other").payload.get(), checkpoint.channel_values.at("other").get());
}

TEST(ValueStoreTest, CompactPlansEncodeOnlyWhatTheyCannotShare) {
  Checkpoint checkpoint = make_checkpoint(-1, {{"list", kLongList}, {"other", kLongText}});
  ValuePlan plan = plan_values(checkpoint, {}, {{"list", 1}, {"other", 1}},
                               {{"list", ListDelta{0, kLongList}}}, Encoding::kCompact);
  EXPECT_TRUE(plan.stored.at("other").encoded.empty());
  EXPECT_EQ(plan.stored.at("list").encoded, encode_value(kLongList));
  EXPECT_EQ(plan.bytes, encoded_size(kLongList) + encoded_size(kLongText));
}

// A lookup for plans whose values are all kept inline: any stored value asked for is a fault.
const StoredValue& no_stored_value(const std::string& writer_id) {
  throw std::runtime_error("a stored value of " + writer_id + " was looked up");
}

TEST(ValueStoreTest, SmallValuesAreKeptInTheirRefsNotStored) {
  const std::map<std::string, Json> values = {{"flag", true},          {"null", nullptr},
                                              {"number", -40},         {"text", "short"},
                                              {"list", Json::array()}, {"object", Json{{"k", 1}}}};
  Checkpoint checkpoint = make_checkpoint(-1, values);
  ChannelVersions changed;
  for (const auto& [channel, value] : values) changed.emplace(channel, 1);
  for (Encoding encoding : {Encoding::kKeep, Encoding::kCompact}) {
    ValuePlan plan = plan_values(checkpoint, {}, changed, {}, encoding);
    EXPECT_TRUE(plan.stored.empty());
    EXPECT_EQ(plan.inlined, values.size());
    std::uint64_t bytes = 0;
    for (const auto& [channel, value] : values) {
      const ValueRef& ref = plan.refs.at(channel);
      ASSERT_TRUE(ref.inline_value) << channel;
      EXPECT_EQ(ref.writer_id, checkpoint.id);
      EXPECT_EQ(*reconstruct_value(ref, no_stored_value), value) << channel;
      bytes += encoded_size(value);
    }
    EXPECT_EQ(plan.bytes, bytes);
  }
}

TEST(ValueStoreTest, AValueOneBytePastTheInlineLimitIsStored) {
  const Json fits = std::string(14, 'x');     // 15 bytes encoded
  const Json too_big = std::string(15, 'x');  // 16
  ASSERT_EQ(encoded_size(fits), kInlineValueBytes);
  Checkpoint checkpoint = make_checkpoint(-1, {{"fits", fits}, {"too_big", too_big}});
  ValuePlan plan = plan_values(checkpoint, {}, {{"fits", 1}, {"too_big", 1}}, {});
  EXPECT_TRUE(plan.refs.at("fits").inline_value);
  EXPECT_FALSE(plan.refs.at("too_big").inline_value);
  EXPECT_EQ(plan.stored.count("fits"), 0U);
  EXPECT_EQ(plan.stored.count("too_big"), 1U);
  // Containers are measured whole, nested members included.
  EXPECT_FALSE(inline_encoding(Json::array({Json::array({std::string(13, 'x')})})));
  EXPECT_TRUE(inline_encoding(Json::array({Json::array({std::string(12, 'x')})})));
  EXPECT_FALSE(inline_encoding(Json{{"key", std::string(10, 'x')}}));
  EXPECT_TRUE(inline_encoding(Json{{"key", std::string(9, 'x')}}));
}

TEST(ValueStoreTest, AnUnchangedInlineValueIsKeptWithItsParentsRef) {
  Checkpoint parent = make_checkpoint(-1, {{"flag", true}});
  ValuePlan parent_plan = plan_values(parent, {}, {{"flag", 1}}, {});
  Checkpoint child = make_checkpoint(0, {{"flag", true}});
  ValuePlan plan = plan_values(child, {&parent_plan.refs, &parent.channel_versions}, {}, {});
  EXPECT_EQ(plan.refs.at("flag"), parent_plan.refs.at("flag"));
  EXPECT_EQ(plan.inlined, 0U);
  EXPECT_EQ(*reconstruct_value(plan.refs.at("flag"), no_stored_value), true);
}

// A list kept inline is in no stored value: what is appended to it is stored whole, not as a
// delta naming it.
TEST(ValueStoreTest, AnInlineValueIsNeverTheBaseOfADelta) {
  Checkpoint parent = make_checkpoint(-1, {{"messages", Json::array()}});
  ValuePlan parent_plan =
      plan_values(parent, {}, {{"messages", 1}}, {{"messages", ListDelta{0, Json::array()}}});
  ASSERT_TRUE(parent_plan.refs.at("messages").inline_value);
  const Json appended = Json::array({message(1)});
  Checkpoint child = make_checkpoint(0, {{"messages", appended}}, {{"messages", 2}});
  ValuePlan plan = plan_values(child, {&parent_plan.refs, &parent.channel_versions},
                               {{"messages", 2}}, {{"messages", ListDelta{0, appended}}});
  const StoredValue& stored = plan.stored.at("messages");
  EXPECT_FALSE(stored.is_delta);
  EXPECT_FALSE(plan.refs.at("messages").inline_value);
  EXPECT_EQ(*stored_json(stored), appended);
}

TEST(ValueStoreTest, StoredJsonDecodesAnEncodedValue) {
  StoredValue value{false, "", 0, nullptr, encode_value(Json{{"k", "v"}})};
  EXPECT_EQ(*stored_json(value), (Json{{"k", "v"}}));
}

// Values of every MessagePack form the encoder writes.
std::vector<Json> values_of_every_form() {
  std::vector<Json> values = {nullptr, true, false,         0.5,           0.1,
                              1e300,   -2.5, Json::array(), Json::object()};
  for (std::int64_t n : {0LL, 127LL, 128LL, 255LL, 256LL, 65535LL, 65536LL, 4294967295LL,
                         4294967296LL, -1LL, -32LL, -33LL, -128LL, -129LL, -32768LL, -32769LL,
                         -2147483648LL, -2147483649LL, std::numeric_limits<long long>::min()}) {
    values.emplace_back(n);
  }
  for (std::uint64_t n : {std::uint64_t{200}, std::uint64_t{18446744073709551615ULL}}) {
    values.emplace_back(n);
  }
  for (std::size_t length : {0, 31, 32, 255, 256, 65535, 65536, 70000}) {
    values.emplace_back(std::string(length, 'a'));
  }
  for (std::size_t length : {15, 16, 65535, 65536})
    values.emplace_back(std::vector<int>(length, 1));
  Json wide = Json::object();
  for (int i = 0; i < 16; ++i) wide["k" + std::to_string(i)] = i;
  const std::string long_text(300, 'x');
  values.push_back(wide);
  values.push_back(Json{{"messages", {message(1), message(2)}}, {long_text, {{"k", nullptr}}}});
  values.push_back(Json::binary({1, 2, 3}));
  values.push_back(Json::binary({1, 2, 3}, 7));
  return values;
}

TEST(EncodedSize, CountsExactlyWhatTheEncoderWrites) {
  for (const Json& value : values_of_every_form()) {
    EXPECT_EQ(encoded_size(value), encode_value(value).size()) << value.dump().substr(0, 80);
  }
}

TEST(EncodeValue, WritesWhatNlohmannsWriterWrites) {
  for (const Json& value : values_of_every_form()) {
    EXPECT_EQ(encode_value(value), Json::to_msgpack(value)) << value.dump().substr(0, 80);
  }
}

TEST(DecodeValue, RestoresEveryEncodedForm) {
  for (const Json& value : values_of_every_form()) {
    const std::vector<std::uint8_t> encoded = encode_value(value);
    EXPECT_EQ(decode_value(encoded.data(), encoded.size()), value) << value.dump().substr(0, 80);
  }
}

TEST(DecodeValue, RestoresNestedContainers) {
  const Json value = {{"a", {{"b", Json::array({1, Json::object(), Json::array({"x"})})}}},
                      {"c", Json::array({{{"d", nullptr}}, 2.5})}};
  const std::vector<std::uint8_t> encoded = encode_value(value);
  EXPECT_EQ(decode_value(encoded.data(), encoded.size()), value);
}

TEST(DecodeValue, RejectsATruncatedEncoding) {
  std::vector<std::uint8_t> encoded = encode_value(Json::array({"text", 1, 2}));
  encoded.pop_back();
  EXPECT_THROW(decode_value(encoded.data(), encoded.size()), Error);
}

// What nlohmann's reader makes of `bytes` (null when it refuses them).
std::optional<Json> nlohmann_reads(const std::vector<std::uint8_t>& bytes) {
  try {
    return Json::from_msgpack(bytes);
  } catch (const Json::exception&) {
    return std::nullopt;
  }
}

// Equal and of the same types throughout (== holds between a signed and an unsigned 5).
bool same_json(const Json& a, const Json& b) {
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (!a.is_structured()) return a == b;
  for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y) {
    if ((a.is_object() && x.key() != y.key()) || !same_json(*x, *y)) return false;
  }
  return true;
}

// Whether decode_value reads `bytes` as nlohmann's reader does: the same value, or refused by both.
::testing::AssertionResult reads_as_nlohmann(const std::vector<std::uint8_t>& bytes) {
  const std::optional<Json> expected = nlohmann_reads(bytes);
  try {
    const Json decoded = decode_value(bytes.data(), bytes.size());
    if (!expected) return ::testing::AssertionFailure() << "read what nlohmann refuses";
    if (!same_json(decoded, *expected)) {
      return ::testing::AssertionFailure()
             << decoded.dump().substr(0, 80) << " is not " << expected->dump().substr(0, 80);
    }
  } catch (const Error&) {
    if (expected) return ::testing::AssertionFailure() << "refused what nlohmann reads";
  }
  return ::testing::AssertionSuccess();
}

TEST(DecodeValue, ReadsEveryFormOfEveryWidthAsNlohmannDoes) {
  const std::vector<std::vector<std::uint8_t>> inputs = {
      {0xCC, 0x05},
      {0xCD, 0x00, 0x05},
      {0xCE, 0, 0, 0, 5},
      {0xD0, 0x05},
      {0xD0, 0xFB},
      {0xD1, 0xFF, 0xFB},
      {0xD2, 0xFF, 0xFF, 0xFF, 0xFB},
      {0xD3, 0, 0, 0, 0, 0, 0, 0, 5},
      {0xCA, 0x3F, 0xC0, 0x00, 0x00},  // float32 1.5
      {0xD9, 0x01, 'a'},
      {0xDA, 0x00, 0x01, 'a'},
      {0xDB, 0, 0, 0, 1, 'a'},
      {0xDC, 0x00, 0x01, 0xC0},
      {0xDD, 0, 0, 0, 1, 0xC3},
      {0xDE, 0x00, 0x01, 0xA1, 'k', 0x01},
      {0xDF, 0, 0, 0, 1, 0xA1, 'k', 0xC2},
      {0xC4, 0x02, 1, 2},
      {0xC5, 0x00, 0x01, 9},
      {0xC6, 0, 0, 0, 1, 9},
      {0xC7, 0x02, 0x07, 1, 2},
      {0xC8, 0x00, 0x01, 0xFE, 3},
      {0xC9, 0, 0, 0, 1, 0x05, 3},
      {0xD4, 0x01, 1},
      {0xD5, 0x01, 1, 2},
      {0xD6, 0x01, 1, 2, 3, 4},
      {0xD7, 0x01, 1, 2, 3, 4, 5, 6, 7, 8},
      {0xD8, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
      {0x82, 0xA1, 'k', 0x01, 0xA1, 'k', 0x02},  // a repeated key keeps its last value
  };
  for (const auto& bytes : inputs) EXPECT_TRUE(reads_as_nlohmann(bytes)) << int{bytes[0]};
}

TEST(DecodeValue, RefusesWhatNlohmannRefuses) {
  const std::vector<std::vector<std::uint8_t>> inputs = {
      {},                              // nothing
      {0xC1},                          // the byte no item starts with
      {0xC0, 0xC0},                    // bytes after the value
      {0x81, 0x01, 0x02},              // a key that is not a string
      {0x92, 0x01},                    // an array shorter than its count
      {0xA3, 'a'},                     // a string shorter than its length
      {0xCB, 0x00},                    // a float cut short
      {0xDF, 0xFF, 0xFF, 0xFF, 0xFF},  // a map longer than the input
  };
  for (const auto& bytes : inputs) {
    EXPECT_FALSE(nlohmann_reads(bytes).has_value());
    EXPECT_THROW(decode_value(bytes.data(), bytes.size()), Error);
  }
}

TEST(DecodeValue, ReadsDamagedEncodingsAsNlohmannDoes) {
  // Every encoding of every form, with each of its first bytes changed and with its end cut.
  std::uint32_t seed = 12345;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  for (const Json& value : values_of_every_form()) {
    const std::vector<std::uint8_t> encoded = encode_value(value);
    if (encoded.size() > 4096) continue;
    for (std::size_t at = 0; at < std::min<std::size_t>(encoded.size(), 24); ++at) {
      std::vector<std::uint8_t> damaged = encoded;
      damaged[at] = static_cast<std::uint8_t>(next() >> 24);
      EXPECT_TRUE(reads_as_nlohmann(damaged)) << value.dump().substr(0, 40) << " byte " << at;
      std::vector<std::uint8_t> cut(encoded.begin(), encoded.begin() + at);
      EXPECT_TRUE(reads_as_nlohmann(cut)) << value.dump().substr(0, 40) << " cut at " << at;
    }
  }
}

TEST(DecodeValue, ReadsADeepNestingWithoutRecursion) {
  constexpr std::size_t kDepth = 200000;  // far deeper than a thread's stack would allow
  std::vector<std::uint8_t> bytes(kDepth, 0x91);
  bytes.push_back(0xC0);
  Json value = decode_value(bytes.data(), bytes.size());
  std::size_t depth = 0;
  for (const Json* at = &value; at->is_array(); at = &(*at)[0]) ++depth;
  EXPECT_EQ(depth, kDepth);
}

TEST(DecodeValue, RejectsADamagedArrayLength) {
  const std::vector<std::uint8_t> encoded = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x01};
  EXPECT_THROW(decode_value(encoded.data(), encoded.size()), Error);
}

}  // namespace
}  // namespace tollgate::checkpoint_internal

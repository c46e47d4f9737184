#include "tollgate/memory_saver.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "checkpoint/saver_conformance.h"
#include "checkpoint/saver_test_util.h"

namespace tollgate::testing {

const SaverFactory kMemoryFactory{"memory", [](const std::string&) { return make_memory_saver(); },
                                  [](Saver& saver) { return saver.stats().bytes_written; }};

INSTANTIATE_SAVER_CONFORMANCE(Memory, kMemoryFactory);

namespace {

// The graph runtime appends in place to a list it solely owns; a saver holding that JsonPtr
// would force a copy of the whole list every step.
TEST(MemorySaverTest, DoesNotKeepTheCallersValueOfADeltaChannel) {
  auto saver = make_memory_saver();
  Checkpoint first = make_checkpoint(-1, {{"messages", Json::array({"a"})}});
  JsonPtr messages = first.channel_values["messages"];
  CheckpointConfig config = saver->put({"t", "", ""}, first, Json::object(), {{"messages", 1}},
                                       {{"messages", ListDelta{0, Json::array({"a"})}}});
  first.channel_values.clear();
  EXPECT_EQ(messages.use_count(), 1);

  Checkpoint second = make_checkpoint(0, {}, {{"messages", 2}});
  second.channel_values["messages"] = make_json_ptr(Json::array({"a", "b"}));
  JsonPtr second_messages = second.channel_values["messages"];
  saver->put(config, second, Json::object(), {{"messages", 2}},
             {{"messages", ListDelta{1, Json::array({"b"})}}});
  second.channel_values.clear();
  EXPECT_EQ(second_messages.use_count(), 1);
}

TEST(MemorySaverTest, KeepsTheCallersScalarValueWithoutACopy) {
  auto saver = make_memory_saver();
  Checkpoint checkpoint = make_checkpoint(-1, {{"state", std::string(1000, 'x')}});
  const Json* address = checkpoint.channel_values["state"].get();
  CheckpointConfig config = saver->put({"t", "", ""}, checkpoint, Json::object(), {{"state", 1}});
  EXPECT_EQ(saver->get_tuple(config)->checkpoint.channel_values["state"].get(), address);
}

// Checkpoints are kept ordered by id; one put with a smaller id than the latest still goes in
// its place.
TEST(MemorySaverTest, KeepsCheckpointsPutOutOfOrderInIdOrder) {
  auto saver = make_memory_saver();
  for (const char* id : {"b", "d", "a", "c"}) {
    Checkpoint checkpoint = make_checkpoint(0, {{"x", id}});
    checkpoint.id = id;
    saver->put({"t", "", ""}, checkpoint, Json::object(), {{"x", 1}});
  }
  EXPECT_EQ(saver->get_tuple({"t", "", ""})->checkpoint.id, "d");
  EXPECT_EQ(*saver->get_tuple({"t", "", "a"})->checkpoint.channel_values.at("x"), "a");
  std::vector<std::string> listed;
  for (const CheckpointTuple& tuple : saver->list(ListQuery{})) {
    listed.push_back(tuple.checkpoint.id);
  }
  EXPECT_EQ(listed, (std::vector<std::string>{"d", "c", "b", "a"}));
}

// Trigger channels hold null every step: the saver does not keep each step's null alive.
TEST(MemorySaverTest, DoesNotKeepTheCallersNull) {
  auto saver = make_memory_saver();
  Checkpoint checkpoint = make_checkpoint(-1, {{"branch:to:a", nullptr}});
  JsonPtr value = checkpoint.channel_values["branch:to:a"];
  CheckpointConfig config =
      saver->put({"t", "", ""}, checkpoint, Json::object(), {{"branch:to:a", 1}});
  checkpoint.channel_values.clear();
  EXPECT_EQ(value.use_count(), 1);
  EXPECT_TRUE(saver->get_tuple(config)->checkpoint.channel_values.at("branch:to:a")->is_null());
}

// A JSON tree takes several times the bytes of its encoding: the saver keeps the encoding and
// lets the caller's tree go.
TEST(MemorySaverTest, KeepsAnObjectValueEncodedNotShared) {
  auto saver = make_memory_saver();
  Checkpoint checkpoint = make_checkpoint(-1, {{"state", Json{{"big", "value"}, {"n", 1}}}});
  JsonPtr state = checkpoint.channel_values["state"];
  CheckpointConfig config = saver->put({"t", "", ""}, checkpoint, Json::object(), {{"state", 1}});
  checkpoint.channel_values.clear();
  EXPECT_EQ(state.use_count(), 1);
  EXPECT_EQ(*saver->get_tuple(config)->checkpoint.channel_values["state"], *state);
}

// Names are stored once per saver and referred to by index; past 127 names an index takes
// more than one byte.
TEST(MemorySaverTest, GivesBackTheVersionsOfManyChannels) {
  auto saver = make_memory_saver();
  CheckpointConfig config{"t", "", ""};
  for (int step = 0; step < 3; ++step) {
    Checkpoint checkpoint = make_checkpoint(step, {});
    for (int channel = 0; channel < 300; ++channel) {
      checkpoint.channel_versions["channel-" + std::to_string(channel)] = channel * 1000 + step;
    }
    checkpoint.versions_seen["node-" + std::to_string(step)] = checkpoint.channel_versions;
    config = saver->put(config, checkpoint, Json::object(), {});
    const std::optional<CheckpointTuple> tuple = saver->get_tuple(config);
    ASSERT_TRUE(tuple.has_value());
    EXPECT_EQ(tuple->checkpoint, checkpoint);
  }
}

// The header, parent and metadata are stored packed; everything put comes back as it was.
TEST(MemorySaverTest, GivesBackTheHeaderAndMetadataItWasGiven) {
  auto saver = make_memory_saver();
  Checkpoint parent = make_checkpoint(0, {{"a", 1}});
  const CheckpointConfig parent_config =
      saver->put({"t", "ns", ""}, parent, Json::object(), {{"a", 1}});
  Checkpoint checkpoint = make_checkpoint(1, {{"a", 1}, {"b", "x"}});
  checkpoint.v = 4;
  checkpoint.channel_versions = {{"a", 1},
                                 {"b", 7},
                                 {"branch:to:a-long-node-name", 9},
                                 {"big", 300},
                                 {"max", std::numeric_limits<std::int64_t>::max()},
                                 {"min", std::numeric_limits<std::int64_t>::min()},
                                 {std::string(200, 'n'), 128}};
  checkpoint.versions_seen = {{"__input__", {}},
                              {"model", {{"a", 1}, {"branch:to:a-long-node-name", 9}}},
                              {"tools", {{"b", -3}}}};
  checkpoint.updated_channels = {"b", "branch:to:a-long-node-name"};
  const Json metadata = {{"source", "loop"},
                         {"step", 1},
                         {"parents", {{"", "id"}}},
                         {"nested", {{"list", {1, 2.5, nullptr, "text"}}}}};
  const CheckpointConfig config = saver->put(parent_config, checkpoint, metadata, {{"b", 7}});

  const std::optional<CheckpointTuple> tuple = saver->get_tuple(config);
  ASSERT_TRUE(tuple.has_value());
  EXPECT_EQ(tuple->checkpoint, checkpoint);
  EXPECT_EQ(tuple->metadata, metadata);
  EXPECT_EQ(tuple->parent_config, parent_config);
}

TEST(MemorySaverTest, KeepsAnUnchangedChannelOfTheParentWithoutStoringItAgain) {
  auto saver = make_memory_saver();
  Checkpoint parent = make_checkpoint(0, {{"a", "a value too big to be kept inline"}});
  const CheckpointConfig parent_config =
      saver->put({"t", "", ""}, parent, Json::object(), {{"a", 1}});
  const std::uint64_t values_before = saver->stats().full_values_written;
  Checkpoint child = make_checkpoint(1, {{"a", "a value too big to be kept inline"}});
  const CheckpointConfig config = saver->put(parent_config, child, Json::object(), {});
  EXPECT_EQ(saver->stats().full_values_written, values_before);
  EXPECT_EQ(saver->get_tuple(config)->checkpoint.channel_values.at("a").get(),
            parent.channel_values.at("a").get());
}

}  // namespace
}  // namespace tollgate::testing

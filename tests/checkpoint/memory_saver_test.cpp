#include "tollgate/memory_saver.h"

#include <gtest/gtest.h>

#include "checkpoint/saver_conformance.h"
#include "checkpoint/saver_test_util.h"

namespace tollgate::testing {

const SaverFactory kMemoryFactory{
    "memory", [](const std::string&) -> std::unique_ptr<Saver> { return make_memory_saver(); },
    [](Saver& saver) { return dynamic_cast<MemorySaver&>(saver).bytes_written(); }};

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

TEST(MemorySaverTest, KeepsTheCallersValueOfOtherChannelsWithoutACopy) {
  auto saver = make_memory_saver();
  Checkpoint checkpoint = make_checkpoint(-1, {{"state", Json{{"big", "value"}}}});
  const Json* address = checkpoint.channel_values["state"].get();
  CheckpointConfig config = saver->put({"t", "", ""}, checkpoint, Json::object(), {{"state", 1}});
  EXPECT_EQ(saver->get_tuple(config)->checkpoint.channel_values["state"].get(), address);
}

}  // namespace
}  // namespace tollgate::testing

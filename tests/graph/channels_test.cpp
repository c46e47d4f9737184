// Channel kinds: how each folds the writes of a step, their errors, checkpoint round trips,
// and the list channels' in-place updates and delta tracking.
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

#include "graph/channel.h"
#include "tollgate/error.h"
#include "tollgate/graph.h"
#include "tollgate/messages.h"

namespace tollgate::graph_internal {
namespace {

using Writes = std::vector<Json>;

// The message of the Error(kInvalidArgument) that `fn` throws, or "no error".
template <typename Fn>
std::string invalid_argument_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
    return error.what();
  }
  return "no error";
}

Json human(const std::string& id, const std::string& content) {
  return Json{{"type", "human"}, {"id", id}, {"content", content}};
}

Json remove(const std::string& id) {
  return Json{{"type", "remove"}, {"id", id}};
}

// An add_messages channel holding messages "m0".."m<count-1>", saved.
std::unique_ptr<Channel> messages_channel(int count) {
  auto channel = make_add_messages_channel("messages");
  Json list = Json::array();
  for (int i = 0; i < count; ++i) list.push_back(human("m" + std::to_string(i), "text"));
  channel->update({list});
  channel->mark_saved();
  return channel;
}

std::vector<std::string> ids_of(const Json& messages) {
  std::vector<std::string> ids;
  for (const Json& message : messages) ids.push_back(message["id"].get<std::string>());
  return ids;
}

// ----------------------------------------------------------------------------- last value

TEST(LastValueChannelTest, StartsEmpty) {
  auto channel = make_last_value_channel("x");
  EXPECT_FALSE(channel->is_available());
  EXPECT_EQ(channel->get(), nullptr);
}

TEST(LastValueChannelTest, NoWritesLeaveTheValueUnchanged) {
  auto channel = make_last_value_channel("x");
  channel->update({Json(1)});
  EXPECT_FALSE(channel->update({}));
  EXPECT_EQ(*channel->get(), 1);
}

TEST(LastValueChannelTest, OneWriteReplacesTheValue) {
  auto channel = make_last_value_channel("x");
  channel->update({Json(1)});
  EXPECT_TRUE(channel->update({Json("two")}));
  EXPECT_EQ(*channel->get(), "two");
}

TEST(LastValueChannelTest, TwoWritesInOneStepFailWithTheReferenceText) {
  auto channel = make_last_value_channel("x");
  EXPECT_EQ(invalid_argument_of([&] {
              channel->update({Json(1), Json(2)});
            }),
            "At key 'x': Can receive only one value per step. Use an Annotated key to handle "
            "multiple values.");
}

TEST(LastValueChannelTest, OverwriteWriteIsStoredAsItsValue) {
  auto channel = make_last_value_channel("x");
  channel->update({overwrite(Json{{"a", 1}})});
  EXPECT_EQ(*channel->get(), (Json{{"a", 1}}));
}

TEST(LastValueChannelTest, RestoreSharesTheStoredValue) {
  auto channel = make_last_value_channel("x");
  JsonPtr stored = make_json_ptr(Json("saved"));
  channel->restore(stored);
  EXPECT_EQ(channel->get(), stored);
  EXPECT_EQ(channel->clone_empty()->get(), nullptr);
}

// -------------------------------------------------------------------------------- overwrite

TEST(OverwriteTest, WrapsTheValue) {
  EXPECT_EQ(overwrite(Json::array({1, 2})), (Json{{"__overwrite__", Json::array({1, 2})}}));
}

TEST(OverwriteTest, SerialisedDataclassFormIsRecognised) {
  Json write = Json{{"type", "__overwrite__"}, {"value", 5}};
  ASSERT_NE(overwritten_value(write), nullptr);
  EXPECT_EQ(*overwritten_value(write), 5);
}

TEST(OverwriteTest, ObjectWithMoreKeysIsAnOrdinaryWrite) {
  EXPECT_EQ(overwritten_value(Json{{"__overwrite__", 1}, {"other", 2}}), nullptr);
}

// ---------------------------------------------------------------------------------- append

TEST(AppendChannelTest, StartsAsAnEmptyList) {
  auto channel = make_append_channel("items");
  EXPECT_TRUE(channel->is_available());
  EXPECT_EQ(*channel->get(), Json::array());
}

TEST(AppendChannelTest, ConcatenatesListWritesInOrder) {
  auto channel = make_append_channel("items");
  channel->update({Json::array({1, 2}), Json::array({3})});
  channel->update({Json::array({4})});
  EXPECT_EQ(*channel->get(), Json::array({1, 2, 3, 4}));
}

TEST(AppendChannelTest, NonListWriteIsAppendedAsOneItem) {
  auto channel = make_append_channel("items");
  channel->update({Json{{"k", "v"}}, Json("s")});
  EXPECT_EQ(*channel->get(), Json::array({Json{{"k", "v"}}, "s"}));
}

TEST(AppendChannelTest, OverwriteReplacesTheList) {
  auto channel = make_append_channel("items");
  channel->update({Json::array({1, 2})});
  channel->update({Json::array({3}), overwrite(Json::array({9}))});
  EXPECT_EQ(*channel->get(), Json::array({9}));
}

TEST(AppendChannelTest, TwoOverwritesInOneStepFailNamingTheKey) {
  auto channel = make_append_channel("items");
  EXPECT_EQ(invalid_argument_of([&] {
              channel->update({overwrite(Json::array()), overwrite(Json::array())});
            }),
            "At key 'items': Can receive only one Overwrite value per super-step.");
}

TEST(AppendChannelTest, DeltaKeepsTheSavedLength) {
  auto channel = make_append_channel("items");
  channel->update({Json::array({1, 2})});
  channel->mark_saved();
  channel->update({Json(3)});
  auto delta = channel->delta_since_saved();
  ASSERT_TRUE(delta);
  EXPECT_EQ(delta->keep, 2u);
  EXPECT_EQ(delta->appended, Json::array({3}));
}

TEST(AppendChannelTest, DeltaAfterOverwriteKeepsNothing) {
  auto channel = make_append_channel("items");
  channel->update({Json::array({1, 2})});
  channel->mark_saved();
  channel->update({overwrite(Json::array({7}))});
  EXPECT_EQ(channel->delta_since_saved()->keep, 0u);
  EXPECT_EQ(channel->delta_since_saved()->appended, Json::array({7}));
}

// --------------------------------------------------------------------------------- reducer

Reducer sum() {
  return [](const Json& current, const Json& update) {
    return Json(current.get<int>() + update.get<int>());
  };
}

TEST(ReducerChannelTest, FirstWriteInitialisesAnEmptyChannel) {
  auto channel = make_reducer_channel("n", sum(), std::nullopt);
  EXPECT_FALSE(channel->is_available());
  channel->update({Json(5)});
  EXPECT_EQ(*channel->get(), 5);
}

TEST(ReducerChannelTest, WritesFoldIntoTheInitialValue) {
  auto channel = make_reducer_channel("n", sum(), Json(100));
  EXPECT_EQ(*channel->get(), 100);
  channel->update({Json(1), Json(2)});
  EXPECT_EQ(*channel->get(), 103);
}

TEST(ReducerChannelTest, ReducerSeesWritesInOrder) {
  Reducer concat = [](const Json& current, const Json& update) {
    return Json(current.get<std::string>() + update.get<std::string>());
  };
  auto channel = make_reducer_channel("s", concat, Json(""));
  channel->update({Json("a"), Json("b"), Json("c")});
  EXPECT_EQ(*channel->get(), "abc");
}

TEST(ReducerChannelTest, OverwriteBypassesTheReducer) {
  auto channel = make_reducer_channel("n", sum(), Json(10));
  channel->update({Json(1), overwrite(Json(-4))});
  EXPECT_EQ(*channel->get(), -4);
}

TEST(ReducerChannelTest, WritesAfterAnOverwriteInTheSameStepAreDropped) {
  auto channel = make_reducer_channel("n", sum(), Json(10));
  channel->update({overwrite(Json(0)), Json(7)});
  EXPECT_EQ(*channel->get(), 0);
}

TEST(ReducerChannelTest, TwoOverwritesInOneStepFailNamingTheKey) {
  auto channel = make_reducer_channel("n", sum(), Json(10));
  EXPECT_EQ(invalid_argument_of([&] {
              channel->update({overwrite(Json(1)), overwrite(Json(2))});
            }),
            "At key 'n': Can receive only one Overwrite value per super-step.");
  EXPECT_EQ(*channel->get(), 10);
}

TEST(ReducerChannelTest, ThrowingReducerLeavesTheValueUnchanged) {
  auto channel = make_reducer_channel("n", sum(), Json(10));
  EXPECT_THROW(channel->update({Json(1), Json("not a number")}), std::exception);
  EXPECT_EQ(*channel->get(), 10);
}

TEST(ReducerChannelTest, RestoringNothingFallsBackToTheInitialValue) {
  auto channel = make_reducer_channel("n", sum(), Json(10));
  channel->update({Json(5)});
  channel->restore(nullptr);
  EXPECT_EQ(*channel->get(), 10);
}

// ------------------------------------------------------------------------------- ephemeral

TEST(EphemeralChannelTest, ValueLastsOneStep) {
  auto channel = make_ephemeral_channel("__start__", true);
  channel->update({Json("input")});
  EXPECT_EQ(*channel->get(), "input");
  EXPECT_TRUE(channel->update({}));
  EXPECT_FALSE(channel->is_available());
  EXPECT_FALSE(channel->update({}));
}

TEST(EphemeralChannelTest, GuardRejectsTwoWritesInOneStep) {
  auto channel = make_ephemeral_channel("__start__", true);
  EXPECT_EQ(invalid_argument_of([&] {
              channel->update({Json(1), Json(2)});
            }),
            "At key '__start__': EphemeralValue(guard=True) can receive only one value per step. "
            "Use guard=False if you want to store any one of multiple values.");
}

TEST(EphemeralChannelTest, UnguardedKeepsTheLastOfSeveralWrites) {
  auto channel = make_ephemeral_channel("branch:to:a", false);
  channel->update({Json(1), Json(2)});
  EXPECT_EQ(*channel->get(), 2);
}

// --------------------------------------------------------------------------- named barrier

TEST(NamedBarrierChannelTest, AvailableOnlyOnceEveryNameWasWritten) {
  auto channel = make_named_barrier_channel("join:a+b:c", {"a", "b"});
  EXPECT_TRUE(channel->update({Json("a")}));
  EXPECT_FALSE(channel->is_available());
  EXPECT_EQ(channel->get(), nullptr);
  EXPECT_TRUE(channel->update({Json("b")}));
  EXPECT_TRUE(channel->is_available());
  ASSERT_NE(channel->get(), nullptr);
}

TEST(NamedBarrierChannelTest, RepeatedNameIsNoUpdate) {
  auto channel = make_named_barrier_channel("join:a+b:c", {"a", "b"});
  channel->update({Json("a")});
  EXPECT_FALSE(channel->update({Json("a")}));
}

TEST(NamedBarrierChannelTest, ConsumeResetsTheBarrier) {
  auto channel = make_named_barrier_channel("join:a+b:c", {"a", "b"});
  EXPECT_FALSE(channel->consume());
  channel->update({Json("a"), Json("b")});
  EXPECT_TRUE(channel->consume());
  EXPECT_FALSE(channel->is_available());
}

TEST(NamedBarrierChannelTest, UnknownNameFailsNamingTheKey) {
  auto channel = make_named_barrier_channel("join:a+b:c", {"a", "b"});
  EXPECT_EQ(invalid_argument_of([&] { channel->update({Json("z")}); }),
            R"(At key 'join:a+b:c': Value "z" not in ["a","b"])");
}

TEST(NamedBarrierChannelTest, CheckpointRestoresTheNamesSeen) {
  auto channel = make_named_barrier_channel("join:a+b:c", {"a", "b"});
  channel->update({Json("b")});
  auto restored = channel->clone_empty();
  restored->restore(channel->checkpoint());
  restored->update({Json("a")});
  EXPECT_TRUE(restored->is_available());
}

// ----------------------------------------------------------------------------------- topic

TEST(TopicChannelTest, FlattensListWrites) {
  auto channel = make_topic_channel("__pregel_tasks", false);
  channel->update({Json::array({1, 2}), Json(3)});
  EXPECT_EQ(*channel->get(), Json::array({1, 2, 3}));
}

TEST(TopicChannelTest, NonAccumulatingTopicClearsEachStep) {
  auto channel = make_topic_channel("__pregel_tasks", false);
  channel->update({Json(1)});
  channel->update({Json(2)});
  EXPECT_EQ(*channel->get(), Json::array({2}));
  EXPECT_TRUE(channel->update({}));
  EXPECT_FALSE(channel->is_available());
}

TEST(TopicChannelTest, AccumulatingTopicKeepsEarlierSteps) {
  auto channel = make_topic_channel("log", true);
  channel->update({Json(1)});
  EXPECT_FALSE(channel->update({}));
  channel->update({Json(2)});
  EXPECT_EQ(*channel->get(), Json::array({1, 2}));
}

// ---------------------------------------------------------------------- add_messages: input

TEST(AddMessagesChannelTest, RoleFormsBecomeMessageTypes) {
  auto channel = make_add_messages_channel("messages");
  channel->update({Json::parse(R"([
    {"role": "user", "content": "a", "id": "1"},
    {"role": "assistant", "content": "b", "id": "2"},
    {"role": "system", "content": "c", "id": "3"},
    {"role": "tool", "content": "d", "id": "4", "tool_call_id": "call_1"}
  ])")});
  std::vector<std::string> types;
  for (const Json& message : *channel->get()) types.push_back(message["type"].get<std::string>());
  EXPECT_EQ(types, (std::vector<std::string>{"human", "ai", "system", "tool"}));
  EXPECT_FALSE((*channel->get())[0].contains("role"));
}

TEST(AddMessagesChannelTest, ClassSerialisedMessageBecomesItsKwargs) {
  Json merged = add_messages(Json::array(), Json::parse(R"({"lc": 1, "type": "constructor",
      "id": ["langchain_core", "messages", "HumanMessage"],
      "kwargs": {"content": "hello", "additional_kwargs": {}}})"));
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0]["type"], "human");
  EXPECT_EQ(merged[0]["content"], "hello");
  EXPECT_TRUE(merged[0]["id"].is_string());
}

TEST(AddMessagesChannelTest, BareStringIsAHumanMessage) {
  Json merged = add_messages(Json::array(), Json("hi there"));
  EXPECT_EQ(merged[0]["type"], "human");
  EXPECT_EQ(merged[0]["content"], "hi there");
}

TEST(AddMessagesChannelTest, ChunkTypesBecomeTheirBaseType) {
  Json merged = add_messages(Json::array(), Json::parse(R"([
    {"type": "AIMessageChunk", "id": "run-1", "content": "tok"},
    {"type": "HumanMessageChunk", "id": "h", "content": "x"}
  ])"));
  EXPECT_EQ(merged[0]["type"], "ai");
  EXPECT_EQ(merged[1]["type"], "human");
}

TEST(AddMessagesChannelTest, TypeContentPairIsAMessage) {
  Json merged = add_messages(Json::array(), Json::array({Json::array({"ai", "sure"})}));
  EXPECT_EQ(merged[0]["type"], "ai");
  EXPECT_EQ(merged[0]["content"], "sure");
}

TEST(AddMessagesChannelTest, DeveloperRoleIsASystemMessageMarkedDeveloper) {
  Json merged = add_messages(Json::array(), Json{{"role", "developer"}, {"content", "rules"}});
  EXPECT_EQ(merged[0]["type"], "system");
  EXPECT_EQ(merged[0]["additional_kwargs"]["__openai_role__"], "developer");
}

TEST(AddMessagesChannelTest, ClientIdIsKept) {
  Json merged = add_messages(
      Json::array(), Json{{"role", "user"}, {"content", "a"}, {"id", "0193-client-minted"}});
  EXPECT_EQ(merged[0]["id"], "0193-client-minted");
}

TEST(AddMessagesChannelTest, MissingIdsOnTheLeftAreAssignedToo) {
  Json merged =
      add_messages(Json::array({Json{{"type", "human"}, {"content", "old"}}}), human("n", "new"));
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_TRUE(merged[0]["id"].is_string());
}

TEST(AddMessagesChannelTest, TypeNamesMeanWhatTheyMeanToNormalizeMessage) {
  for (const char* name : {"human", "user", "HUMAN", "HumanMessage", "ai", "assistant",
                           "AIMessageChunk", "system", "SystemMessage", "developer", "tool",
                           "ToolMessageChunk", "function", "chat", "ChatMessage"}) {
    for (const char* field : {"type", "role"}) {
      const Json message{
          {field, name}, {"content", "x"}, {"id", "m-1"}, {"tool_call_id", "call_1"}};
      EXPECT_EQ(add_messages(Json::array(), message)[0]["type"], normalize_message(message)["type"])
          << field << ": " << name;
    }
  }
}

TEST(AddMessagesChannelTest, UnknownTypeFailsNamingIt) {
  EXPECT_EQ(invalid_argument_of([] {
              add_messages(Json::array(), Json{{"type", "robot"}});
            }),
            "Invalid message at position 0: Unexpected message type: 'robot'. Use one of "
            "'human', 'user', 'ai', 'assistant', 'function', 'tool', 'system', or 'developer'.");
}

TEST(AddMessagesChannelTest, MessageWithoutTypeOrRoleFails) {
  EXPECT_EQ(invalid_argument_of([] {
              add_messages(Json::array(), Json{{"content", "x"}});
            }),
            "Invalid message at position 0: missing 'type' (or 'role')");
}

TEST(AddMessagesChannelTest, ToolMessageWithoutToolCallIdFails) {
  EXPECT_EQ(invalid_argument_of([] {
              add_messages(Json::array(), Json{{"type", "tool"}, {"content", "r"}});
            }),
            "Invalid message at position 0: a tool message needs a string 'tool_call_id'");
}

TEST(AddMessagesChannelTest, NonStringIdFails) {
  EXPECT_EQ(invalid_argument_of([] {
              add_messages(Json::array(), Json{{"type", "human"}, {"content", "r"}, {"id", 7}});
            }),
            "Invalid message at position 0: 'id' must be a string");
}

// ---------------------------------------------------------------------- add_messages: merge

TEST(AddMessagesChannelTest, RejectedStepLeavesTheMessagesUnchanged) {
  auto channel = messages_channel(3);
  const Json before = *channel->get();
  EXPECT_THROW(channel->update({human("new", "x"), remove("nope")}), Error);
  EXPECT_EQ(*channel->get(), before);
}

TEST(AddMessagesChannelTest, LaterWriteWithARemovedIdRestoresItInPlace) {
  Json merged = add_messages(Json::array({human("a", "1"), human("b", "2"), human("c", "3")}),
                             Json::array({remove("b"), human("b", "again")}));
  EXPECT_EQ(ids_of(merged), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(merged[1]["content"], "again");
}

TEST(AddMessagesChannelTest, WritesOfOneStepMergeOneAfterTheOther) {
  auto channel = messages_channel(2);
  channel->update({human("x", "new"), remove("x")});
  EXPECT_EQ(ids_of(*channel->get()), (std::vector<std::string>{"m0", "m1"}));
}

TEST(AddMessagesChannelTest, RemovingTwiceAcrossWritesOfOneStepFails) {
  auto channel = messages_channel(2);
  EXPECT_EQ(invalid_argument_of([&] {
              channel->update({remove("m0"), remove("m0")});
            }),
            "Attempting to delete a message with an ID that doesn't exist ('m0')");
}

TEST(AddMessagesChannelTest, RemoveAllInALaterWriteDropsEarlierWritesToo) {
  auto channel = messages_channel(2);
  channel->update({human("x", "new"), Json::array({remove(std::string(kRemoveAllMessages))})});
  EXPECT_EQ(*channel->get(), Json::array());
}

TEST(AddMessagesChannelTest, OverwriteReplacesTheMessages) {
  auto channel = messages_channel(3);
  channel->update({human("x", "new"), overwrite(Json::array({human("only", "one")}))});
  EXPECT_EQ(ids_of(*channel->get()), (std::vector<std::string>{"only"}));
}

TEST(AddMessagesChannelTest, RemovedIdCanBeAddedAgainInALaterStep) {
  auto channel = messages_channel(3);
  channel->update({remove("m0")});
  channel->update({human("m0", "back")});
  EXPECT_EQ(ids_of(*channel->get()), (std::vector<std::string>{"m1", "m2", "m0"}));
}

TEST(AddMessagesChannelTest, RestoredMessagesWithoutIdsGetIds) {
  auto channel = make_add_messages_channel("messages");
  channel->restore(make_json_ptr(Json::array({Json{{"role", "user"}, {"content", "old"}}})));
  const Json& messages = *channel->get();
  EXPECT_EQ(messages[0]["type"], "human");
  EXPECT_TRUE(messages[0]["id"].is_string());
  channel->update({remove(messages[0]["id"].get<std::string>())});
  EXPECT_EQ(*channel->get(), Json::array());
}

TEST(AddMessagesChannelTest, RemovingAnIdHeldTwiceInARestoredListRemovesBoth) {
  auto channel = make_add_messages_channel("messages");
  channel->restore(make_json_ptr(Json::array({human("d", "1"), human("k", "2"), human("d", "3")})));
  channel->update({remove("d")});
  EXPECT_EQ(ids_of(*channel->get()), (std::vector<std::string>{"k"}));
}

// ---------------------------------------------------------------------- add_messages: delta

TEST(AddMessagesDeltaTest, AppendKeepsTheSavedLength) {
  auto channel = messages_channel(4);
  channel->update({human("new", "x")});
  auto delta = channel->delta_since_saved();
  ASSERT_TRUE(delta);
  EXPECT_EQ(delta->keep, 4u);
  EXPECT_EQ(ids_of(delta->appended), (std::vector<std::string>{"new"}));
}

TEST(AddMessagesDeltaTest, ReplaceAtPositionKeepsWhatComesBefore) {
  auto channel = messages_channel(5);
  channel->update({human("m2", "edited")});
  auto delta = channel->delta_since_saved();
  EXPECT_EQ(delta->keep, 2u);
  EXPECT_EQ(ids_of(delta->appended), (std::vector<std::string>{"m2", "m3", "m4"}));
}

TEST(AddMessagesDeltaTest, RemoveAtPositionKeepsWhatComesBefore) {
  auto channel = messages_channel(5);
  channel->update({remove("m3")});
  auto delta = channel->delta_since_saved();
  EXPECT_EQ(delta->keep, 3u);
  EXPECT_EQ(ids_of(delta->appended), (std::vector<std::string>{"m4"}));
}

TEST(AddMessagesDeltaTest, RemoveAllKeepsNothing) {
  auto channel = messages_channel(5);
  channel->update({Json::array({remove(std::string(kRemoveAllMessages)), human("f", "fresh")})});
  auto delta = channel->delta_since_saved();
  EXPECT_EQ(delta->keep, 0u);
  EXPECT_EQ(ids_of(delta->appended), (std::vector<std::string>{"f"}));
}

TEST(AddMessagesDeltaTest, LowestChangeOfSeveralStepsWins) {
  auto channel = messages_channel(5);
  channel->update({human("m3", "edited")});
  channel->update({human("m1", "edited")});
  channel->update({human("new", "x")});
  EXPECT_EQ(channel->delta_since_saved()->keep, 1u);
}

TEST(AddMessagesDeltaTest, MarkSavedResetsTheDelta) {
  auto channel = messages_channel(5);
  channel->update({human("m0", "edited"), human("new", "x")});
  channel->mark_saved();
  auto delta = channel->delta_since_saved();
  EXPECT_EQ(delta->keep, 6u);
  EXPECT_EQ(delta->appended, Json::array());
}

TEST(AddMessagesDeltaTest, RestoreCountsAsSaved) {
  auto channel = make_add_messages_channel("messages");
  channel->restore(make_json_ptr(Json::array({human("a", "1"), human("b", "2")})));
  channel->update({human("c", "3")});
  EXPECT_EQ(channel->delta_since_saved()->keep, 2u);
}

// ------------------------------------------------------------ add_messages: random steps

// Random steps of 1-3 writes mixing new messages, replacements, removals (some of unknown
// ids), remove-alls and held snapshots, with a fixed seed.
class RandomMessageSteps {
 public:
  explicit RandomMessageSteps(unsigned seed) : rng_(seed) {}

  std::vector<Json> next_step(const Json& current) {
    std::vector<Json> writes;
    const int write_count = pick(1, 3);
    for (int w = 0; w < write_count; ++w) {
      Json write = Json::array();
      const int message_count = pick(1, 4);
      for (int m = 0; m < message_count; ++m) {
        const int kind = pick(0, 99);
        if (kind < 2) {
          write.push_back(remove(std::string(kRemoveAllMessages)));
        } else if (kind < 20 && !current.empty()) {
          write.push_back(remove(existing_id(current)));
        } else if (kind < 22) {
          write.push_back(remove("never-" + std::to_string(next_id_++)));
        } else if (kind < 45 && !current.empty()) {
          write.push_back(human(existing_id(current), "edit " + std::to_string(next_id_++)));
        } else {
          write.push_back(human("n" + std::to_string(next_id_++), "text"));
        }
      }
      writes.push_back(std::move(write));
    }
    return writes;
  }

  bool chance(int percent) { return pick(0, 99) < percent; }

 private:
  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }
  std::string existing_id(const Json& current) {
    const int position = pick(0, static_cast<int>(current.size()) - 1);
    return current[static_cast<std::size_t>(position)]["id"].get<std::string>();
  }

  std::mt19937 rng_;
  int next_id_ = 0;
};

// The reference result of a step: add_messages applied write by write; nullopt if it throws.
std::optional<Json> expected_after(const Json& current, const std::vector<Json>& writes) {
  Json value = current;
  try {
    for (const Json& write : writes) value = add_messages(value, write);
  } catch (const Error&) {
    return std::nullopt;
  }
  return value;
}

// Plays the generator's next step on `channel`, whose list should read as `current` after it
// (the pure reducer's result; unchanged when the step is rejected, `threw`).
void play_step(RandomMessageSteps& steps, Channel& channel, Json& current, int step, bool& threw) {
  std::vector<Json> writes = steps.next_step(current);
  std::optional<Json> expected = expected_after(current, writes);
  threw = false;
  try {
    channel.update(std::vector<Json>(writes));
  } catch (const Error&) {
    threw = true;
  }
  ASSERT_EQ(threw, !expected) << "step " << step;
  if (expected) current = std::move(*expected);
  ASSERT_EQ(*channel.get(), current) << "step " << step;
}

TEST(AddMessagesRandomStepsTest, ChannelAgreesWithThePureReducer) {
  RandomMessageSteps steps(20261130);
  auto channel = make_add_messages_channel("messages");
  Json current = Json::array();
  int rejected = 0;
  for (int step = 0; step < 400; ++step) {
    JsonPtr held = steps.chance(20) ? channel->get() : nullptr;  // forces the copy path
    bool threw = false;
    ASSERT_NO_FATAL_FAILURE(play_step(steps, *channel, current, step, threw));
    if (threw) ++rejected;
  }
  EXPECT_GT(rejected, 0);  // the generator did exercise rejected steps
}

TEST(AddMessagesRandomStepsTest, ARestoredChannelAgreesWithThePureReducer) {
  // A restored list is indexed at its first update: ids merge, replace and remove as in a
  // channel that never left memory, whichever way it was restored.
  RandomMessageSteps steps(20261205);
  auto channel = make_add_messages_channel("messages");
  Json current = Json::array();
  int restored = 0;
  for (int step = 0; step < 400; ++step) {
    if (steps.chance(25)) {
      // From storage, or handed back by the values cache as the channel's own value.
      auto fresh = channel->clone_empty();
      if (steps.chance(50)) {
        fresh->restore(channel->checkpoint());
      } else {
        fresh->restore_own(channel->checkpoint());
      }
      channel = std::move(fresh);
      ++restored;
    }
    bool threw = false;
    ASSERT_NO_FATAL_FAILURE(play_step(steps, *channel, current, step, threw));
  }
  EXPECT_GT(restored, 0);
}

TEST(AddMessagesOwnershipTest, ItsOwnValueHandedBackIsSharedAsItIs) {
  auto channel = make_add_messages_channel("messages");
  channel->update({Json::array({human("a", "1"), human("b", "2")})});
  const JsonPtr own = channel->checkpoint();
  auto restored = channel->clone_empty();
  restored->restore_own(own);
  EXPECT_EQ(restored->get(), own);  // not checked, not copied
  restored->update({Json::array({human("a", "one")})});
  EXPECT_EQ(ids_of(*restored->get()), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ((*restored->get())[0]["content"], "one");
  EXPECT_EQ((*own)[0]["content"], "1");  // the value handed back stays as it was
}

TEST(AddMessagesRandomStepsTest, DeltaTurnsTheSavedListIntoTheCurrentOne) {
  RandomMessageSteps steps(7);
  auto channel = make_add_messages_channel("messages");
  Json saved = *channel->get();
  for (int step = 0; step < 400; ++step) {
    try {
      channel->update(steps.next_step(*channel->get()));
    } catch (const Error&) {
    }
    auto delta = channel->delta_since_saved();
    ASSERT_TRUE(delta);
    ASSERT_LE(delta->keep, saved.size());
    Json rebuilt(
        Json::array_t(saved.begin(), saved.begin() + static_cast<std::ptrdiff_t>(delta->keep)));
    for (const Json& item : delta->appended) rebuilt.push_back(item);
    ASSERT_EQ(rebuilt, *channel->get()) << "step " << step;
    if (steps.chance(50)) {
      channel->mark_saved();
      saved = *channel->get();
    }
  }
}

// ------------------------------------------------------------------ add_messages: ownership

TEST(AddMessagesOwnershipTest, SolelyOwnedListIsUpdatedInPlace) {
  auto channel = messages_channel(10000);
  const Json* before = channel->get().get();
  channel->update({human("new", "x")});
  channel->update({human("m5000", "edited")});
  EXPECT_EQ(channel->get().get(), before);
  EXPECT_EQ(channel->get()->size(), 10001u);
}

TEST(AddMessagesOwnershipTest, HeldSnapshotIsNeverChanged) {
  auto channel = messages_channel(3);
  JsonPtr snapshot = channel->get();
  const Json copy = *snapshot;
  channel->update({human("m1", "edited"), human("new", "x")});
  EXPECT_EQ(*snapshot, copy);
  EXPECT_NE(channel->get(), snapshot);
  EXPECT_EQ(channel->get()->size(), 4u);
}

TEST(AddMessagesOwnershipTest, RestoredValueIsSharedUntilTheFirstUpdate) {
  auto channel = make_add_messages_channel("messages");
  JsonPtr stored = make_json_ptr(Json::array({human("a", "1")}));
  channel->restore(stored);
  EXPECT_EQ(channel->get(), stored);
  channel->update({human("b", "2")});
  EXPECT_EQ(stored->size(), 1u);
  EXPECT_EQ(channel->get()->size(), 2u);
}

TEST(AddMessagesOwnershipTest, ValueHandedBackByAnotherChannelIsUpdatedInPlace) {
  // A run keeps its last values in a cache and gives them to the next run's channels.
  JsonPtr cached;
  {
    auto previous_run = messages_channel(1000);
    cached = previous_run->get();
  }
  auto channel = make_add_messages_channel("messages");
  const Json* address = cached.get();
  channel->restore(std::move(cached));
  channel->update({human("new", "x")});
  EXPECT_EQ(channel->get().get(), address);
  EXPECT_EQ(channel->get()->size(), 1001u);
}

TEST(AddMessagesOwnershipTest, CopiedOnceThenInPlaceAgain) {
  auto channel = messages_channel(100);
  {
    JsonPtr reader = channel->get();
    channel->update({human("a", "x")});  // copies: `reader` still holds the old list
  }
  const Json* after_copy = channel->get().get();
  channel->update({human("b", "y")});
  EXPECT_EQ(channel->get().get(), after_copy);
}

}  // namespace
}  // namespace tollgate::graph_internal

// Events stored naming a checkpoint in place of their state (state_refs.h): what is stored
// holds no state, a read writes it back byte for byte, and an event whose checkpoint is gone
// is left out.
#include "server/state_refs.h"

#include <gtest/gtest.h>

#include "tollgate/error.h"

namespace tollgate::server {
namespace {

constexpr std::string_view kState =
    R"({"messages":[{"content":"caf\u00e9 \u0001","type":"human"}]})";

LogEntry stored_entry(std::string data) {
  LogEntry e;
  e.seq = 1;
  e.event = "values";
  e.data = std::move(data);
  return e;
}

// A task's input at that checkpoint: its state with a private key more.
constexpr std::string_view kTaskInput =
    R"({"jump_to":null,"messages":[{"content":"caf\u00e9 \u0001","type":"human"}]})";

StateRef ref(std::string graph, std::string checkpoint, StateView view = StateView::kValues) {
  StateRef out;
  out.graph_id = std::move(graph);
  out.checkpoint_id = std::move(checkpoint);
  out.view = view;
  return out;
}

// Texts of checkpoint "c1" of graph "g" on thread "t" (and no other), counting the reads.
struct Texts {
  int reads = 0;
  StateTexts fn() {
    return [this](const std::string& thread_id, const std::string& graph_id,
                  const std::string& checkpoint_id, StateView view) -> std::optional<std::string> {
      ++reads;
      if (thread_id != "t" || graph_id != "g" || checkpoint_id != "c1") return std::nullopt;
      return std::string(view == StateView::kTaskInput ? kTaskInput : kState);
    };
  }
};

TEST(StateRefsTest, TheStoredFormHoldsTheDataWithoutItsState) {
  const std::string data = "{\"params\":{\"data\":" + std::string(kState) + ",\"seq\":1}}";
  const std::size_t at = data.find(kState);
  const std::string stored = stored_with_state_ref(data, at, kState.size(), ref("g", "c1"));
  EXPECT_TRUE(has_state_ref(stored));
  EXPECT_FALSE(has_state_ref(data));
  EXPECT_EQ(stored.find("messages"), std::string::npos);
  EXPECT_NE(stored.find("\"seq\":1"), std::string::npos);
}

TEST(StateRefsTest, AReadWritesTheStateBackWhereItWas) {
  const std::string envelope = "{\"params\":{\"data\":" + std::string(kState) + ",\"seq\":1}}";
  std::vector<LogEntry> events = {
      stored_entry(
          stored_with_state_ref(envelope, envelope.find(kState), kState.size(), ref("g", "c1"))),
      stored_entry(stored_with_state_ref(kState, 0, kState.size(), ref("g", "c1"))),
      stored_entry("{\"event\":\"running\"}")};
  Texts texts;
  EXPECT_EQ(resolve_state_refs(events, "t", texts.fn()), 0u);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].data, envelope);
  EXPECT_EQ(events[1].data, kState);
  EXPECT_EQ(events[2].data, "{\"event\":\"running\"}");
  EXPECT_EQ(texts.reads, 1);  // one read for the events of one checkpoint in a row
}

TEST(StateRefsTest, ATaskStartReadsBackTheStateItsTaskStartedOn) {
  const std::string task =
      "{\"id\":\"t1\",\"input\":" + std::string(kTaskInput) + ",\"name\":\"model\"}";
  const std::string values = std::string(kState);
  const std::size_t at = task.find(kTaskInput);
  const std::string stored =
      stored_with_state_ref(task, at, kTaskInput.size(), ref("g", "c1", StateView::kTaskInput));
  EXPECT_EQ(stored[0], '\x02');
  EXPECT_TRUE(has_state_ref(stored));
  EXPECT_EQ(stored.find("jump_to"), std::string::npos);
  // The values event and the task start of one checkpoint: one read for each view.
  std::vector<LogEntry> events = {
      stored_entry(stored_with_state_ref(values, 0, values.size(), ref("g", "c1"))),
      stored_entry(stored), stored_entry(stored)};
  Texts texts;
  EXPECT_EQ(resolve_state_refs(events, "t", texts.fn()), 0u);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].data, values);
  EXPECT_EQ(events[1].data, task);
  EXPECT_EQ(events[2].data, task);
  EXPECT_EQ(texts.reads, 2);
}

TEST(StateRefsTest, AnEventWhoseCheckpointIsGoneIsLeftOut) {
  std::vector<LogEntry> events = {
      stored_entry("{\"event\":\"running\"}"),
      stored_entry(stored_with_state_ref(kState, 0, kState.size(), ref("g", "pruned"))),
      stored_entry(stored_with_state_ref(kState, 0, kState.size(), ref("other graph", "c1"))),
      stored_entry(stored_with_state_ref(kState, 0, kState.size(), ref("g", "c1")))};
  Texts texts;
  EXPECT_EQ(resolve_state_refs(events, "t", texts.fn()), 2u);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "{\"event\":\"running\"}");
  EXPECT_EQ(events[1].data, kState);
  // Without a way to read checkpoints, every such event is left out.
  std::vector<LogEntry> unread = {
      stored_entry(stored_with_state_ref(kState, 0, kState.size(), ref("g", "c1")))};
  EXPECT_EQ(resolve_state_refs(unread, "t", StateTexts()), 1u);
  EXPECT_TRUE(unread.empty());
}

TEST(StateRefsTest, AMalformedStoredFormIsAnError) {
  for (const std::string& bad : {std::string("\x01"
                                             "c1"),
                                 std::string("\x01"
                                             "c1\x01g\x01x\x01{}"),
                                 std::string("\x01"
                                             "c1\x01g\x01"
                                             "99\x01{}"),
                                 std::string("\x01\x01g\x01"
                                             "0\x01"),
                                 std::string("\x02"
                                             "c1\x01g")}) {
    std::vector<LogEntry> events = {stored_entry(bad)};
    Texts texts;
    EXPECT_THROW(resolve_state_refs(events, "t", texts.fn()), Error) << bad;
  }
}

}  // namespace
}  // namespace tollgate::server

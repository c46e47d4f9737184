#include "server/thread_streams.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "server/run_events.h"
#include "server/run_manager.h"
#include "server/sql_store.h"
#include "server/wire_format.h"

namespace tollgate::server {
namespace {

LogEntry entry(std::string channel, std::vector<std::string> ns, std::int64_t seq = 1) {
  LogEntry e;
  e.channel = std::move(channel);
  e.ns = std::move(ns);
  e.seq = seq;
  return e;
}

TEST(StreamFilterTest, MatchesChannelsAndNamedCustomChannels) {
  StreamFilter filter;
  filter.channels = {"values", "custom"};
  EXPECT_TRUE(filter.matches(entry("values", {})));
  EXPECT_TRUE(filter.matches(entry("custom:progress", {})));
  EXPECT_FALSE(filter.matches(entry("messages", {})));
}

TEST(StreamFilterTest, NamespacePrefixAndDepthLimitTheEvents) {
  StreamFilter filter;
  filter.channels = {"values"};
  filter.has_namespaces = true;
  filter.namespaces = {{}};
  filter.depth = 1;
  EXPECT_TRUE(filter.matches(entry("values", {})));
  EXPECT_TRUE(filter.matches(entry("values", {"child:1"})));
  EXPECT_FALSE(filter.matches(entry("values", {"child:1", "inner:2"})));
  filter.namespaces = {{"child"}};
  filter.depth = 0;
  EXPECT_TRUE(filter.matches(entry("values", {"child:1"})));
  EXPECT_FALSE(filter.matches(entry("values", {})));
}

TEST(StreamFilterTest, SinceSkipsEventsAtOrBeforeIt) {
  StreamFilter filter;
  filter.channels = {"lifecycle"};
  filter.since = 5;
  EXPECT_FALSE(filter.matches(entry("lifecycle", {}, 5)));
  EXPECT_TRUE(filter.matches(entry("lifecycle", {}, 6)));
}

class ThreadStreamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tollgate_thread_streams_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path_.string() + suffix);
  }
  std::filesystem::path path_;
};

TEST_F(ThreadStreamsTest, SeqContinuesAcrossRunsAndRestarts) {
  {
    SqliteStore store(path_.string());
    ThreadStreams streams(store);
    EXPECT_EQ(streams.emit("t", "values", {}, Json::object()), 1);
    EXPECT_EQ(streams.emit("t", "lifecycle", {}, Json{{"event", "running"}}, "", "r1"), 2);
  }
  SqliteStore store(path_.string());
  ThreadStreams streams(store);
  EXPECT_EQ(streams.current_seq("t"), 2);
  EXPECT_EQ(streams.log("t")->size(), 2u);
  EXPECT_EQ(streams.emit("t", "values", {}, Json::object()), 3);
}

TEST_F(ThreadStreamsTest, RootLifecycleEventsCarryTheRunInTheirId) {
  SqliteStore store(path_.string());
  ThreadStreams streams(store);
  streams.emit("t", "lifecycle", {}, Json{{"event", "running"}}, "", "run-1");
  streams.emit("t", "input.requested", {}, Json{{"interrupt_id", "i"}});
  auto entries = streams.log("t")->read(0, 10, nullptr);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0]->id, "synth:run-1:1");
  EXPECT_EQ(entries[1]->id, "2");
  EXPECT_EQ(entries[1]->channel, "input");
  Json envelope = Json::parse(entries[1]->data);
  EXPECT_EQ(envelope["type"], "event");
  EXPECT_EQ(envelope["seq"], 2);
  EXPECT_EQ(envelope["method"], "input.requested");
  EXPECT_EQ(envelope["params"]["namespace"], Json::array());
}

TEST_F(ThreadStreamsTest, DataGivenAsJsonTextMakesTheSameEnvelope) {
  SqliteStore store(path_.string());
  ThreadStreams streams(store);
  const Json data{{"event", "content-block-delta"}, {"delta", {{"text", "20 \xC2\xB0" "C"}}}};
  streams.emit("t", "messages", {"model:1"}, data, "model");
  streams.emit_json("t", "messages", {"model:1"}, event_json(data), "model");
  auto entries = streams.log("t")->read(0, 10, nullptr);
  ASSERT_EQ(entries.size(), 2u);
  Json first = Json::parse(entries[0]->data);
  Json second = Json::parse(entries[1]->data);
  EXPECT_EQ(second["seq"], 2);
  EXPECT_EQ(second["params"]["data"], data);
  EXPECT_EQ(second["params"]["node"], "model");
  for (Json* envelope : {&first, &second}) {
    envelope->erase("seq");
    envelope->erase("event_id");
    (*envelope)["params"].erase("timestamp");
  }
  EXPECT_EQ(first, second);
  // Written in the serializer's member order, as a dump of the envelope would be.
  EXPECT_EQ(entries[1]->data, event_json(Json::parse(entries[1]->data)));
}

// A root event of the graph.
StreamEvent stream_event(StreamMode mode, Json data, const State* state = nullptr) {
  StreamEvent event{};
  event.mode = mode;
  event.data = std::move(data);
  event.state = state;
  return event;
}

// A RunEvents of run r1 on thread t of graph g (`refer`: checkpoints are on disk before their
// events) given `events`.
void emit_run(SqliteStore& store, ThreadStreams& streams, bool refer,
              const std::vector<StreamEvent>& events) {
  RunRecord record;
  record.run_id = "r1";
  record.thread_id = "t";
  RunRequest request;
  RunEvents run_events(store, streams, std::make_shared<EventLog>(), record, request, "g");
  run_events.refer_to_checkpoints(refer);
  for (const StreamEvent& event : events) run_events.on_event(event);
}

// emit_run with a client reading the thread's stream; returns the data of its v2 events.
std::vector<std::string> play(const std::string& path, bool refer,
                              const std::vector<StreamEvent>& events) {
  SqliteStore store(path);
  ThreadStreams streams(store);
  const std::shared_ptr<EventLog> reader = streams.log("t");  // a client reading as they come
  emit_run(store, streams, refer, events);
  std::vector<std::string> live;
  for (const auto& e : reader->read(0, 100, nullptr)) live.push_back(e->data);
  return live;
}

// The `method` events among a run's v2 events, as their data reads.
// Each is written in the serializer's member order, as a dump of the envelope would be.
std::vector<Json> v2_events(const std::vector<std::string>& events, const char* method) {
  std::vector<Json> out;
  for (const std::string& data : events) {
    const Json envelope = Json::parse(data);
    if (envelope["method"] != method) continue;
    EXPECT_EQ(data, event_json(envelope));
    out.push_back(envelope["params"]["data"]);
  }
  return out;
}

TEST_F(ThreadStreamsTest, DataWrittenIntoTheEventIsWhereTheEventSaysAndItsStateRefIsCompleted) {
  SqliteStore store(path_.string());
  ThreadStreams streams(store);
  const std::shared_ptr<EventLog> reader = streams.log("t");
  const std::string state = R"({"messages":[]})";
  StateRef ref{"g", "c1", StateView::kTaskInput, 0, 0};
  const ThreadStreams::Emitted emitted = streams.emit_written(
      "t", "tasks", {},
      [&](std::string& out) {
        out += R"({"id":"t1","input":)";
        ref.at = 20;  // known once written
        ref.size = state.size();
        out += state;
        out += '}';
      },
      0, "", "r1", &ref);
  ASSERT_NE(emitted.entry, nullptr);
  const std::string data = emitted.entry->data.substr(emitted.data_at, emitted.data_size);
  EXPECT_EQ(data, R"({"id":"t1","input":{"messages":[]}})");
  EXPECT_EQ(Json::parse(emitted.entry->data)["params"]["data"], Json::parse(data));
  // Stored naming the checkpoint in place of the input the writer said it wrote.
  ASSERT_TRUE(has_state_ref(emitted.entry->stored));
  EXPECT_EQ(emitted.entry->stored.find(state), std::string::npos);
  EXPECT_EQ(reader->read(0, 10, nullptr).front(), emitted.entry);
}

TEST_F(ThreadStreamsTest, ATaskStartingOnTheShownStateReadsAsThatStateAndAnotherAsItself) {
  auto state_of = [](Json messages) {
    std::map<std::string, JsonPtr, std::less<>> values;
    values["messages"] = std::make_shared<const Json>(std::move(messages));
    values["empty"] = nullptr;
    values["note"] = std::make_shared<const Json>("caf\xC3\xA9 \"quoted\"\n");
    return State(std::move(values));
  };
  const State shown = state_of(Json::array({"hello"}));
  // Same key, another value: its own text, never the shown state's.
  const State other = state_of(Json::array({"hello", "more"}));
  const Json task{{"id", "task-1"}, {"name", "model"}, {"triggers", Json::array({"a"})}};
  const std::vector<Json> tasks =
      v2_events(play(path_.string(), false,
                     {stream_event(StreamMode::kValues, Json(), &shown),
                      stream_event(StreamMode::kTasks, task, &shown),
                      stream_event(StreamMode::kTasks, task, &other),
                      stream_event(StreamMode::kCustom, Json("let go"), nullptr),
                      stream_event(StreamMode::kTasks, task, &shown)}),
                "tasks");
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0]["input"], shown.to_json());
  EXPECT_EQ(tasks[0]["name"], "model");
  EXPECT_EQ(tasks[1]["input"], other.to_json());
  EXPECT_EQ(tasks[2]["input"], shown.to_json());
}

State list_state(Json messages) {
  std::map<std::string, JsonPtr, std::less<>> values;
  values["messages"] = std::make_shared<const Json>(std::move(messages));
  values["note"] = std::make_shared<const Json>("caf\xC3\xA9");
  return State(std::move(values));
}

// A root values event of loop `loop`, its `index`th, `unchanged` first messages said unchanged.
StreamEvent shown_values(const State& state, std::uint64_t loop, std::uint64_t index,
                         std::size_t unchanged) {
  StreamEvent event = stream_event(StreamMode::kValues, Json(), &state);
  event.loop = loop;
  event.values_index = index;
  event.unchanged_items = {{"messages", unchanged}};
  return event;
}

TEST_F(ThreadStreamsTest, AValuesEventWritesAListFromThePreviousOnesTextWhereItIsUnchanged) {
  const Json m0{{"id", "m0"}, {"content", "hi \"there\"\n"}};
  const Json m1{{"id", "m1"}, {"content", Json::array({1, 2.5, nullptr})}};
  const Json m2{{"id", "m2"}, {"content", "caf\xC3\xA9"}};
  const State first = list_state(Json::array({m0}));
  const State grown = list_state(Json::array({m0, m1}));
  const State edited = list_state(Json::array({Json{{"id", "m0"}, {"content", "edited"}}, m1, m2}));
  const State empty = list_state(Json::array());
  const Json stateless("a message chunk");
  const std::vector<Json> values =
      v2_events(play(path_.string(), false,
                     {shown_values(first, 7, 1, 0), stream_event(StreamMode::kCustom, stateless),
                      shown_values(grown, 7, 2, 1), stream_event(StreamMode::kCustom, stateless),
                      shown_values(edited, 7, 3, 0), stream_event(StreamMode::kCustom, stateless),
                      shown_values(empty, 7, 4, 0)}),
                "values");
  ASSERT_EQ(values.size(), 4u);
  EXPECT_EQ(values[0], first.to_json());
  EXPECT_EQ(values[1], grown.to_json());
  EXPECT_EQ(values[2], edited.to_json());
  EXPECT_EQ(values[3], empty.to_json());
}

TEST_F(ThreadStreamsTest, AValuesEventTakesThePreviousTextOnlyFromTheSameLoopsEventJustBefore) {
  const Json m0{{"id", "m0"}, {"content", "first"}};
  const Json other{{"id", "m0"}, {"content", "another loop's"}};
  const State first = list_state(Json::array({m0}));
  const State second = list_state(Json::array({other, m0}));
  // The graph's word is taken: with the event just before of the same loop, the first item's
  // text is the one written then. Anything else is written whole.
  const std::vector<Json> values = v2_events(
      play(path_.string(), false,
           {shown_values(first, 7, 1, 0), shown_values(second, 7, 2, 1),    // reused
            shown_values(first, 7, 3, 0), shown_values(second, 7, 5, 1),    // an event skipped
            shown_values(first, 7, 6, 0), shown_values(second, 8, 7, 1),    // another loop
            shown_values(first, 7, 8, 0), shown_values(second, 7, 9, 9)}),  // more than it had
      "values");
  ASSERT_EQ(values.size(), 8u);
  EXPECT_EQ(values[1]["messages"], Json::array({m0, m0}));
  EXPECT_EQ(values[3], second.to_json());
  EXPECT_EQ(values[5], second.to_json());
  EXPECT_EQ(values[7]["messages"], Json::array({m0, m0}));  // the one it had, then the rest
}

TEST_F(ThreadStreamsTest, IdleLogsAreDroppedAndRebuiltFromTheStore) {
  SqliteStore store(path_.string());
  ThreadStreams streams(store);
  const std::size_t threads = 3 * ThreadStreams::kIdleLogsKept;
  for (std::size_t i = 0; i < threads; ++i) {
    streams.emit("t" + std::to_string(i), "values", {}, Json::object());
  }
  EXPECT_LE(streams.logs_in_memory(), ThreadStreams::kIdleLogsKept);
  // The first thread's log was dropped; its sequence and events come back from the store.
  EXPECT_EQ(streams.emit("t0", "values", {}, Json::object()), 2);
  EXPECT_EQ(streams.log("t0")->size(), 2u);
}

TEST_F(ThreadStreamsTest, ALogBeingReadIsKeptAndGetsNewEvents) {
  SqliteStore store(path_.string());
  ThreadStreams streams(store);
  streams.emit("read", "values", {}, Json::object());
  std::shared_ptr<EventLog> reader = streams.log("read");
  for (std::size_t i = 0; i < 3 * ThreadStreams::kIdleLogsKept; ++i) {
    streams.emit("t" + std::to_string(i), "values", {}, Json::object());
  }
  streams.emit("read", "lifecycle", {}, Json{{"event", "running"}});
  EXPECT_EQ(reader->size(), 2u);
  EXPECT_EQ(streams.log("read"), reader);
}

TEST_F(ThreadStreamsTest, AReaderAfterARunGetsTheStoredEventsThenTheNewOnesInOrder) {
  SqliteStore store(path_.string());
  {
    ThreadStreams earlier(store);
    earlier.emit("t", "values", {}, Json{{"n", 1}});
    earlier.emit("t", "values", {}, Json{{"n", 2}});
  }
  ThreadStreams streams(store);
  // A run appends without the stored events in memory; its event follows them.
  EXPECT_EQ(streams.emit("t", "values", {}, Json{{"n", 3}}), 3);
  std::shared_ptr<EventLog> log = streams.log("t");
  const auto entries = log->read(0, 10, nullptr);
  ASSERT_EQ(entries.size(), 3u);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i]->seq, static_cast<std::int64_t>(i) + 1);
    EXPECT_EQ(Json::parse(entries[i]->data)["params"]["data"]["n"], i + 1);
  }
  // From then on the reader's log gets the new events as they come.
  streams.emit("t", "values", {}, Json{{"n", 4}});
  EXPECT_EQ(log->size(), 4u);
  EXPECT_EQ(streams.log("t"), log);
}

TEST_F(ThreadStreamsTest, ARunsEndLetsGoOfALogNobodyReadsAndKeepsOneBeingRead) {
  SqliteStore store(path_.string());
  ThreadStreams streams(store);
  streams.hold("alone");
  streams.emit("alone", "values", {}, Json::object());
  streams.release("alone");
  EXPECT_EQ(streams.logs_in_memory(), 0u);
  EXPECT_EQ(streams.emit("alone", "values", {}, Json::object()), 2);

  std::shared_ptr<EventLog> reader = streams.log("read");
  streams.hold("read");
  streams.emit("read", "values", {}, Json::object());
  EXPECT_EQ(reader->size(), 0u);  // held back until the run's end
  streams.release("read");
  EXPECT_EQ(reader->size(), 1u);
  EXPECT_EQ(streams.log("read"), reader);
}

State messages_state(std::string text) {
  std::map<std::string, JsonPtr, std::less<>> values;
  values["messages"] = std::make_shared<const Json>(Json::array({std::move(text)}));
  return State(std::move(values));
}

RunRecord run_record(const std::string& run_id, const std::string& thread_id) {
  RunRecord record;
  record.run_id = run_id;
  record.thread_id = thread_id;
  return record;
}

StreamEvent checkpoint_named(const std::string& id) {
  return stream_event(StreamMode::kCheckpoints,
                      Json{{"config", {{"configurable", {{"checkpoint_id", id}}}}},
                           {"metadata", {{"step", 1}, {"source", "loop"}}},
                           {"parent_config", nullptr}});
}

// A run r<n> of thread `thread` given `events`, its RunEvents handed `carried` first; returns
// the data of the run's live v2 `method` events, and sets `kept` to the lists it hands on.
std::vector<Json> play_run(const std::string& path, const std::string& thread,
                           RunEvents::CheckpointLists carried,
                           const std::vector<StreamEvent>& events, const char* method,
                           RunEvents::CheckpointLists* kept = nullptr) {
  SqliteStore store(path);
  ThreadStreams streams(store);
  RunRecord record;
  record.run_id = "r-" + thread;
  record.thread_id = thread;
  RunRequest request;
  RunEvents run_events(store, streams, std::make_shared<EventLog>(), record, request, "g");
  run_events.carry_lists(std::move(carried));
  for (const StreamEvent& event : events) run_events.on_event(event);
  if (kept != nullptr) *kept = run_events.take_lists();
  std::vector<std::string> live;
  for (const auto& e : streams.log(thread)->read(0, 100, nullptr)) live.push_back(e->data);
  return v2_events(live, method);
}

// A task start on `state`, the state of checkpoint `checkpoint_id`.
StreamEvent task_on(const State& state, const std::string& checkpoint_id) {
  StreamEvent event =
      stream_event(StreamMode::kTasks, Json{{"id", "task-1"}, {"name", "model"}}, &state);
  event.checkpoint_id = checkpoint_id;
  return event;
}

TEST_F(ThreadStreamsTest, ARunWritesTheListsOfTheCheckpointItLoadedFromTheLastRunsText) {
  const Json m0{{"id", "m0"}, {"content", "shown by the last run"}};
  const Json other{{"id", "m0"}, {"content", "another text"}};
  const Json m1{{"id", "m1"}, {"content", "new"}};
  const State shown = list_state(Json::array({m0}));
  RunEvents::CheckpointLists kept;
  play_run(path_.string(), "t1", {}, {checkpoint_named("c1"), shown_values(shown, 7, 1, 0)},
           "values", &kept);
  EXPECT_EQ(kept.checkpoint_id, "c1");
  ASSERT_EQ(kept.lists.count("messages"), 1u);
  // The next run: the graph's word is taken. A task on c1's state and the first values event
  // counting against c1 write c1's first item from its text (so they read m0, not `other`).
  const State one = list_state(Json::array({other}));
  const State grown = list_state(Json::array({other, m1}));
  StreamEvent first = shown_values(grown, 8, 1, 1);
  first.values_base = "c1";
  const std::vector<Json> tasks =
      play_run(path_.string(), "t2", kept, {task_on(one, "c1")}, "tasks");
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0]["input"]["messages"], Json::array({m0}));
  const std::vector<Json> values = play_run(path_.string(), "t3", kept, {first}, "values");
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0]["messages"], Json::array({m0, m1}));
  // Another checkpoint's state, or a list of another length, is written whole.
  StreamEvent elsewhere = first;
  elsewhere.values_base = "c2";
  EXPECT_EQ(play_run(path_.string(), "t4", kept, {elsewhere}, "values")[0], grown.to_json());
  EXPECT_EQ(play_run(path_.string(), "t5", kept, {task_on(one, "c2")}, "tasks")[0]["input"],
            one.to_json());
  EXPECT_EQ(play_run(path_.string(), "t6", kept, {task_on(grown, "c1")}, "tasks")[0]["input"],
            grown.to_json());
  // A task on another checkpoint's state, before its loop's first values event: as far as
  // its lists are unchanged since the loop loaded c1.
  StreamEvent after_input = task_on(grown, "c-input");
  after_input.values_base = "c1";
  after_input.unchanged_items = {{"messages", 1}};
  EXPECT_EQ(play_run(path_.string(), "t8", kept, {after_input}, "tasks")[0]["input"]["messages"],
            Json::array({m0, m1}));
  after_input.values_base = "c2";
  EXPECT_EQ(play_run(path_.string(), "t9", kept, {after_input}, "tasks")[0]["input"],
            grown.to_json());
  // A run whose last values event showed no checkpoint's state hands nothing on.
  RunEvents::CheckpointLists none;
  play_run(path_.string(), "t7", kept, {shown_values(shown, 9, 1, 0)}, "values", &none);
  EXPECT_EQ(none.checkpoint_id, "");
  EXPECT_TRUE(none.lists.empty());
}

TEST(CarriedListsTest, KeepsTheThreadsThatRanLastWithinItsBounds) {
  auto lists = [](const std::string& checkpoint, std::size_t size) {
    RunEvents::CheckpointLists out;
    out.checkpoint_id = checkpoint;
    out.lists["messages"].text = RunEvents::SharedText(std::string(size, 'x'));
    return out;
  };
  CarriedLists carried(2, 1000);
  carried.keep("a", lists("ca", 100));
  carried.keep("b", lists("cb", 100));
  carried.keep("c", lists("cc", 100));  // two threads at most: a goes
  EXPECT_EQ(carried.size(), 2u);
  EXPECT_EQ(carried.take("a").checkpoint_id, "");
  EXPECT_EQ(carried.take("b").checkpoint_id, "cb");  // taken out
  EXPECT_EQ(carried.take("b").checkpoint_id, "");
  carried.keep("d", lists("cd", 950));  // over the bytes with c: c goes
  EXPECT_EQ(carried.take("c").checkpoint_id, "");
  EXPECT_EQ(carried.take("d").checkpoint_id, "cd");
  carried.keep("e", lists("ce", 2000));  // larger than the bound: not kept
  carried.keep("f", lists("", 10));      // no checkpoint: nothing to keep
  EXPECT_EQ(carried.size(), 0u);
  carried.keep("g", lists("c1", 10));
  carried.keep("g", lists("c2", 10));  // the thread's newer lists replace its older
  EXPECT_EQ(carried.size(), 1u);
  EXPECT_EQ(carried.take("g").checkpoint_id, "c2");
}

TEST_F(ThreadStreamsTest, AValuesEventRightAfterItsCheckpointIsStoredWithoutItsState) {
  const State named = messages_state("the state of c1, written back");
  const State unnamed = messages_state("a state after no checkpoint event, stored whole");
  const std::vector<std::string> live =
      play(path_.string(), true,
           {checkpoint_named("c1"), stream_event(StreamMode::kValues, Json(), &named),
            stream_event(StreamMode::kValues, Json(), &unnamed)});
  ASSERT_EQ(live.size(), 3u);
  // Read without a way to read checkpoints: the event stored naming one is left out, the one
  // stored whole is as it was.
  {
    SqliteStore store(path_.string());
    const std::vector<LogEntry> bare = store.thread_events("t");
    ASSERT_EQ(bare.size(), 2u);
    EXPECT_EQ(bare[0].data, live[0]);
    EXPECT_EQ(bare[1].data, live[2]);
  }
  // With one, every event reads as it did live, byte for byte.
  SqliteStore store(path_.string());
  store.set_state_texts([&named](const std::string& thread_id, const std::string& graph_id,
                                 const std::string& checkpoint_id,
                                 StateView view) -> std::optional<std::string> {
    if (thread_id != "t" || graph_id != "g" || checkpoint_id != "c1") return std::nullopt;
    if (view != StateView::kValues) return std::nullopt;
    return state_event_json(named);
  });
  const std::vector<LogEntry> read = store.thread_events("t");
  ASSERT_EQ(read.size(), 3u);
  for (std::size_t i = 0; i < read.size(); ++i) EXPECT_EQ(read[i].data, live[i]) << i;
}

TEST_F(ThreadStreamsTest, TheListsOfTheCheckpointTheLastValuesEventShowedServeThatStatesText) {
  const Json m0{{"id", "m0"}, {"content", "caf\xC3\xA9 \"quoted\"\n"}};
  const State first = list_state(Json::array({m0}));
  const State last = list_state(Json::array({m0, Json{{"id", "m1"}, {"content", "more"}}}));
  SqliteStore store(path_.string());
  ThreadStreams streams(store);
  RunRecord record;
  record.run_id = "r1";
  record.thread_id = "t";
  const RunRequest request;  // held by reference, as a run's own
  RunEvents run_events(store, streams, std::make_shared<EventLog>(), record, request, "g");
  run_events.refer_to_checkpoints(true);
  for (const StreamEvent& event :
       {checkpoint_named("c1"), shown_values(first, 7, 1, 0), checkpoint_named("c2"),
        shown_values(last, 7, 2, 1), stream_event(StreamMode::kCustom, Json("a chunk"))}) {
    run_events.on_event(event);
  }
  // The lists of c2's state (not the other values), each with the state's own value.
  const ValueTexts texts = run_events.list_texts_of(last, "c2");
  ASSERT_EQ(texts.size(), 1u);
  EXPECT_EQ(texts.at("messages").first, last.value_ptr("messages"));
  EXPECT_EQ(texts.at("messages").second, event_json(*last.value_ptr("messages")));
  EXPECT_EQ(state_event_json(last, &texts), event_json(last.to_json()));
  // Another checkpoint's state, or a state of none, writes its lists itself.
  EXPECT_TRUE(run_events.list_texts_of(last, "c1").empty());
  EXPECT_TRUE(run_events.list_texts_of(last, "").empty());
}

// A task's start on the state of checkpoint `checkpoint` ("": on state no checkpoint holds).
StreamEvent task_started(const Json& task, const State& input, std::string checkpoint) {
  StreamEvent event = stream_event(StreamMode::kTasks, task, &input);
  event.checkpoint_id = std::move(checkpoint);
  return event;
}

// The state a task of the step starts on: the step's values and a private key.
State task_input_of(const State& values) {
  std::map<std::string, JsonPtr, std::less<>> with_private = values.values();
  with_private["jump_to"] = std::make_shared<const Json>("model");
  return State(std::move(with_private));
}

// The store reads thread "t"'s checkpoint c1 of graph "g" as `values` and its tasks' `input`.
void serve_c1(SqliteStore& store, const State& values, const State& input) {
  store.set_state_texts([&values, &input](const std::string& thread_id, const std::string& graph_id,
                                          const std::string& checkpoint_id,
                                          StateView view) -> std::optional<std::string> {
    if (thread_id != "t" || graph_id != "g" || checkpoint_id != "c1") return std::nullopt;
    return state_event_json(view == StateView::kTaskInput ? input : values);
  });
}

TEST_F(ThreadStreamsTest, ATaskStartingOnACheckpointsStateIsStoredNamingIt) {
  const State values = messages_state("the state of c1");
  const State input = task_input_of(values);
  const Json task{{"id", "task-1"}, {"name", "model"}, {"triggers", Json::array({"a"})}};
  const Json sent{{"id", "task-2"}, {"name", "each"}, {"input", {{"item", "a Send's own"}}}};
  const std::vector<std::string> live =
      play(path_.string(), true,
           {task_started(task, input, ""),    // on state no checkpoint holds: whole
            task_started(task, input, "c1"),  // a resumed step: no checkpoint event before it
            checkpoint_named("c1"), stream_event(StreamMode::kValues, Json(), &values),
            task_started(task, input, "c1"),
            stream_event(StreamMode::kCustom, Json("a chunk between"), nullptr),
            stream_event(StreamMode::kTasks, sent, nullptr)});  // a Send's task: whole
  ASSERT_EQ(live.size(), 7u);
  {
    SqliteStore store(path_.string());  // no way to read checkpoints
    const std::vector<LogEntry> bare = store.thread_events("t");
    ASSERT_EQ(bare.size(), 4u);  // the values event and the two task starts on c1 left out
    EXPECT_EQ(bare[0].data, live[0]);
    EXPECT_EQ(bare[1].data, live[2]);
    EXPECT_EQ(bare[2].data, live[5]);
    EXPECT_EQ(bare[3].data, live[6]);
  }
  SqliteStore store(path_.string());
  serve_c1(store, values, input);
  const std::vector<LogEntry> read = store.thread_events("t");
  ASSERT_EQ(read.size(), live.size());
  for (std::size_t i = 0; i < read.size(); ++i) EXPECT_EQ(read[i].data, live[i]) << i;
  EXPECT_EQ(v2_events(live, "tasks")[1]["input"], input.to_json());
}

// An event's text with its time left out (two plays of the same events differ only there).
Json timeless(const std::string& data) {
  Json envelope = Json::parse(data);
  envelope["params"].erase("timestamp");
  return envelope;
}

TEST_F(ThreadStreamsTest, EventsStoredWithNobodyReadingReadBackWholeThenTheNewOnesLive) {
  const State values = messages_state("the state of c1");
  const State input = task_input_of(values);
  const Json task{{"id", "task-1"}, {"name", "model"}, {"triggers", Json::array({"a"})}};
  const std::vector<StreamEvent> events = {
      checkpoint_named("c1"), stream_event(StreamMode::kValues, Json(), &values),
      task_started(task, input, "c1"),
      stream_event(StreamMode::kCustom, Json("a chunk between"), nullptr)};
  const std::vector<std::string> live = play(path_.string(), true, events);
  ASSERT_EQ(live.size(), 4u);
  std::filesystem::remove(path_);
  std::filesystem::remove(path_.string() + "-wal");
  std::filesystem::remove(path_.string() + "-shm");

  SqliteStore store(path_.string());
  serve_c1(store, values, input);
  ThreadStreams streams(store);
  emit_run(store, streams, true, events);
  // Queued for the store naming c1 in place of the states (the task's input never written:
  // the next test), the events read back as a reader connected all along read them.
  const std::vector<LogEntry> queued = store.thread_events("t");  // resolved, as a reader's
  ASSERT_EQ(queued.size(), live.size());
  for (std::size_t i = 0; i < queued.size(); ++i) {
    EXPECT_EQ(timeless(queued[i].data), timeless(live[i])) << i;
  }
  // A reader that comes now reads the same events, whole, then what comes after.
  const std::shared_ptr<EventLog> reader = streams.log("t");
  streams.emit("t", "lifecycle", {}, Json{{"event", "success"}}, "", "r1");
  const std::vector<LogEntryPtr> read = reader->read(0, 100, nullptr);
  ASSERT_EQ(read.size(), live.size() + 1);
  for (std::size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(timeless(read[i]->data), timeless(live[i])) << i;
  }
  EXPECT_EQ(read.back()->seq, 5);
  EXPECT_EQ(Json::parse(read.back()->data)["params"]["data"]["event"], "success");
}

// Run r1 of thread t (stream mode "values", checkpoints on disk before their events, nobody
// reading the thread's stream) shows `first`, the state of c1, then `grown`, the state of c2
// whose first `unchanged` items are first's.
struct ValuesRun {
  ValuesRun(SqliteStore& store, ThreadStreams& streams, const State& first, const State& grown,
            std::size_t unchanged)
      : events(store, streams, log, record, request, "g") {
    events.refer_to_checkpoints(true);
    for (const StreamEvent& event :
         {checkpoint_named("c1"), shown_values(first, 7, 1, 0), checkpoint_named("c2"),
          shown_values(grown, 7, 2, unchanged)}) {
      events.on_event(event);
    }
  }
  // The run's legacy `values` events.
  std::vector<LogEntryPtr> legacy_values() const {
    std::vector<LogEntryPtr> out;
    for (const LogEntryPtr& entry : log->read(0, 100, nullptr)) {
      if (entry->event == "values") out.push_back(entry);
    }
    return out;
  }

  RunRecord record = run_record("r1", "t");
  const RunRequest request;
  std::shared_ptr<EventLog> log = std::make_shared<EventLog>();
  RunEvents events;
};

TEST_F(ThreadStreamsTest, WithNobodyReadingAValuesEventsStateIsWrittenOnceForTheLegacyStream) {
  const Json m0{{"id", "m0"}, {"content", "caf\xC3\xA9"}};
  const Json m1{{"id", "m1"}, {"content", "more"}};
  const State first = list_state(Json::array({m0}));
  const State grown = list_state(Json::array({m0, m1}));
  SqliteStore store(path_.string());
  ThreadStreams streams(store);
  ValuesRun run(store, streams, first, grown, 1);
  RunEvents& run_events = run.events;
  // The legacy events hold the states' texts, stored naming their checkpoints.
  const std::vector<LogEntryPtr> legacy = run.legacy_values();
  ASSERT_EQ(legacy.size(), 2u);
  EXPECT_EQ(legacy[0]->data, event_json(first.to_json()));
  EXPECT_EQ(legacy[1]->data, event_json(grown.to_json()));
  EXPECT_TRUE(has_state_ref(legacy[1]->stored));
  // The lists kept for the thread's next run are views of the last one's text.
  const ValueTexts texts = run_events.list_texts_of(grown, "c2");
  ASSERT_EQ(texts.count("messages"), 1u);
  EXPECT_EQ(texts.at("messages").second, event_json(*grown.value_ptr("messages")));
  EXPECT_EQ(state_event_json(grown, &texts), event_json(grown.to_json()));
  // The thread's v2 events are queued as stored: without c1 and c2 both are left out.
  const std::vector<LogEntry> bare = store.thread_events("t");
  EXPECT_EQ(std::count_if(bare.begin(), bare.end(),
                          [](const LogEntry& e) { return e.event == "values"; }),
            0);
  // A reader that comes reads them whole from the checkpoints.
  store.set_state_texts([&](const std::string&, const std::string&,
                            const std::string& checkpoint_id,
                            StateView) -> std::optional<std::string> {
    if (checkpoint_id == "c1") return state_event_json(first);
    if (checkpoint_id == "c2") return state_event_json(grown);
    return std::nullopt;
  });
  std::vector<Json> shown;
  for (const LogEntryPtr& entry : streams.log("t")->read(0, 100, nullptr)) {
    if (entry->event == "values") shown.push_back(Json::parse(entry->data)["params"]["data"]);
  }
  ASSERT_EQ(shown.size(), 2u);
  EXPECT_EQ(shown[0], first.to_json());
  EXPECT_EQ(shown[1], grown.to_json());
}

TEST_F(ThreadStreamsTest, ALegacyValuesTextKeptForTheRunHasLittleRoomToSpare) {
  // A long conversation, then a long message more: the second text is written from the first.
  Json::array_t long_list;
  for (int i = 0; i < 2000; ++i) {
    long_list.push_back(Json{{"id", "m" + std::to_string(i)}, {"content", std::string(40, 'a')}});
  }
  const State first = list_state(long_list);
  long_list.push_back(Json{{"id", "long"}, {"content", std::string(3000, 'b')}});
  const State grown = list_state(long_list);
  SqliteStore store(path_.string());
  ThreadStreams streams(store);
  const std::vector<LogEntryPtr> legacy =
      ValuesRun(store, streams, first, grown, 2000).legacy_values();
  ASSERT_EQ(legacy.size(), 2u);
  EXPECT_EQ(legacy[1]->data, event_json(grown.to_json()));
  for (const LogEntryPtr& entry : legacy) {
    EXPECT_LE(entry->data.capacity(), entry->data.size() + entry->data.size() / 4 + 4096);
  }
}

// A store whose first reads of thread events each see a run store one more event meanwhile.
class BusyStore : public SqliteStore {
 public:
  using SqliteStore::SqliteStore;
  std::vector<LogEntry> thread_events(const std::string& thread_id, std::int64_t after_seq,
                                      std::int64_t* last_seq) override {
    reads.push_back(after_seq);
    std::vector<LogEntry> out = SqliteStore::thread_events(thread_id, after_seq, last_seq);
    if (streams != nullptr && reads.size() <= 3) {
      streams->emit(thread_id, "custom", {}, Json{{"during read", reads.size()}});
    }
    return out;
  }
  ThreadStreams* streams = nullptr;
  std::vector<std::int64_t> reads;  // after_seq of each read
};

TEST_F(ThreadStreamsTest, AReaderComingWhileEventsAreStoredReadsEachOnceAndOnlyTheNewOnesAgain) {
  BusyStore store(path_.string());
  ThreadStreams streams(store);
  for (int i = 0; i < 5; ++i) streams.emit("t", "custom", {}, Json{{"before", i}});
  store.streams = &streams;
  const std::shared_ptr<EventLog> reader = streams.log("t");
  streams.emit("t", "custom", {}, Json{{"after", 0}});
  // Every event once, in order: 5 before, 3 stored while the log was read, 1 after.
  const std::vector<LogEntryPtr> read = reader->read(0, 100, nullptr);
  ASSERT_EQ(read.size(), 9u);
  for (std::size_t i = 0; i < read.size(); ++i) EXPECT_EQ(read[i]->seq, std::int64_t(i) + 1);
  EXPECT_EQ(Json::parse(read[8]->data)["params"]["data"], Json({{"after", 0}}));
  // Each round read only what the one before had not.
  EXPECT_EQ(store.reads, (std::vector<std::int64_t>{0, 5, 6, 7}));
}

TEST_F(ThreadStreamsTest, WithNobodyReadingAnEventIsStoredOnlyAndItsTaskInputLeftOut) {
  SqliteStore store(path_.string());
  ThreadStreams streams(store);
  StateRef ref{"g", "c1", StateView::kTaskInput, 0, 0};
  int with_state = 0;
  int without_state = 0;
  const std::function<void(std::string&)> write = [&](std::string& out) {
    ++with_state;
    out += R"({"id":"t1","input":)";
    ref.at = 20;
    ref.size = 15;
    out += R"({"messages":[]})";
    out += '}';
  };
  const std::function<void(std::string&)> write_stored = [&](std::string& out) {
    ++without_state;
    out += R"({"id":"t1","input":)";
    ref.at = 20;
    ref.size = 0;
    out += '}';
  };
  const ThreadStreams::Emitted unread =
      streams.emit_written("t", "tasks", {}, write, 0, "", "r1", &ref, &write_stored);
  EXPECT_EQ(with_state, 0);
  EXPECT_EQ(without_state, 1);
  ASSERT_TRUE(has_state_ref(unread.entry->data));  // the stored form, as read from the store
  EXPECT_TRUE(unread.entry->stored.empty());
  EXPECT_EQ(unread.data_size, 0u);
  // A reader now: the next one is written whole and kept for it.
  const std::shared_ptr<EventLog> reader = streams.log("t");
  EXPECT_EQ(reader->size(), 0u);  // the store cannot write c1's state back in: left out
  const ThreadStreams::Emitted read =
      streams.emit_written("t", "tasks", {}, write, 0, "", "r1", &ref, &write_stored);
  EXPECT_EQ(with_state, 1);
  EXPECT_EQ(without_state, 1);
  EXPECT_FALSE(has_state_ref(read.entry->data));
  ASSERT_TRUE(has_state_ref(read.entry->stored));
  ASSERT_EQ(reader->size(), 1u);
  EXPECT_EQ(reader->read(0, 1, nullptr).front(), read.entry);
  EXPECT_EQ(read.entry->seq, 2);
}

TEST_F(ThreadStreamsTest, TheSeqGoesOnAfterALastEventLeftOut) {
  const State named = messages_state("a state whose checkpoint is gone");
  play(path_.string(), true,
       {checkpoint_named("c1"), stream_event(StreamMode::kValues, Json(), &named)});
  SqliteStore store(path_.string());  // no way to read checkpoints: the values event is left out
  std::int64_t last_seq = -1;
  EXPECT_EQ(store.thread_events("t", 0, &last_seq).size(), 1u);
  EXPECT_EQ(last_seq, 2);
  ThreadStreams streams(store);
  EXPECT_EQ(streams.log("t")->size(), 1u);
  EXPECT_EQ(streams.emit("t", "lifecycle", {}, Json{{"event", "running"}}), 3);
}

TEST_F(ThreadStreamsTest, WithoutSyncDurabilityAValuesEventIsStoredWhole) {
  const State named = messages_state("stored whole");
  play(path_.string(), false,
       {checkpoint_named("c1"), stream_event(StreamMode::kValues, Json(), &named)});
  SqliteStore store(path_.string());
  const std::vector<LogEntry> read = store.thread_events("t");
  ASSERT_EQ(read.size(), 2u);
  EXPECT_NE(read[1].data.find("stored whole"), std::string::npos);
}

TEST(RunRequestTest, KwargsRoundTripKeepsWhatARestartNeeds) {
  RunRequest request;
  request.input = Json{{"messages", Json::array()}};
  request.command = Json{{"resume", "yes"}};
  request.stream_modes = {"values", "updates"};
  request.stream_subgraphs = true;
  request.checkpoint_id = "cp";
  request.interrupt_before = {"tool"};
  request.protocol_v2 = true;
  RunRequest back = RunRequest::from_kwargs(request.to_kwargs(), "t", "a");
  EXPECT_EQ(back.thread_id, "t");
  EXPECT_EQ(back.assistant_id, "a");
  EXPECT_EQ(back.input, request.input);
  EXPECT_EQ(back.command, request.command);
  EXPECT_EQ(back.stream_modes, request.stream_modes);
  EXPECT_TRUE(back.stream_subgraphs);
  EXPECT_EQ(back.checkpoint_id, "cp");
  EXPECT_EQ(back.interrupt_before, request.interrupt_before);
  EXPECT_TRUE(back.protocol_v2);
}

}  // namespace
}  // namespace tollgate::server

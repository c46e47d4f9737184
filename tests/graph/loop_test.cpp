// The superstep loop without interrupts: ordering, reducers, joins, Sends, Commands,
// conditional edges, limits, cancellation, streaming and durability.
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace tollgate {
namespace {

using testing::expect_error;
using testing::Log;
using testing::on_thread;

NodeFn logging(Log& log, std::string name, Json update = nullptr) {
  return [&log, name, update](const State&, Runtime&) -> NodeResult {
    log.add(name);
    return update;
  };
}

TEST(PregelLoop, ChainRunsNodesInOrderAndReturnsState) {
  Log log;
  StateGraph g;
  g.add_node("a", [&](const State&, Runtime&) -> NodeResult {
    log.add("a");
    return Json{{"n", 1}};
  });
  g.add_node("b", [&](const State& s, Runtime&) -> NodeResult {
    log.add("b");
    return Json{{"n", s["n"].get<int>() + 1}};
  });
  g.add_node("c", [&](const State& s, Runtime&) -> NodeResult {
    log.add("c");
    return Json{{"n", s["n"].get<int>() * 10}};
  });
  g.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c").add_edge("c", END);
  RunResult result = g.compile()->invoke(Json::object());
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(result.values.to_json(), (Json{{"n", 20}}));
  EXPECT_FALSE(result.paused);
}

TEST(PregelLoop, AStateANodeKeepsDoesNotChangeInLaterSteps) {
  State kept;
  StateGraph g;
  g.add_node("a", [&](const State& s, Runtime&) -> NodeResult {
    kept = s;
    return Json{{"n", 1}};
  });
  g.add_node("b", [](const State& s, Runtime&) -> NodeResult {
    return Json{{"n", s["n"].get<int>() + 1}};
  });
  g.add_node("c", [](const State&, Runtime&) -> NodeResult { return Json{{"m", 3}}; });
  g.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c");
  EXPECT_EQ(g.compile()->invoke(Json{{"n", 0}}).values.to_json(), (Json{{"n", 2}, {"m", 3}}));
  EXPECT_EQ(kept.to_json(), (Json{{"n", 0}}));
}

TEST(PregelLoop, EachStepSeesTheStateItsPredecessorsLeft) {
  std::vector<Json> seen;
  StateGraph g;
  for (const char* name : {"a", "b", "c"}) {
    g.add_node(name, [&seen, name](const State& s, Runtime&) -> NodeResult {
      seen.push_back(s.to_json());
      return Json{{std::string("after_") + name, true}};
    });
  }
  g.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c");
  g.compile()->invoke(Json::object());
  EXPECT_EQ(seen, (std::vector<Json>{Json::object(), Json{{"after_a", true}},
                                     Json{{"after_a", true}, {"after_b", true}}}));
}

TEST(PregelLoop, InputKeysReachTheFirstNode) {
  StateGraph g;
  g.add_node("echo", [](const State& s, Runtime&) -> NodeResult {
    return Json{{"out", s["in"]}};
  });
  g.add_edge(START, "echo");
  EXPECT_EQ(g.compile()->invoke(Json{{"in", "hi"}}).values.to_json(),
            (Json{{"in", "hi"}, {"out", "hi"}}));
}

TEST(PregelLoop, NonObjectInputIsRejected) {
  Log log;
  StateGraph g;
  g.add_node("a", logging(log, "a")).add_edge(START, "a");
  Error error = expect_error([&] { g.compile()->invoke(Json::array()); });
  EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(error.what()).find("Graph input must be a JSON object"),
            std::string::npos);
}

TEST(PregelLoop, TwoWritesToALastValueKeyInOneStepFail) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"x", 1}}; });
  g.add_node("b", [](const State&, Runtime&) -> NodeResult { return Json{{"x", 2}}; });
  g.add_edge(START, "a").add_edge(START, "b");
  Error error = expect_error([&] { g.compile()->invoke(Json::object()); });
  EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(error.what()).find("At key 'x'"), std::string::npos) << error.what();
}

TEST(PregelLoop, AppendKeyCollectsParallelWritesInNodeOrder) {
  StateSchema schema;
  schema.append("items");
  StateGraph g(schema);
  g.add_node("b", [](const State&, Runtime&) -> NodeResult { return Json{{"items", "from b"}}; });
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"items", "from a"}}; });
  g.add_edge(START, "b").add_edge(START, "a");
  EXPECT_EQ(g.compile()->invoke(Json::object()).values["items"],
            (Json::array({"from b", "from a"})));
}

TEST(PregelLoop, CustomReducerFoldsEveryWrite) {
  StateSchema schema;
  schema.reducer("total", [](const Json& current, const Json& update) {
    return Json(current.get<int>() + update.get<int>());
  }, Json(0));
  StateGraph g(schema);
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"total", 5}}; });
  g.add_node("b", [](const State&, Runtime&) -> NodeResult { return Json{{"total", 7}}; });
  g.add_edge(START, "a").add_edge("a", "b");
  EXPECT_EQ(g.compile()->invoke(Json{{"total", 1}}).values["total"], 13);
}

TEST(PregelLoop, AddMessagesReplacesByIdAcrossSteps) {
  StateSchema schema;
  schema.add_messages("messages");
  StateGraph g(schema);
  g.add_node("reply", [](const State&, Runtime&) -> NodeResult {
    return Json{{"messages", Json::array({{{"type", "ai"}, {"id", "m2"}, {"content", "draft"}}})}};
  });
  g.add_node("edit", [](const State&, Runtime&) -> NodeResult {
    return Json{{"messages", Json::array({{{"type", "ai"}, {"id", "m2"}, {"content", "final"}}})}};
  });
  g.add_edge(START, "reply").add_edge("reply", "edit");
  Json input{{"messages", Json::array({{{"type", "human"}, {"id", "m1"}, {"content", "hi"}}})}};
  const Json messages = g.compile()->invoke(input).values["messages"];
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1]["content"], "final");
}

TEST(PregelLoop, JoinWaitsForEverySource) {
  Log log;
  StateGraph g;
  g.add_node("a", logging(log, "a")).add_node("b", logging(log, "b"));
  g.add_node("b2", logging(log, "b2")).add_node("j", logging(log, "j"));
  g.add_edge(START, "a").add_edge(START, "b").add_edge("b", "b2");
  g.add_edge(std::vector<std::string>{"a", "b2"}, "j");
  g.compile()->invoke(Json::object());
  const auto lines = log.lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines.back(), "j");
  EXPECT_EQ(log.count("j"), 1u);
}

TEST(PregelLoop, SendsRunATaskPerArgument) {
  StateSchema schema;
  schema.append("results");
  StateGraph g(schema);
  g.add_node("plan", [](const State&, Runtime&) -> NodeResult { return Json::object(); });
  g.add_node("work", [](const State& input, Runtime&) -> NodeResult {
    return Json{{"results", input["item"].get<int>() * 2}};
  });
  g.add_edge(START, "plan");
  g.add_conditional_edges("plan", [](const State&) -> Route {
    return std::vector<Send>{{"work", {{"item", 1}}}, {"work", {{"item", 2}}},
                             {"work", {{"item", 3}}}};
  });
  EXPECT_EQ(g.compile()->invoke(Json::object()).values["results"], (Json::array({2, 4, 6})));
}

TEST(PregelLoop, NodeReturningSendsFansOut) {
  StateSchema schema;
  schema.append("seen");
  StateGraph g(schema);
  NodeOptions options;
  options.destinations = {"leaf"};
  g.add_node("root", [](const State&, Runtime&) -> NodeResult {
    return std::vector<Send>{{"leaf", {{"v", "x"}}}, {"leaf", {{"v", "y"}}}};
  }, options);
  g.add_node("leaf", [](const State& in, Runtime&) -> NodeResult {
    return Json{{"seen", in["v"]}};
  });
  g.add_edge(START, "root");
  EXPECT_EQ(g.compile()->invoke(Json::object()).values["seen"], (Json::array({"x", "y"})));
}

TEST(PregelLoop, CommandGotoAndUpdateReplaceStaticRouting) {
  Log log;
  StateGraph g;
  NodeOptions options;
  options.destinations = {"c"};
  g.add_node("a", [&](const State&, Runtime&) -> NodeResult {
    log.add("a");
    Command command;
    command.update = Json{{"x", 1}};
    command.goto_nodes = {"c"};
    return command;
  }, options);
  g.add_node("b", logging(log, "b"));
  g.add_node("c", logging(log, "c"));
  g.add_edge(START, "a");
  g.add_edge(START, "b");
  RunResult result = g.compile()->invoke(Json::object());
  EXPECT_EQ(result.values["x"], 1);
  EXPECT_EQ(log.count("c"), 1u);
}

TEST(PregelLoop, ConditionalEdgeSeesTheNodesOwnWrite) {
  Log log;
  StateGraph g;
  g.add_node("measure", [](const State&, Runtime&) -> NodeResult { return Json{{"size", 50}}; });
  g.add_node("big", logging(log, "big")).add_node("small", logging(log, "small"));
  g.add_edge(START, "measure");
  g.add_conditional_edges("measure", [](const State& s) -> Route {
    return s["size"].get<int>() > 10 ? "large" : "little";
  }, {{"large", "big"}, {"little", "small"}});
  g.compile()->invoke(Json::object());
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"big"}));
}

TEST(PregelLoop, ConditionalEdgeInAParallelStepSeesOnlyItsOwnWrites) {
  Log log;
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"a", 1}}; });
  g.add_node("b", [](const State&, Runtime&) -> NodeResult { return Json{{"b", 1}}; });
  g.add_node("saw_b", logging(log, "saw_b")).add_node("no_b", logging(log, "no_b"));
  g.add_edge(START, "a").add_edge(START, "b");
  g.add_conditional_edges("a", [](const State& s) -> Route {
    return s.contains("b") ? "saw_b" : "no_b";
  }, {{"saw_b", "saw_b"}, {"no_b", "no_b"}});
  g.compile()->invoke(Json::object());
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"no_b"}));
}

TEST(PregelLoop, RouterReturningUnknownNodeFails) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return {}; });
  g.add_edge(START, "a");
  g.add_conditional_edges("a", [](const State&) -> Route { return "nowhere"; });
  Error error = expect_error([&] { g.compile()->invoke(Json::object()); });
  EXPECT_NE(std::string(error.what()).find("unknown node 'nowhere'"), std::string::npos);
}

TEST(PregelLoop, RecursionLimitStopsACycleWithTheReferenceMessage) {
  StateGraph g;
  g.add_node("spin", [](const State&, Runtime&) -> NodeResult { return {}; });
  g.add_edge(START, "spin");
  g.add_conditional_edges("spin", [](const State&) -> Route { return "spin"; });
  RunConfig config;
  config.recursion_limit = 5;
  Error error = expect_error([&] { g.compile()->invoke(Json::object(), config); });
  EXPECT_EQ(error.code(), ErrorCode::kRecursionLimit);
  EXPECT_EQ(std::string(error.what()).rfind(
                "Recursion limit of 5 reached without hitting a stop condition. ", 0),
            0u) << error.what();
}

TEST(PregelLoop, DeferredNodeRunsWhenNothingElseIsLeft) {
  Log log;
  StateGraph g;
  NodeOptions deferred;
  deferred.defer = true;
  g.add_node("a", logging(log, "a")).add_node("b", logging(log, "b"));
  g.add_node("b2", logging(log, "b2")).add_node("last", logging(log, "last"), deferred);
  g.add_edge(START, "a").add_edge(START, "b").add_edge("b", "b2");
  g.add_edge("a", "last").add_edge("b2", "last");
  g.compile()->invoke(Json::object());
  const auto lines = log.lines();
  EXPECT_EQ(lines.back(), "last");
  EXPECT_EQ(log.count("last"), 1u);
}

TEST(PregelLoop, CancellationStopsBetweenSteps) {
  Log log;
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  StateGraph g;
  g.add_node("a", [&](const State&, Runtime&) -> NodeResult {
    log.add("a");
    cancel->store(true);
    return {};
  });
  g.add_node("b", logging(log, "b"));
  g.add_edge(START, "a").add_edge("a", "b");
  RunConfig config;
  config.cancel = cancel;
  Error error = expect_error([&] { g.compile()->invoke(Json::object(), config); });
  EXPECT_EQ(error.code(), ErrorCode::kCancelled);
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"a"}));
}

TEST(PregelLoop, NodeErrorsKeepTheirCode) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult {
    throw Error::Unavailable("model provider down");
  });
  g.add_edge(START, "a");
  Error error = expect_error([&] { g.compile()->invoke(Json::object()); });
  EXPECT_EQ(error.code(), ErrorCode::kUnavailable);
}

TEST(PregelLoop, NonObjectUpdateIsRejectedNamingTheNode) {
  StateGraph g;
  g.add_node("bad", [](const State&, Runtime&) -> NodeResult { return Json(42); });
  g.add_edge(START, "bad");
  Error error = expect_error([&] { g.compile()->invoke(Json::object()); });
  EXPECT_NE(std::string(error.what()).find("Expected node 'bad' to return an object"),
            std::string::npos);
}

TEST(PregelLoop, WritingAReservedKeyIsRejected) {
  StateGraph g;
  g.add_node("bad", [](const State&, Runtime&) -> NodeResult { return Json{{"__start__", 1}}; });
  g.add_edge(START, "bad");
  Error error = expect_error([&] { g.compile()->invoke(Json::object()); });
  EXPECT_NE(std::string(error.what()).find("reserved key '__start__'"), std::string::npos);
}

TEST(PregelLoop, ParentCommandAtTheRootIsRejected) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult {
    Command command;
    command.graph = std::string(Command::PARENT);
    command.update = Json{{"x", 1}};
    return command;
  });
  g.add_edge(START, "a");
  Error error = expect_error([&] { g.compile()->invoke(Json::object()); });
  EXPECT_EQ(std::string(error.what()), "There is no parent graph");
}

TEST(PregelLoop, LastValueDefaultIsVisibleOnANewThread) {
  StateSchema schema;
  schema.last_value("mode", Json("draft"));
  StateGraph g(schema);
  g.add_node("read", [](const State& s, Runtime&) -> NodeResult {
    return Json{{"seen", s["mode"]}};
  });
  g.add_edge(START, "read");
  EXPECT_EQ(g.compile()->invoke(Json::object()).values["seen"], "draft");
}

TEST(PregelLoop, InterruptOutsideANodeIsAnError) {
  EXPECT_EQ(current_runtime(), nullptr);
  Error error = expect_error([] { interrupt("x"); });
  EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
}

TEST(PregelLoop, RuntimeDescribesTheTask) {
  StateGraph g;
  g.add_node("who", [](const State&, Runtime& rt) -> NodeResult {
    EXPECT_EQ(current_runtime(), &rt);
    return Json{{"node", rt.node_name()}, {"ctx", rt.context()["user"]},
                {"ns_starts", rt.checkpoint_ns().rfind("who:", 0) == 0}};
  });
  g.add_edge(START, "who");
  RunConfig config;
  config.context = Json{{"user", "ada"}};
  RunResult result = g.compile()->invoke(Json::object(), config);
  EXPECT_EQ(result.values["node"], "who");
  EXPECT_EQ(result.values["ctx"], "ada");
  EXPECT_EQ(result.values["ns_starts"], true);
}

TEST(PregelLoop, RuntimeTellsWhoStartedTheRunAndWhoDecided) {
  StateGraph g;
  g.add_node("who", [](const State&, Runtime& rt) -> NodeResult {
    return Json{{"started_by", rt.started_by().id},
                {"starter_is_user", rt.started_by().has_role("user")},
                {"decided_by", rt.decided_by().id}};
  });
  g.add_edge(START, "who");
  RunConfig config;
  config.started_by = RunActor{"alice", "Alice", {"user"}};
  config.decided_by = RunActor{"bob", "", {"reviewer"}};
  RunResult result = g.compile()->invoke(Json::object(), config);
  EXPECT_EQ(result.values["started_by"], "alice");
  EXPECT_EQ(result.values["starter_is_user"], true);
  EXPECT_EQ(result.values["decided_by"], "bob");
}

// ------------------------------------------------------------------------------ streaming

struct Recorder {
  std::vector<StreamEvent> events;
  std::vector<Json> of(StreamMode mode) const {
    std::vector<Json> out;
    for (const auto& e : events) {
      if (e.mode == mode) out.push_back(e.data);
    }
    return out;
  }
};

TEST(PregelLoopStreaming, UpdatesAndValuesFollowEachStep) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"n", 1}}; });
  g.add_node("b", [](const State&, Runtime&) -> NodeResult { return Json{{"n", 2}}; });
  g.add_edge(START, "a").add_edge("a", "b");
  Recorder recorder;
  RunConfig config;
  config.stream_modes = {StreamMode::kUpdates, StreamMode::kValues};
  config.on_event = [&](const StreamEvent& e) { recorder.events.push_back(e); };
  g.compile()->invoke(Json::object(), config);
  const auto updates = recorder.of(StreamMode::kUpdates);
  ASSERT_EQ(updates.size(), 3u);  // __start__, a, b
  EXPECT_EQ(updates[1], (Json{{"a", {{"n", 1}}}}));
  EXPECT_EQ(updates[2], (Json{{"b", {{"n", 2}}}}));
  const auto values = recorder.of(StreamMode::kValues);
  ASSERT_FALSE(values.empty());
  EXPECT_EQ(values.back(), (Json{{"n", 2}}));
}

TEST(PregelLoopStreaming, CustomAndMessageChunksComeFromTheNode) {
  StateGraph g;
  g.add_node("talk", [](const State&, Runtime& rt) -> NodeResult {
    rt.write_custom(Json{{"progress", 50}});
    rt.emit_message(Json{{"content", "Hel"}});
    rt.emit_message(Json{{"content", "lo"}});
    return {};
  });
  g.add_edge(START, "talk");
  Recorder recorder;
  RunConfig config;
  config.stream_modes = {StreamMode::kCustom, StreamMode::kMessages};
  config.on_event = [&](const StreamEvent& e) { recorder.events.push_back(e); };
  g.compile()->invoke(Json::object(), config);
  EXPECT_EQ(recorder.of(StreamMode::kCustom), (std::vector<Json>{{{"progress", 50}}}));
  const auto messages = recorder.of(StreamMode::kMessages);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0][0]["content"], "Hel");
  EXPECT_EQ(messages[0][1]["langgraph_node"], "talk");
}

TEST(PregelLoopStreaming, MessagesByReferenceHandOverTheCallersChunkAndTheTasksMetadata) {
  StateGraph g;
  std::vector<const Json*> emitted;  // the chunks the node emitted, by address
  g.add_node("talk", [&emitted](const State&, Runtime& rt) -> NodeResult {
    const Json first{{"content", "Hel"}};
    const Json second{{"content", "lo"}};
    emitted = {&first, &second};
    rt.emit_message_ref(first);
    rt.emit_message_ref(second);
    return {};
  });
  g.add_edge(START, "talk");
  std::vector<const Json*> chunks;
  std::vector<Json> contents;
  std::vector<Json> metadata;
  std::vector<Json> datas;
  RunConfig config;
  config.stream_modes = {StreamMode::kMessages};
  config.messages_by_reference = true;
  config.on_event = [&](const StreamEvent& e) {
    chunks.push_back(e.message_chunk);
    contents.push_back(e.message_chunk != nullptr ? (*e.message_chunk)["content"] : Json());
    metadata.push_back(e.message_metadata != nullptr ? *e.message_metadata : Json());
    datas.push_back(e.data);
  };
  g.compile()->invoke(Json::object(), config);
  EXPECT_EQ(chunks, emitted);
  EXPECT_EQ(contents, (std::vector<Json>{"Hel", "lo"}));
  ASSERT_EQ(metadata.size(), 2u);
  EXPECT_EQ(metadata[0]["langgraph_node"], "talk");
  EXPECT_EQ(metadata[0]["langgraph_step"], 1);
  EXPECT_EQ(metadata[0]["langgraph_checkpoint_ns"],
            "talk:" + metadata[0]["langgraph_task_id"].get<std::string>());
  EXPECT_EQ(metadata[1], metadata[0]);
  EXPECT_EQ(datas, (std::vector<Json>{Json(), Json()}));
}

TEST(PregelLoopStreaming, MessagesByReferenceOffCopiesTheChunkIntoTheEvent) {
  StateGraph g;
  g.add_node("talk", [](const State&, Runtime& rt) -> NodeResult {
    rt.emit_message_ref(Json{{"content", "Hel"}});
    return {};
  });
  g.add_edge(START, "talk");
  Recorder recorder;
  RunConfig config;
  config.stream_modes = {StreamMode::kMessages};
  config.on_event = [&](const StreamEvent& e) {
    EXPECT_EQ(e.message_chunk, nullptr);
    EXPECT_EQ(e.message_metadata, nullptr);
    recorder.events.push_back(e);
  };
  g.compile()->invoke(Json::object(), config);
  const auto messages = recorder.of(StreamMode::kMessages);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0][0], (Json{{"content", "Hel"}}));
  EXPECT_EQ(messages[0][1]["langgraph_node"], "talk");
}

TEST(PregelLoopStreaming, TasksModeReportsStartAndResult) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"x", 1}}; });
  g.add_edge(START, "a");
  Recorder recorder;
  RunConfig config;
  config.stream_modes = {StreamMode::kTasks, StreamMode::kDebug};
  config.on_event = [&](const StreamEvent& e) { recorder.events.push_back(e); };
  g.compile()->invoke(Json::object(), config);
  const auto tasks = recorder.of(StreamMode::kTasks);
  ASSERT_EQ(tasks.size(), 4u);  // start+result for __start__ and a
  EXPECT_EQ(tasks[2]["name"], "a");
  EXPECT_TRUE(tasks[2].contains("input"));
  EXPECT_EQ(tasks[3]["result"], (Json::array({Json::array({"x", 1})})));
  EXPECT_EQ(recorder.of(StreamMode::kDebug).size(), 4u);
}

TEST(PregelLoopStreaming, StateByReferenceHandsTheStateOverInsteadOfACopy) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"x", 1}}; });
  g.add_edge(START, "a");
  std::vector<Json> values;       // each values event's state, as to_json() reads it
  std::vector<Json> task_inputs;  // each task start's input
  std::vector<Json> datas;
  RunConfig config;
  config.stream_modes = {StreamMode::kValues, StreamMode::kTasks};
  config.state_by_reference = true;
  config.on_event = [&](const StreamEvent& e) {
    if (e.mode == StreamMode::kValues) {
      ASSERT_NE(e.state, nullptr);
      values.push_back(e.state->to_json());
      datas.push_back(e.data);
    } else if (e.data.contains("triggers")) {  // a task's start
      ASSERT_NE(e.state, nullptr);
      task_inputs.push_back(e.state->to_json());
      EXPECT_FALSE(e.data.contains("input"));
    } else {
      EXPECT_EQ(e.state, nullptr);  // a task's result carries no state
    }
  };
  g.compile()->invoke(Json{{"x", 0}}, config);
  ASSERT_EQ(values.size(), 2u);  // after __start__ and after a
  EXPECT_EQ(values[1], (Json{{"x", 1}}));
  EXPECT_TRUE(datas[1].is_null());
  ASSERT_EQ(task_inputs.size(), 2u);
  EXPECT_EQ(task_inputs[1], (Json{{"x", 0}}));  // what a read
}

TEST(PregelLoopStreaming, ValuesEventsTellHowManyListItemsAreUnchangedSinceTheLastOne) {
  StateSchema schema;
  schema.add_messages("messages");
  schema.append("log");
  schema.last_value("x");
  StateGraph g(schema);
  auto message = [](const char* id, const char* content) {
    return Json{{"type", "ai"}, {"id", id}, {"content", content}};
  };
  g.add_node("reply", [&](const State&, Runtime&) -> NodeResult {
    return Json{{"messages", Json::array({message("m2", "draft")})}, {"log", Json::array({1})}};
  });
  g.add_node("x", [](const State&, Runtime&) -> NodeResult { return Json{{"x", 1}}; });
  g.add_node("edit", [&](const State&, Runtime&) -> NodeResult {  // the first message again
    return Json{{"messages", Json::array({message("m1", "edited")})}, {"log", Json::array({2})}};
  });
  g.add_edge(START, "reply").add_edge("reply", "x").add_edge("x", "edit");
  struct Shown {
    std::uint64_t loop;
    std::uint64_t index;
    std::map<std::string, std::size_t> unchanged;
  };
  std::vector<Shown> shown;
  RunConfig config;
  config.stream_modes = {StreamMode::kValues};
  config.state_by_reference = true;
  config.on_event = [&](const StreamEvent& e) {
    shown.push_back({e.loop, e.values_index, {e.unchanged_items.begin(), e.unchanged_items.end()}});
  };
  const auto graph = g.compile();
  const Json input{{"messages", Json::array({message("m1", "hi")})}};
  graph->invoke(input, config);
  ASSERT_EQ(shown.size(), 4u);  // after __start__, reply, x and edit
  using Counts = std::map<std::string, std::size_t>;
  EXPECT_EQ(shown[0].unchanged, (Counts{{"log", 0}, {"messages", 0}}));  // nothing shown before
  EXPECT_EQ(shown[1].unchanged, (Counts{{"log", 0}, {"messages", 1}}));  // m2 appended
  EXPECT_EQ(shown[2].unchanged, (Counts{{"log", 1}, {"messages", 2}}));  // neither list written
  EXPECT_EQ(shown[3].unchanged, (Counts{{"log", 1}, {"messages", 0}}));  // m1 replaced in place
  for (std::size_t i = 0; i < shown.size(); ++i) {
    EXPECT_EQ(shown[i].loop, shown[0].loop);
    EXPECT_EQ(shown[i].index, i + 1);
  }
  EXPECT_NE(shown[0].loop, 0u);
  // Another run is another loop, counted from 1 again.
  shown.clear();
  graph->invoke(input, config);
  ASSERT_FALSE(shown.empty());
  EXPECT_EQ(shown[0].index, 1u);
  EXPECT_NE(shown[0].loop, 0u);
}

TEST(PregelLoopStreaming, ASendsTaskKeepsItsInputWhenTheStateGoesByReference) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"x", 1}}; });
  g.add_node("each", [](const State&, Runtime&) -> NodeResult { return {}; });
  g.add_edge(START, "a");
  g.add_conditional_edges("a", [](const State&) -> Route {
    return std::vector<Send>{Send{"each", Json{{"item", 7}}}};
  });
  Json sent_start;
  const State* sent_state = nullptr;
  RunConfig config;
  config.stream_modes = {StreamMode::kTasks};
  config.state_by_reference = true;
  config.on_event = [&](const StreamEvent& e) {
    if (e.data.value("name", "") == "each" && e.data.contains("triggers")) {
      sent_start = e.data;
      sent_state = e.state;
    }
  };
  g.compile()->invoke(Json{{"x", 0}}, config);
  EXPECT_EQ(sent_start["input"], (Json{{"item", 7}}));  // its own argument, not the step's state
  EXPECT_EQ(sent_state, nullptr);
}

TEST(PregelLoopStreaming, DebugTaskEventsKeepTheirInputWhenTheStateGoesByReference) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"x", 1}}; });
  g.add_edge(START, "a");
  std::vector<Json> debug_inputs;
  RunConfig config;
  config.stream_modes = {StreamMode::kTasks, StreamMode::kDebug};
  config.state_by_reference = true;
  config.on_event = [&](const StreamEvent& e) {
    if (e.mode == StreamMode::kDebug && e.data["type"] == "task") {
      debug_inputs.push_back(e.data["payload"]["input"]);
    }
  };
  g.compile()->invoke(Json{{"x", 0}}, config);
  ASSERT_EQ(debug_inputs.size(), 2u);
  EXPECT_EQ(debug_inputs[1], (Json{{"x", 0}}));
}

TEST(PregelLoopStreaming, NoModesMeansNoEvents) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime& rt) -> NodeResult {
    rt.write_custom(1);
    return {};
  });
  g.add_edge(START, "a");
  int events = 0;
  RunConfig config;
  config.on_event = [&](const StreamEvent&) { ++events; };
  g.compile()->invoke(Json::object(), config);
  EXPECT_EQ(events, 0);
}

// ----------------------------------------------------------------------------- durability

class DurabilityTest : public testing::SaverTest {};

std::shared_ptr<CompiledGraph> two_steps(std::shared_ptr<Saver> saver) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"n", 1}}; });
  g.add_node("b", [](const State&, Runtime&) -> NodeResult { return Json{{"n", 2}}; });
  g.add_edge(START, "a").add_edge("a", "b");
  return g.compile(testing::options(std::move(saver)));
}

std::size_t checkpoint_count(Saver& saver, const std::string& thread) {
  ListQuery query;
  query.thread_id = thread;
  return saver.list(query).size();
}

TEST_P(DurabilityTest, SyncStoresACheckpointPerStep) {
  auto graph = two_steps(saver_);
  graph->invoke(Json::object(), on_thread("t"));
  EXPECT_EQ(checkpoint_count(*saver_, "t"), 4u);  // input, __start__, a, b
}

TEST_P(DurabilityTest, SyncStoresEachStepsTaskWritesAgainstTheCheckpointItStartedFrom) {
  auto graph = two_steps(saver_);
  graph->invoke(Json::object(), on_thread("t"));
  ListQuery query;
  query.thread_id = "t";
  std::vector<std::string> written_by;  // oldest first: the task whose writes each one holds
  auto tuples = saver_->list(query);
  for (auto it = tuples.rbegin(); it != tuples.rend(); ++it) {
    for (const PendingWrite& write : it->pending_writes) {
      if (write.channel == "n") written_by.push_back(write.value.dump());
    }
  }
  EXPECT_EQ(written_by, (std::vector<std::string>{"1", "2"}));
}

TEST_P(DurabilityTest, ATaskWhoseWritesFailToApplyKeepsThemSaved) {
  StateSchema schema;
  schema.reducer("n", [](const Json&, const Json& update) -> Json {
    if (update == "bad") throw Error::InvalidArgument("no bad values");
    return update;
  }, Json(0));
  StateGraph g(schema);
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"n", "bad"}}; });
  g.add_edge(START, "a");
  auto graph = g.compile(testing::options(saver_));
  EXPECT_THROW(graph->invoke(Json::object(), on_thread("t")), Error);
  auto latest = saver_->get_tuple(CheckpointConfig{"t", "", ""});
  ASSERT_TRUE(latest);
  ASSERT_EQ(latest->pending_writes.size(), 1U);
  EXPECT_EQ(latest->pending_writes[0].channel, "n");
  EXPECT_EQ(latest->pending_writes[0].value, "bad");
}

TEST_P(DurabilityTest, ATaskStartNamesTheCheckpointWhoseStateItStartsOn) {
  StateGraph g(StateSchema().last_value("x"));
  g.add_node("ask", [](const State&, Runtime& rt) -> NodeResult {
    return Json{{"x", rt.interrupt("ok?")}};
  });
  g.add_edge(START, "ask");
  auto graph = g.compile(testing::options(saver_));
  std::map<std::string, std::string> started_on;  // task name -> checkpoint id
  auto config = [&](const std::string& thread) {
    RunConfig c = on_thread(thread);
    c.stream_modes = {StreamMode::kTasks};
    c.state_by_reference = true;
    c.on_event = [&](const StreamEvent& e) {
      if (e.state != nullptr) started_on[e.data.value("name", "")] = e.checkpoint_id;
    };
    return c;
  };
  auto latest = [&](const std::string& thread) {
    return saver_->get_tuple(CheckpointConfig{thread, "", ""})->config.checkpoint_id;
  };
  graph->invoke(Json{{"x", 0}}, config("t"));
  const std::string paused_on = latest("t");
  EXPECT_EQ(started_on["ask"], paused_on);  // the step's checkpoint, saved before it started
  EXPECT_FALSE(started_on["__start__"].empty());
  EXPECT_NE(started_on["__start__"], paused_on);
  started_on.clear();
  Command resume;
  resume.resume = Json("yes");
  graph->invoke(resume, config("t"));
  EXPECT_EQ(started_on["ask"], paused_on);  // resumed on the checkpoint it paused on
  // A resume that updates the state first starts the step on state no checkpoint holds.
  graph->invoke(Json{{"x", 0}}, config("u"));
  started_on.clear();
  Command update = resume;
  update.update = Json{{"x", 5}};
  graph->invoke(update, config("u"));
  ASSERT_TRUE(started_on.count("ask"));
  EXPECT_EQ(started_on["ask"], "");
}

TEST_P(DurabilityTest, ARunsFirstValuesEventCountsItsListsAgainstTheCheckpointItLoaded) {
  StateSchema schema;
  schema.add_messages("messages");
  schema.append("log");
  StateGraph g(schema);
  int replies = 0;
  g.add_node("reply", [&](const State&, Runtime&) -> NodeResult {
    const std::string id = "r" + std::to_string(++replies);
    return Json{{"messages", Json::array({Json{{"type", "ai"}, {"id", id}, {"content", id}}})},
                {"log", Json::array({replies})}};
  });
  g.add_edge(START, "reply");
  auto graph = g.compile(testing::options(saver_));
  struct Shown {
    std::string base;
    std::uint64_t index;
    std::map<std::string, std::size_t> unchanged;
  };
  std::vector<Shown> shown;
  std::map<std::string, Shown> started;  // task name -> its start
  RunConfig config = on_thread("t");
  config.stream_modes = {StreamMode::kValues, StreamMode::kTasks};
  config.state_by_reference = true;
  config.on_event = [&](const StreamEvent& e) {
    Shown s{e.values_base, e.values_index, {e.unchanged_items.begin(), e.unchanged_items.end()}};
    if (e.mode == StreamMode::kValues) shown.push_back(std::move(s));
    if (e.mode == StreamMode::kTasks && e.state != nullptr) started[e.data.value("name", "")] = s;
  };
  auto human = [](const char* id) { return Json{{"type", "human"}, {"id", id}, {"content", id}}; };
  using Counts = std::map<std::string, std::size_t>;
  graph->invoke(Json{{"messages", Json::array({human("h1")})}}, config);
  ASSERT_EQ(shown.size(), 2u);
  EXPECT_EQ(shown[0].base, "");  // a new thread: nothing loaded
  EXPECT_EQ(shown[0].unchanged, (Counts{{"log", 0}, {"messages", 0}}));
  EXPECT_EQ(shown[1].base, "");  // only the first event has a base
  const std::string loaded = saver_->get_tuple(CheckpointConfig{"t", "", ""})->config.checkpoint_id;
  shown.clear();
  // The next run's input appends to the loaded lists: all their items are the checkpoint's.
  graph->invoke(Json{{"messages", Json::array({human("h2")})}}, config);
  ASSERT_EQ(shown.size(), 2u);
  EXPECT_EQ(shown[0].base, loaded);
  EXPECT_EQ(shown[0].index, 1u);
  EXPECT_EQ(shown[0].unchanged, (Counts{{"log", 1}, {"messages", 2}}));
  EXPECT_EQ(shown[1].unchanged, (Counts{{"log", 1}, {"messages", 3}}));  // against the first
  // A task starting before the first values event tells the same against the checkpoint.
  EXPECT_EQ(started["__start__"].base, loaded);
  EXPECT_EQ(started["__start__"].unchanged, (Counts{{"log", 1}, {"messages", 2}}));
  EXPECT_EQ(started["reply"].base, "");  // after it: the values event is the reference
  EXPECT_TRUE(started["reply"].unchanged.empty());
  // An input that replaces a list leaves none of its items as the checkpoint had them.
  shown.clear();
  graph->invoke(Json{{"messages", overwrite(Json::array({human("h3")}))}}, config);
  ASSERT_FALSE(shown.empty());
  EXPECT_EQ(shown[0].unchanged, (Counts{{"log", 2}, {"messages", 0}}));
}

TEST_P(DurabilityTest, AsyncStoresEveryCheckpointByTheEndOfTheRun) {
  auto graph = two_steps(saver_);
  RunConfig config = on_thread("t");
  config.durability = tollgate::Durability::kAsync;
  graph->invoke(Json::object(), config);
  EXPECT_EQ(checkpoint_count(*saver_, "t"), 4u);
  EXPECT_EQ(graph->get_state(on_thread("t")).values["n"], 2);
}

TEST_P(DurabilityTest, ExitStoresOnlyTheFinalCheckpoint) {
  auto graph = two_steps(saver_);
  RunConfig config = on_thread("t");
  config.durability = tollgate::Durability::kExit;
  graph->invoke(Json::object(), config);
  EXPECT_EQ(checkpoint_count(*saver_, "t"), 1u);
  EXPECT_EQ(graph->get_state(on_thread("t")).values["n"], 2);
}

TEST_P(DurabilityTest, ExitStillResumesAnInterruptedRun) {
  StateGraph g;
  g.add_node("ask", [](const State&, Runtime& rt) -> NodeResult {
    return Json{{"answer", rt.interrupt("q")}};
  });
  g.add_edge(START, "ask");
  auto graph = g.compile(testing::options(saver_));
  RunConfig config = on_thread("t");
  config.durability = tollgate::Durability::kExit;
  EXPECT_TRUE(graph->invoke(Json::object(), config).paused);
  EXPECT_EQ(graph->invoke(testing::resume("yes"), config).values["answer"], "yes");
}

// The time a version 6 checkpoint id carries, in 100 ns intervals since the Unix epoch.
std::int64_t id_time(const std::string& id) {
  constexpr std::int64_t kGregorianToUnix = 122192928000000000;  // 1582-10-15 to 1970-01-01
  const std::string hex = id.substr(0, 8) + id.substr(9, 4) + id.substr(15, 3);
  return static_cast<std::int64_t>(std::stoull(hex, nullptr, 16)) - kGregorianToUnix;
}

TEST_P(DurabilityTest, CheckpointsTakeTheirIdAndTimestampFromTheGraphsClock) {
  using std::chrono::hours;
  // Far ahead of the system clock, so the ids cannot be the system clock's nor an earlier id's.
  const std::chrono::system_clock::time_point start{std::chrono::seconds(4102444800)};  // 2100
  ManualClock clock(start);
  CompileOptions options = testing::options(saver_);
  options.clock = &clock;
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"n", 1}}; });
  g.add_edge(START, "a");
  auto graph = g.compile(std::move(options));
  graph->invoke(Json::object(), on_thread("t"));
  EXPECT_EQ(graph->get_state(on_thread("t")).created_at, "2100-01-01T00:00:00.000000+00:00");

  clock.advance(hours(1));
  graph->invoke(Json::object(), on_thread("t"));
  const StateSnapshot latest = graph->get_state(on_thread("t"));
  EXPECT_EQ(latest.created_at, "2100-01-01T01:00:00.000000+00:00");
  const std::int64_t later = (start + hours(1)).time_since_epoch() / std::chrono::nanoseconds(100);
  // Ids only ever increase in a process: at the clock's time, or just after an earlier id.
  EXPECT_GE(id_time(latest.config.checkpoint_id), later);
  EXPECT_LT(id_time(latest.config.checkpoint_id), later + 10'000'000);  // within a second
}

TEST_P(DurabilityTest, CheckpointMetadataCarriesSourceStepParentsAndRunMetadata) {
  auto graph = two_steps(saver_);
  RunConfig config = on_thread("t");
  config.metadata = Json{{"user", "ada"}};
  config.run_id = "run-1";
  graph->invoke(Json::object(), config);
  const Json metadata = graph->get_state(on_thread("t")).metadata;
  EXPECT_EQ(metadata["source"], "loop");
  EXPECT_EQ(metadata["step"], 2);
  EXPECT_EQ(metadata["parents"], Json::object());
  EXPECT_EQ(metadata["user"], "ada");
  EXPECT_EQ(metadata["run_id"], "run-1");
}

TEST_P(DurabilityTest, SecondTurnContinuesTheMessageList) {
  StateSchema schema;
  schema.add_messages("messages");
  StateGraph g(schema);
  g.add_node("bot", [](const State& s, Runtime&) -> NodeResult {
    const auto n = s["messages"].size();
    return Json{{"messages", Json::array({{{"type", "ai"}, {"id", "ai-" + std::to_string(n)},
                                           {"content", "ok"}}})}};
  });
  g.add_edge(START, "bot");
  auto graph = g.compile(testing::options(saver_));
  for (int turn = 0; turn < 3; ++turn) {
    graph->invoke(Json{{"messages", Json::array({{{"type", "human"},
                                                   {"id", "h-" + std::to_string(turn)},
                                                   {"content", "hi"}}})}},
                  on_thread("t"));
  }
  // Also read through a fresh graph object, which has no cached values.
  auto fresh = g.compile(testing::options(saver_));
  EXPECT_EQ(fresh->get_state(on_thread("t")).values["messages"].size(), 6u);
  EXPECT_EQ(graph->invoke(Json{{"messages", Json::array({{{"type", "human"}, {"id", "h-9"},
                                                          {"content", "x"}}})}},
                          on_thread("t"))
                .values["messages"]
                .size(),
            8u);
}

TOLLGATE_INSTANTIATE_SAVERS(DurabilityTest);

}  // namespace
}  // namespace tollgate

// get_state, history, update_state, replay and fork.
#include <gtest/gtest.h>

#include "graph_test_util.h"
#include "support/forwarding_saver.h"

namespace tollgate {
namespace {

using testing::expect_error;
using testing::Log;
using testing::on_thread;
using testing::resume;

// Remembers whether the saver's last get_tuple left out values the caller held.
class ReuseRecordingSaver final : public testing::ForwardingSaver {
 public:
  using ForwardingSaver::ForwardingSaver;

  std::optional<CheckpointTuple> get_tuple(const CheckpointConfig& config,
                                           const GetOptions& options = {}) override {
    auto tuple = inner().get_tuple(config, options);
    last_reused = tuple && tuple->values_reused;
    return tuple;
  }

  bool last_reused = false;
};

class TimeTravelTest : public testing::SaverTest {
 protected:
  std::shared_ptr<CompiledGraph> one_two(Log& log) {
    StateGraph g;
    g.add_node("one", [&log](const State& s, Runtime&) -> NodeResult {
      log.add("one(n=" + s["n"].dump() + ")");
      return Json{{"n", s["n"].get<int>() + 1}};
    });
    g.add_node("two", [&log](const State& s, Runtime&) -> NodeResult {
      log.add("two(n=" + s["n"].dump() + ")");
      return Json{{"n", s["n"].get<int>() * 10}};
    });
    g.add_edge(START, "one").add_edge("one", "two");
    return g.compile(testing::options(saver_));
  }

  static RunConfig at(const std::string& thread, const std::string& checkpoint_id) {
    RunConfig config = on_thread(thread);
    config.checkpoint_id = checkpoint_id;
    return config;
  }
};

TEST_P(TimeTravelTest, TheStateBetweenRunsTakesTheValuesTheLastRunLeftInMemory) {
  Log log;
  saver_ = std::make_shared<ReuseRecordingSaver>(saver_);
  auto graph = one_two(log);
  graph->invoke(Json{{"n", 1}}, on_thread("t"));
  StateSnapshot state = graph->get_state(on_thread("t"));
  EXPECT_TRUE(static_cast<ReuseRecordingSaver&>(*saver_).last_reused);
  EXPECT_EQ(state.values.to_json(), (Json{{"n", 20}}));
  EXPECT_EQ(graph->get_state(on_thread("t")).values.to_json(), (Json{{"n", 20}}));
}

TEST_P(TimeTravelTest, TheStateIsReadFromTheSaverOnceAnotherWriterMovedTheThreadOn) {
  Log log;
  auto graph = one_two(log);
  auto other = one_two(log);  // e.g. another process: its own memory, the same saver
  graph->invoke(Json{{"n", 1}}, on_thread("t"));
  other->invoke(Json{{"n", 2}}, on_thread("t"));
  EXPECT_EQ(graph->get_state(on_thread("t")).values.to_json(), (Json{{"n", 30}}));
}

TEST_P(TimeTravelTest, HistoryListsEveryCheckpointNewestFirst) {
  Log log;
  auto graph = one_two(log);
  graph->invoke(Json{{"n", 1}}, on_thread("tt"));
  auto history = graph->get_state_history(on_thread("tt"));
  ASSERT_EQ(history.size(), 4u);
  EXPECT_EQ(history[0].values.to_json(), (Json{{"n", 20}}));
  EXPECT_TRUE(history[0].next.empty());
  EXPECT_EQ(history[1].next, (std::vector<std::string>{"two"}));
  EXPECT_EQ(history[2].next, (std::vector<std::string>{"one"}));
  EXPECT_EQ(history[3].next, (std::vector<std::string>{"__start__"}));
  EXPECT_EQ(history[3].values.to_json(), Json::object());
  EXPECT_EQ(history[3].metadata["source"], "input");
  EXPECT_EQ(history[3].metadata["step"], -1);
  EXPECT_FALSE(history[3].parent_config.has_value());
  for (std::size_t i = 0; i + 1 < history.size(); ++i) {
    ASSERT_TRUE(history[i].parent_config.has_value());
    EXPECT_EQ(history[i].parent_config->checkpoint_id, history[i + 1].config.checkpoint_id);
  }
}

TEST_P(TimeTravelTest, EachCheckpointOfARunRecordsItsOwnSourceStepAndRunMetadata) {
  Log log;
  auto graph = one_two(log);
  RunConfig config = on_thread("tt");
  config.metadata = Json{{"user", "ada"}};
  graph->invoke(Json{{"n", 1}}, config);
  auto history = graph->get_state_history(on_thread("tt"));
  ASSERT_EQ(history.size(), 4u);
  for (std::size_t i = 0; i < history.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(history[i].metadata["source"], i == 3 ? "input" : "loop");
    EXPECT_EQ(history[i].metadata["step"], 2 - static_cast<int>(i));
    EXPECT_EQ(history[i].metadata["user"], "ada");
  }
}

TEST_P(TimeTravelTest, HistoryHonoursFilterAndLimit) {
  Log log;
  auto graph = one_two(log);
  graph->invoke(Json{{"n", 1}}, on_thread("tt"));
  ListQuery query;
  query.filter = Json{{"source", "loop"}};
  EXPECT_EQ(graph->get_state_history(on_thread("tt"), query).size(), 3u);
  ListQuery limited;
  limited.limit = 2;
  EXPECT_EQ(graph->get_state_history(on_thread("tt"), limited).size(), 2u);
}

TEST_P(TimeTravelTest, UpdateStateOnAnOldCheckpointForksTheThread) {
  Log log;
  auto graph = one_two(log);
  graph->invoke(Json{{"n", 1}}, on_thread("tt"));
  const std::string before_two = graph->get_state_history(on_thread("tt"))[1].config.checkpoint_id;
  CheckpointConfig fork = graph->update_state(at("tt", before_two), Json{{"n", 100}}, "one");
  StateSnapshot at_fork = graph->get_state(at("tt", fork.checkpoint_id));
  EXPECT_EQ(at_fork.next, (std::vector<std::string>{"two"}));
  EXPECT_EQ(at_fork.metadata["source"], "update");
  EXPECT_EQ(at_fork.metadata["step"], 2);
  ASSERT_TRUE(at_fork.parent_config.has_value());
  EXPECT_EQ(at_fork.parent_config->checkpoint_id, before_two);
  EXPECT_EQ(graph->invoke(Json(nullptr), at("tt", fork.checkpoint_id)).values["n"], 1000);
}

TEST_P(TimeTravelTest, ReplayFromAnOldCheckpointWritesAForkAndReruns) {
  Log log;
  auto graph = one_two(log);
  graph->invoke(Json{{"n", 1}}, on_thread("tt"));
  const std::string before_two = graph->get_state_history(on_thread("tt"))[1].config.checkpoint_id;
  RunResult replay = graph->invoke(Json(nullptr), at("tt", before_two));
  EXPECT_EQ(replay.values["n"], 20);
  auto history = graph->get_state_history(on_thread("tt"));
  ASSERT_EQ(history.size(), 6u);
  EXPECT_EQ(history[0].metadata["source"], "loop");
  EXPECT_EQ(history[0].metadata["step"], 3);
  EXPECT_EQ(history[1].metadata["source"], "fork");
  EXPECT_EQ(history[1].metadata["step"], 2);
  EXPECT_EQ(history[1].parent_config->checkpoint_id, before_two);
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"one(n=1)", "two(n=2)", "two(n=2)"}));
}

TEST_P(TimeTravelTest, ReplayBeforeAnInterruptFiresItAgain) {
  StateGraph g;
  g.add_node("ask", [](const State&, Runtime& rt) -> NodeResult {
    return Json{{"answer", rt.interrupt("q")}};
  });
  g.add_edge(START, "ask");
  auto graph = g.compile(testing::options(saver_));
  graph->invoke(Json::object(), on_thread("t"));
  const std::string paused_at = graph->get_state(on_thread("t")).config.checkpoint_id;
  graph->invoke(resume("first"), on_thread("t"));
  RunResult replay = graph->invoke(Json(nullptr), at("t", paused_at));
  EXPECT_TRUE(replay.paused);
  ASSERT_EQ(replay.interrupts.size(), 1u);
  EXPECT_EQ(graph->invoke(resume("second"), on_thread("t")).values["answer"], "second");
}

TEST_P(TimeTravelTest, UpdateStateInfersTheLastNode) {
  Log log;
  auto graph = one_two(log);
  graph->invoke(Json{{"n", 1}}, on_thread("tt"));
  graph->update_state(on_thread("tt"), Json{{"n", 7}});
  StateSnapshot state = graph->get_state(on_thread("tt"));
  EXPECT_EQ(state.values["n"], 7);
  EXPECT_TRUE(state.next.empty());  // as "two", whose only edge is to END
  EXPECT_EQ(state.metadata["source"], "update");
}

TEST_P(TimeTravelTest, UpdateStateNeedsAsNodeWhenParallelNodesRanLast) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"a", 1}}; });
  g.add_node("b", [](const State&, Runtime&) -> NodeResult { return Json{{"b", 1}}; });
  g.add_edge(START, "a").add_edge(START, "b");
  auto graph = g.compile(testing::options(saver_));
  graph->invoke(Json::object(), on_thread("t"));
  Error error = expect_error([&] { graph->update_state(on_thread("t"), Json{{"a", 2}}); });
  EXPECT_EQ(std::string(error.what()), "Ambiguous update, specify as_node");
}

TEST_P(TimeTravelTest, UpdateStateAsAnUnknownNodeIsRejected) {
  Log log;
  auto graph = one_two(log);
  graph->invoke(Json{{"n", 1}}, on_thread("tt"));
  Error error = expect_error([&] { graph->update_state(on_thread("tt"), Json{{"n", 2}}, "ghost"); });
  EXPECT_EQ(std::string(error.what()), "Node ghost does not exist");
}

TEST_P(TimeTravelTest, UpdateStateAtABreakpointChangesWhatTheNextNodeSees) {
  Log log;
  StateGraph g;
  g.add_node("one", [&log](const State& s, Runtime&) -> NodeResult {
    return Json{{"n", s["n"].get<int>() + 1}};
  });
  g.add_node("two", [&log](const State& s, Runtime&) -> NodeResult {
    log.add("two(n=" + s["n"].dump() + ")");
    return {};
  });
  g.add_edge(START, "one").add_edge("one", "two");
  auto graph = g.compile(testing::options(saver_, {"two"}));
  graph->invoke(Json{{"n", 1}}, on_thread("t"));
  graph->update_state(on_thread("t"), Json{{"n", 50}}, "one");
  graph->invoke(Json(nullptr), on_thread("t"));
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"two(n=50)"}));
}

TEST_P(TimeTravelTest, UpdateStateAsInputCopyAndEnd) {
  Log log;
  auto graph = one_two(log);
  graph->update_state(on_thread("fresh"), Json{{"n", 3}}, "__input__");
  EXPECT_EQ(graph->get_state(on_thread("fresh")).next, (std::vector<std::string>{"__start__"}));
  EXPECT_EQ(graph->invoke(Json(nullptr), on_thread("fresh")).values["n"], 40);

  CheckpointConfig copy = graph->update_state(on_thread("fresh"), Json(nullptr), "__copy__");
  EXPECT_EQ(graph->get_state(on_thread("fresh")).metadata["source"], "fork");
  EXPECT_EQ(graph->get_state(on_thread("fresh")).config.checkpoint_id, copy.checkpoint_id);

  auto stopped = one_two(log);
  RunConfig paused = on_thread("end");
  paused.interrupt_before = {"two"};
  stopped->invoke(Json{{"n", 1}}, paused);
  stopped->update_state(on_thread("end"), Json(nullptr), std::string(END));
  EXPECT_TRUE(stopped->get_state(on_thread("end")).next.empty());
}

TEST_P(TimeTravelTest, GetStateOfAnUnknownThreadIsEmpty) {
  Log log;
  auto graph = one_two(log);
  StateSnapshot state = graph->get_state(on_thread("nobody"));
  EXPECT_TRUE(state.values.empty());
  EXPECT_TRUE(state.next.empty());
  EXPECT_TRUE(state.config.checkpoint_id.empty());
}

TEST_P(TimeTravelTest, SnapshotSerialisesToTheReferenceShape) {
  Log log;
  auto graph = one_two(log);
  RunConfig config = on_thread("tt");
  config.interrupt_before = {"two"};
  graph->invoke(Json{{"n", 1}}, config);
  Json json = graph->get_state(on_thread("tt")).to_json();
  EXPECT_EQ(json["next"], Json::array({"two"}));
  EXPECT_EQ(json["tasks"][0]["path"], (Json::array({"__pregel_pull", "two"})));
  EXPECT_EQ(json["tasks"][0]["state"], nullptr);
  EXPECT_EQ(json["config"]["thread_id"], "tt");
  EXPECT_TRUE(json["parent_config"].is_object());
}

TOLLGATE_INSTANTIATE_SAVERS(TimeTravelTest);

}  // namespace
}  // namespace tollgate

namespace tollgate {
namespace {

class PausedUpdateTest : public testing::SaverTest {};

TEST_P(PausedUpdateTest, UpdateStateOnAPausedParallelStepKeepsFinishedSiblingWrites) {
  StateSchema schema;
  schema.append("answers");
  StateGraph g(schema);
  g.add_node("a", [](const State&, Runtime& rt) -> NodeResult {
    return Json{{"answers", rt.interrupt("q")}};
  });
  g.add_node("c", [](const State&, Runtime&) -> NodeResult { return Json{{"answers", "c:done"}}; });
  g.add_edge(START, "a").add_edge(START, "c");
  auto graph = g.compile(testing::options(saver_));
  graph->invoke(Json::object(), testing::on_thread("t"));
  graph->update_state(testing::on_thread("t"), Json{{"answers", "extra"}}, "c");
  EXPECT_EQ(graph->get_state(testing::on_thread("t")).values["answers"],
            (Json::array({"c:done", "extra"})));
}

TEST_P(PausedUpdateTest, AFailedParallelTaskKeepsItsFinishedSiblingsWrites) {
  std::atomic<int> b_runs{0};
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult {
    throw Error::Unavailable("flaky");
  });
  g.add_node("b", [&b_runs](const State&, Runtime&) -> NodeResult {
    ++b_runs;
    return Json{{"b", "done"}};
  });
  g.add_edge(START, "a").add_edge(START, "b");
  auto graph = g.compile(testing::options(saver_));
  Error error = testing::expect_error([&] { graph->invoke(Json::object(), testing::on_thread("t")); });
  EXPECT_EQ(error.code(), ErrorCode::kUnavailable);
  StateSnapshot state = graph->get_state(testing::on_thread("t"));
  EXPECT_EQ(state.values["b"], "done");
  EXPECT_EQ(state.next, (std::vector<std::string>{"a"}));
  testing::expect_error([&] { graph->invoke(Json(nullptr), testing::on_thread("t")); });
  EXPECT_EQ(b_runs.load(), 1);  // the retry re-ran only the failed task
}

TEST_P(PausedUpdateTest, CommandUpdateTravelsWithTheResume) {
  StateGraph g;
  g.add_node("ask", [](const State& s, Runtime& rt) -> NodeResult {
    Json answer = rt.interrupt("q");
    return Json{{"answer", answer}, {"saw_note", s["note"]}};
  });
  g.add_edge(START, "ask");
  auto graph = g.compile(testing::options(saver_));
  graph->invoke(Json::object(), testing::on_thread("t"));
  Command command = testing::resume("yes");
  command.update = Json{{"note", "from the reviewer"}};
  RunResult result = graph->invoke(command, testing::on_thread("t"));
  EXPECT_EQ(result.values["answer"], "yes");
  EXPECT_EQ(result.values["note"], "from the reviewer");
  EXPECT_EQ(result.values["saw_note"], "from the reviewer");
}

TEST_P(PausedUpdateTest, CheckpointsStreamModeReportsEverySavedCheckpoint) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"x", 1}}; });
  g.add_edge(START, "a");
  auto graph = g.compile(testing::options(saver_));
  std::vector<Json> events;
  RunConfig config = testing::on_thread("t");
  config.stream_modes = {StreamMode::kCheckpoints};
  config.on_event = [&](const StreamEvent& e) { events.push_back(e.data); };
  graph->invoke(Json::object(), config);
  ASSERT_EQ(events.size(), 3u);  // input, after __start__, after a
  EXPECT_EQ(events[0]["metadata"]["source"], "input");
  EXPECT_EQ(events[2]["values"], (Json{{"x", 1}}));
  EXPECT_EQ(events[2]["config"]["checkpoint_id"],
            graph->get_state(testing::on_thread("t")).config.checkpoint_id);
}

TEST_P(PausedUpdateTest, CheckpointsEventsWithoutValuesStillNameEachCheckpoint) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"x", 1}}; });
  g.add_edge(START, "a");
  auto graph = g.compile(testing::options(saver_));
  std::vector<StreamEvent> events;
  RunConfig config = testing::on_thread("t");
  config.stream_modes = {StreamMode::kCheckpoints, StreamMode::kDebug};
  config.checkpoint_values = false;
  config.on_event = [&](const StreamEvent& e) { events.push_back(e); };
  graph->invoke(Json::object(), config);
  std::vector<Json> checkpoints;
  for (const StreamEvent& e : events) {
    if (e.mode == StreamMode::kCheckpoints) checkpoints.push_back(e.data);
    // A debug stream still shows the state of each checkpoint.
    if (e.mode == StreamMode::kDebug && e.data["type"] == "checkpoint") {
      EXPECT_TRUE(e.data["payload"].contains("values"));
    }
  }
  ASSERT_EQ(checkpoints.size(), 3u);
  for (const Json& c : checkpoints) EXPECT_FALSE(c.contains("values")) << c.dump();
  EXPECT_EQ(checkpoints[2]["metadata"]["step"], 1);
  EXPECT_EQ(checkpoints[2]["config"]["checkpoint_id"],
            graph->get_state(testing::on_thread("t")).config.checkpoint_id);
  EXPECT_EQ(checkpoints[2]["parent_config"]["checkpoint_id"],
            checkpoints[1]["config"]["checkpoint_id"]);
}

TOLLGATE_INSTANTIATE_SAVERS(PausedUpdateTest);

}  // namespace
}  // namespace tollgate

// Subgraphs: as nodes and through Runtime::invoke_subgraph; namespaced checkpoints,
// interrupts bubbling up, resuming into the subgraph, Command{graph=PARENT}, streaming.
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace tollgate {
namespace {

using testing::expect_error;
using testing::Log;
using testing::on_thread;
using testing::resume;

class SubgraphTest : public testing::SaverTest {
 protected:
  // write -> review (interrupts); compiled without a checkpointer (inherits the parent's).
  std::shared_ptr<CompiledGraph> editor(Log& log) {
    StateGraph sub;
    sub.add_node("write", [&log](const State& s, Runtime&) -> NodeResult {
      log.add("sub.write");
      return Json{{"draft", "Draft about " + s["topic"].get<std::string>()}};
    });
    sub.add_node("review", [&log](const State& s, Runtime& rt) -> NodeResult {
      log.add("sub.review: start");
      Json approved = rt.interrupt(Json{{"question", "Approve draft?"}, {"draft", s["draft"]}});
      log.add("sub.review: got " + approved.dump());
      return Json{{"approved", approved}};
    });
    sub.add_edge(START, "write").add_edge("write", "review");
    return sub.compile();
  }

  std::shared_ptr<CompiledGraph> parent(Log& log) {
    StateGraph g;
    g.add_node("prepare", [&log](const State&, Runtime&) -> NodeResult {
      log.add("parent.prepare");
      return Json{{"topic", "HITL"}};
    });
    g.add_node("editor", editor(log));
    g.add_node("publish", [&log](const State& s, Runtime&) -> NodeResult {
      log.add("parent.publish approved=" + s["approved"].dump());
      return {};
    });
    g.add_edge(START, "prepare").add_edge("prepare", "editor").add_edge("editor", "publish");
    return g.compile(testing::options(saver_));
  }
};

TEST_P(SubgraphTest, InterruptBubblesUpAndResumeSkipsEarlierInnerNodes) {
  Log log;
  auto graph = parent(log);
  RunResult first = graph->invoke(Json::object(), on_thread("subgraph"));
  ASSERT_EQ(first.interrupts.size(), 1u);
  EXPECT_EQ(first.interrupts[0].value["draft"], "Draft about HITL");
  EXPECT_EQ(first.values.to_json(), (Json{{"topic", "HITL"}}));
  RunResult done = graph->invoke(resume(true), on_thread("subgraph"));
  EXPECT_EQ(done.values.to_json(),
            (Json{{"topic", "HITL"}, {"draft", "Draft about HITL"}, {"approved", true}}));
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"parent.prepare", "sub.write",
                                                   "sub.review: start", "sub.review: start",
                                                   "sub.review: got true",
                                                   "parent.publish approved=true"}));
}

TEST_P(SubgraphTest, SubgraphCheckpointsLiveInTheTaskNamespaceWithParents) {
  Log log;
  auto graph = parent(log);
  graph->invoke(Json::object(), on_thread("subgraph"));
  StateSnapshot state = graph->get_state(on_thread("subgraph"));
  ASSERT_EQ(state.tasks.size(), 1u);
  const TaskInfo& task = state.tasks[0];
  EXPECT_EQ(task.name, "editor");
  ASSERT_TRUE(task.state.has_value());
  EXPECT_EQ(task.state->checkpoint_ns, "editor:" + task.id);
  ASSERT_EQ(task.interrupts.size(), 1u);

  ListQuery query;
  query.thread_id = "subgraph";
  query.checkpoint_ns = task.state->checkpoint_ns;
  const auto inner = saver_->list(query);
  ASSERT_EQ(inner.size(), 3u);  // input, write, review(paused step)
  for (const auto& tuple : inner) {
    EXPECT_EQ(tuple.metadata["parents"], (Json{{"", state.config.checkpoint_id}}));
  }
  EXPECT_EQ(inner.back().metadata["source"], "input");
}

TEST_P(SubgraphTest, GetStateWithSubgraphsNestsTheInnerSnapshot) {
  Log log;
  auto graph = parent(log);
  graph->invoke(Json::object(), on_thread("subgraph"));
  StateSnapshot state = graph->get_state(on_thread("subgraph"), true);
  ASSERT_EQ(state.tasks.size(), 1u);
  ASSERT_TRUE(state.tasks[0].subgraph_state);
  const StateSnapshot& inner = *state.tasks[0].subgraph_state;
  EXPECT_EQ(inner.next, (std::vector<std::string>{"review"}));
  EXPECT_EQ(inner.values.to_json(), (Json{{"topic", "HITL"}, {"draft", "Draft about HITL"}}));
}

TEST_P(SubgraphTest, InvokeSubgraphFromANodeResumesInside) {
  Log log;
  auto inner = editor(log);
  StateGraph g;
  g.add_node("delegate", [&inner, &log](const State&, Runtime& rt) -> NodeResult {
    log.add("delegate");
    Json out = rt.invoke_subgraph(*inner, Json{{"topic", "tools"}});
    return Json{{"result", out["approved"]}};
  });
  g.add_edge(START, "delegate");
  auto graph = g.compile(testing::options(saver_));
  RunResult first = graph->invoke(Json::object(), on_thread("t"));
  ASSERT_EQ(first.interrupts.size(), 1u);
  RunResult done = graph->invoke(resume("yes"), on_thread("t"));
  EXPECT_EQ(done.values["result"], "yes");
  EXPECT_EQ(log.count("sub.write"), 1u);
  EXPECT_EQ(log.count("delegate"), 2u);
}

TEST_P(SubgraphTest, ParentCommandFromASubgraphRoutesTheParent) {
  Log log;
  StateGraph sub;
  sub.add_node("escalate", [](const State&, Runtime&) -> NodeResult {
    Command command;
    command.graph = std::string(Command::PARENT);
    command.update = Json{{"escalated", true}};
    command.goto_nodes = {"human"};
    return command;
  });
  sub.add_edge(START, "escalate");
  StateGraph g;
  NodeOptions options;
  options.destinations = {"human"};
  g.add_node("worker", sub.compile(), options);
  g.add_node("human", [&log](const State&, Runtime&) -> NodeResult {
    log.add("human");
    return {};
  });
  g.add_edge(START, "worker");
  RunResult result = g.compile(testing::options(saver_))->invoke(Json::object(), on_thread("t"));
  EXPECT_EQ(result.values["escalated"], true);
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"human"}));
}

TEST_P(SubgraphTest, SubgraphEventsCarryTheirNamespaceWhenAskedFor) {
  Log log;
  auto graph = parent(log);
  std::vector<StreamEvent> events;
  RunConfig config = on_thread("t");
  config.stream_modes = {StreamMode::kUpdates};
  config.stream_subgraphs = true;
  config.on_event = [&](const StreamEvent& e) { events.push_back(e); };
  graph->invoke(Json::object(), config);
  bool inner_seen = false;
  for (const auto& e : events) {
    if (!e.ns.empty() && e.data.contains("write")) {
      inner_seen = true;
      ASSERT_EQ(e.ns.size(), 1u);
      EXPECT_EQ(e.ns[0].rfind("editor:", 0), 0u);
    }
  }
  EXPECT_TRUE(inner_seen);
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events.back().data.contains("__interrupt__"));
}

TEST_P(SubgraphTest, SubgraphEventsAreHiddenByDefault) {
  Log log;
  auto graph = parent(log);
  std::vector<StreamEvent> events;
  RunConfig config = on_thread("t");
  config.stream_modes = {StreamMode::kUpdates};
  config.on_event = [&](const StreamEvent& e) { events.push_back(e); };
  graph->invoke(Json::object(), config);
  for (const auto& e : events) EXPECT_TRUE(e.ns.empty());
}

TOLLGATE_INSTANTIATE_SAVERS(SubgraphTest);

}  // namespace
}  // namespace tollgate

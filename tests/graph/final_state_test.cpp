// RunConfig::final_state: the state a run hands back equals what get_state reads from the
// checkpointer right after it, for every way a run ends normally and every durability. Run
// against every saver.
#include <gtest/gtest.h>

#include "graph_test_util.h"

namespace tollgate {
namespace {

using testing::Log;
using testing::on_thread;
using testing::resume;
using testing::resume_map;

constexpr Durability kDurabilities[] = {Durability::kSync, Durability::kAsync, Durability::kExit};

const char* durability_name(Durability durability) {
  switch (durability) {
    case Durability::kSync:
      return "sync";
    case Durability::kAsync:
      return "async";
    case Durability::kExit:
      return "exit";
  }
  return "?";
}

// Field by field: to_json() shows all but the tasks' input state and their configs' ids.
void expect_same(const StateSnapshot& handed, const StateSnapshot& read) {
  EXPECT_EQ(handed.to_json(), read.to_json());
  EXPECT_EQ(handed.values.to_json(), read.values.to_json());
  EXPECT_EQ(handed.task_input.to_json(), read.task_input.to_json());
  EXPECT_EQ(handed.config, read.config);
  EXPECT_EQ(handed.parent_config, read.parent_config);
  ASSERT_EQ(handed.tasks.size(), read.tasks.size());
  for (std::size_t i = 0; i < handed.tasks.size(); ++i) {
    EXPECT_EQ(handed.tasks[i].state, read.tasks[i].state);
    EXPECT_EQ(handed.tasks[i].subgraph_state, nullptr);
    EXPECT_EQ(handed.tasks[i].interrupts, read.tasks[i].interrupts);
  }
}

class FinalStateTest : public testing::SaverTest {
 protected:
  // Runs `input` on `thread` asking for the final state, and checks it against get_state.
  RunResult run(const CompiledGraph& graph, const Input& input, const std::string& thread,
                Durability durability, RunConfig config = {}) {
    config.thread_id = thread;
    config.durability = durability;
    config.final_state = true;
    RunResult result = graph.invoke(input, config);
    EXPECT_NE(result.state, nullptr);
    if (result.state) {
      expect_same(*result.state, graph.get_state(on_thread(thread)));
      EXPECT_EQ(result.state->values.to_json(), result.values.to_json());
    }
    return result;
  }

  // For each durability, `body(durability, thread)` on a thread of its own.
  template <typename Body>
  void each_durability(const std::string& thread, Body&& body) {
    for (Durability durability : kDurabilities) {
      SCOPED_TRACE(durability_name(durability));
      body(durability, thread + "-" + durability_name(durability));
    }
  }

  // a -> b -> c, each appending its name to "trail" and setting "last".
  std::shared_ptr<CompiledGraph> chain(CompileOptions options) {
    StateSchema schema;
    schema.append("trail");
    StateGraph g(schema);
    for (std::string name : {"a", "b", "c"}) {
      g.add_node(name, [name](const State&, Runtime&) -> NodeResult {
        return Json{{"trail", name}, {"last", name}};
      });
    }
    g.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c");
    return g.compile(std::move(options));
  }

  // prepare -> ask (interrupts twice) -> done.
  std::shared_ptr<CompiledGraph> ask_twice() {
    StateGraph g;
    g.add_node("prepare", [](const State&, Runtime&) -> NodeResult {
      return Json{{"topic", "HITL"}};
    });
    g.add_node("ask", [](const State&, Runtime& rt) -> NodeResult {
      Json first = rt.interrupt(Json{{"question", "first?"}});
      Json second = rt.interrupt(Json{{"question", "second?"}});
      return Json{{"answers", Json::array({first, second})}};
    });
    g.add_node("done", [](const State&, Runtime&) -> NodeResult { return Json{{"done", true}}; });
    g.add_edge(START, "prepare").add_edge("prepare", "ask").add_edge("ask", "done");
    return g.compile(testing::options(saver_));
  }

  // a and b interrupt, c finishes; all join into j. "answers" appends.
  std::shared_ptr<CompiledGraph> parallel() {
    StateSchema schema;
    schema.append("answers");
    StateGraph g(schema);
    for (std::string name : {"a", "b"}) {
      g.add_node(name, [name](const State&, Runtime& rt) -> NodeResult {
        Json answer = rt.interrupt("question from " + name);
        return Json{{"answers", name + ":" + answer.get<std::string>()}, {name, answer}};
      });
    }
    g.add_node("c", [](const State&, Runtime&) -> NodeResult {
      return Json{{"answers", "c:done"}, {"c", true}};
    });
    g.add_node("j", [](const State&, Runtime&) -> NodeResult { return Json{{"joined", true}}; });
    g.add_edge(START, "a").add_edge(START, "b").add_edge(START, "c");
    g.add_edge(std::vector<std::string>{"a", "b", "c"}, "j");
    return g.compile(testing::options(saver_));
  }
};

TEST_P(FinalStateTest, CompletedRunHandsOverItsLastCheckpoint) {
  auto graph = chain(testing::options(saver_));
  each_durability("completed", [&](Durability durability, const std::string& thread) {
    RunResult first = run(*graph, Json{{"trail", Json::array({"start"})}}, thread, durability);
    EXPECT_FALSE(first.paused);
    EXPECT_TRUE(first.state->next.empty());
    EXPECT_EQ(first.state->metadata["source"], "loop");
    // A second turn starts from the values the first left in memory.
    RunResult second = run(*graph, Json{{"trail", Json::array({"again"})}}, thread, durability);
    EXPECT_EQ(second.state->values["trail"].size(), 8u);
    EXPECT_NE(second.state->config.checkpoint_id, first.state->config.checkpoint_id);
  });
}

TEST_P(FinalStateTest, RunPausedOnAnInterruptAndItsResumes) {
  auto graph = ask_twice();
  each_durability("ask", [&](Durability durability, const std::string& thread) {
    RunResult asked = run(*graph, Json::object(), thread, durability);
    ASSERT_EQ(asked.state->interrupts.size(), 1u);
    EXPECT_EQ(asked.state->next, (std::vector<std::string>{"ask"}));
    // The same step pauses again, on the checkpoint the run loaded.
    RunResult again = run(*graph, resume("one"), thread, durability);
    ASSERT_EQ(again.state->interrupts.size(), 1u);
    EXPECT_EQ(again.state->interrupts[0].value["question"], "second?");
    EXPECT_EQ(again.state->config.checkpoint_id, asked.state->config.checkpoint_id);
    RunResult done = run(*graph, resume("two"), thread, durability);
    EXPECT_FALSE(done.paused);
    EXPECT_EQ(done.state->values["answers"], (Json::array({"one", "two"})));
  });
}

TEST_P(FinalStateTest, PausedStepShowsTheTasksThatFinishedWithTheirWritesApplied) {
  auto graph = parallel();
  each_durability("parallel", [&](Durability durability, const std::string& thread) {
    RunResult paused = run(*graph, Json::object(), thread, durability);
    ASSERT_EQ(paused.state->tasks.size(), 3u);
    EXPECT_EQ(paused.state->next, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(paused.state->tasks[2].result, (Json{{"answers", "c:done"}, {"c", true}}));
    EXPECT_EQ(paused.state->values["answers"], (Json::array({"c:done"})));
    EXPECT_TRUE(paused.state->task_input["answers"].empty());  // before the writes
    // Answering one: it finishes, the other pauses again, the finished one stays reattached.
    const std::string a_id = paused.state->tasks[0].interrupts.at(0).id;
    RunResult one = run(*graph, resume_map({{a_id, "yes"}}), thread, durability);
    EXPECT_EQ(one.state->next, (std::vector<std::string>{"b"}));
    EXPECT_EQ(one.state->tasks[0].result["a"], "yes");
    const std::string b_id = one.state->tasks[1].interrupts.at(0).id;
    RunResult done = run(*graph, resume_map({{b_id, "no"}}), thread, durability);
    EXPECT_EQ(done.state->values["joined"], true);
  });
}

TEST_P(FinalStateTest, StaticBreakpointsBeforeAndAfterANode) {
  auto before = chain(testing::options(saver_, {"b"}));
  auto after = chain(testing::options(saver_, {}, {"b"}));
  each_durability("breakpoint", [&](Durability durability, const std::string& thread) {
    RunResult stopped = run(*before, Json::object(), thread + "-before", durability);
    EXPECT_TRUE(stopped.paused);
    EXPECT_EQ(stopped.state->next, (std::vector<std::string>{"b"}));
    RunResult done = run(*before, Json(), thread + "-before", durability);
    EXPECT_EQ(done.state->values["last"], "c");

    RunResult stopped_after = run(*after, Json::object(), thread + "-after", durability);
    EXPECT_EQ(stopped_after.state->next, (std::vector<std::string>{"c"}));
    EXPECT_EQ(stopped_after.state->values["last"], "b");
    run(*after, Json(), thread + "-after", durability);
  });
}

TEST_P(FinalStateTest, BreakpointsGivenToTheRun) {
  auto graph = chain(testing::options(saver_));
  each_durability("run-breakpoint", [&](Durability durability, const std::string& thread) {
    RunConfig config;
    config.interrupt_before = {"c"};
    RunResult stopped = run(*graph, Json::object(), thread, durability, config);
    EXPECT_EQ(stopped.state->next, (std::vector<std::string>{"c"}));
    run(*graph, Json(), thread, durability);
  });
}

TEST_P(FinalStateTest, SubgraphPauseShowsTheRootNamespaceOnly) {
  StateGraph sub;
  sub.add_node("write", [](const State& s, Runtime&) -> NodeResult {
    return Json{{"draft", "about " + s["topic"].get<std::string>()}};
  });
  sub.add_node("review", [](const State& s, Runtime& rt) -> NodeResult {
    return Json{{"approved", rt.interrupt(Json{{"draft", s["draft"]}})}};
  });
  sub.add_edge(START, "write").add_edge("write", "review");
  StateGraph g;
  g.add_node("prepare", [](const State&, Runtime&) -> NodeResult {
    return Json{{"topic", "HITL"}};
  });
  g.add_node("editor", sub.compile());
  g.add_edge(START, "prepare").add_edge("prepare", "editor");
  auto graph = g.compile(testing::options(saver_));
  each_durability("subgraph", [&](Durability durability, const std::string& thread) {
    RunResult paused = run(*graph, Json::object(), thread, durability);
    ASSERT_EQ(paused.state->tasks.size(), 1u);
    ASSERT_TRUE(paused.state->tasks[0].state.has_value());
    EXPECT_EQ(paused.state->tasks[0].state->checkpoint_ns, "editor:" + paused.state->tasks[0].id);
    ASSERT_EQ(paused.state->interrupts.size(), 1u);
    RunResult done = run(*graph, resume(true), thread, durability);
    EXPECT_EQ(done.state->values["approved"], true);
  });
}

TEST_P(FinalStateTest, SendsPausedAndFinished) {
  StateSchema schema;
  schema.append("results");
  StateGraph g(schema);
  g.add_node("plan", [](const State&, Runtime&) -> NodeResult { return Json::object(); });
  g.add_node("work", [](const State& input, Runtime& rt) -> NodeResult {
    const int item = input["item"].get<int>();
    if (item == 2) rt.interrupt(Json{{"item", item}});
    return Json{{"results", item * 10}};
  });
  g.add_edge(START, "plan");
  g.add_conditional_edges("plan", [](const State&) -> Route {
    return std::vector<Send>{{"work", {{"item", 1}}}, {"work", {{"item", 2}}},
                             {"work", {{"item", 3}}}};
  });
  auto graph = g.compile(testing::options(saver_));
  each_durability("sends", [&](Durability durability, const std::string& thread) {
    RunResult paused = run(*graph, Json::object(), thread, durability);
    ASSERT_EQ(paused.state->tasks.size(), 3u);
    EXPECT_EQ(paused.state->tasks[1].path, Json::array({"__pregel_push", 1, false}));
    EXPECT_EQ(paused.state->values["results"], (Json::array({10, 30})));
    RunResult done = run(*graph, resume("ok"), thread, durability);
    EXPECT_EQ(done.state->values["results"], (Json::array({10, 20, 30})));
  });
}

TEST_P(FinalStateTest, ForkFromAnEarlierCheckpoint) {
  auto graph = chain(testing::options(saver_));
  each_durability("fork", [&](Durability durability, const std::string& thread) {
    run(*graph, Json::object(), thread, Durability::kSync);  // every step's checkpoint stored
    std::vector<StateSnapshot> history = graph->get_state_history(on_thread(thread));
    ASSERT_GE(history.size(), 3u);
    RunConfig config;
    config.checkpoint_id = history[2].config.checkpoint_id;  // before b ran
    RunResult replayed = run(*graph, Json(), thread, durability, config);
    EXPECT_EQ(replayed.state->values["last"], "c");
  });
}

TEST_P(FinalStateTest, NothingHandedOverWhenNotAskedOrNotKnownWithoutReading) {
  auto graph = ask_twice();
  RunResult plain = graph->invoke(Json::object(), on_thread("not-asked"));
  EXPECT_EQ(plain.state, nullptr);

  RunConfig config = on_thread("no-checkpoint");
  config.final_state = true;
  EXPECT_EQ(graph->invoke(Json(), config).state, nullptr);  // nothing to continue from

  // A Command's update on a step that pauses again: in the channels, not in the checkpoint.
  config.thread_id = "update";
  ASSERT_NE(graph->invoke(Json::object(), config).state, nullptr);
  Command command = resume("one");
  command.update = Json{{"topic", "changed"}};
  EXPECT_EQ(graph->invoke(command, config).state, nullptr);
  // Once the step ends, its checkpoint holds the update.
  RunResult done = run(*graph, resume("two"), "update", Durability::kSync);
  EXPECT_EQ(done.state->values["topic"], "changed");
}

TOLLGATE_INSTANTIATE_SAVERS(FinalStateTest);

}  // namespace
}  // namespace tollgate

// interrupt() and resuming: ids, the strict resume rules, failed resumes, parallel
// interrupts, static breakpoints. Run against every saver.
#include <gtest/gtest.h>

#include "graph/ids.h"
#include "graph_test_util.h"

namespace tollgate {
namespace {

using testing::expect_error;
using testing::Log;
using testing::on_thread;
using testing::resume;
using testing::resume_map;

class InterruptTest : public testing::SaverTest {
 protected:
  // ask: one interrupt; its answer becomes "answer".
  std::shared_ptr<CompiledGraph> ask_graph(Log& log) {
    StateGraph g;
    g.add_node("ask", [&log](const State&, Runtime& rt) -> NodeResult {
      log.add("ask: start");
      Json answer = rt.interrupt("What is your name?");
      log.add("ask: got " + answer.dump());
      return Json{{"answer", answer}};
    });
    g.add_edge(START, "ask");
    return g.compile(testing::options(saver_));
  }

  // a and b interrupt, c does not; all join into j. "answers" appends.
  std::shared_ptr<CompiledGraph> parallel_graph(Log& log) {
    StateSchema schema;
    schema.append("answers");
    StateGraph g(schema);
    for (std::string name : {"a", "b"}) {
      g.add_node(name, [&log, name](const State&, Runtime& rt) -> NodeResult {
        log.add(name + ": start");
        Json answer = rt.interrupt("question from " + name);
        log.add(name + ": got " + answer.get<std::string>());
        return Json{{"answers", name + ":" + answer.get<std::string>()}};
      });
    }
    g.add_node("c", [&log](const State&, Runtime&) -> NodeResult {
      log.add("c: start");
      return Json{{"answers", "c:done"}};
    });
    g.add_node("j", [&log](const State& s, Runtime&) -> NodeResult {
      log.add("j: " + s["answers"].dump());
      return {};
    });
    g.add_edge(START, "a").add_edge(START, "b").add_edge(START, "c");
    g.add_edge(std::vector<std::string>{"a", "b", "c"}, "j");
    return g.compile(testing::options(saver_));
  }
};

TEST_P(InterruptTest, InterruptPausesAndAPlainResumeAnswersIt) {
  Log log;
  auto graph = ask_graph(log);
  RunResult first = graph->invoke(Json::object(), on_thread("t"));
  EXPECT_TRUE(first.paused);
  ASSERT_EQ(first.interrupts.size(), 1u);
  EXPECT_EQ(first.interrupts[0].value, "What is your name?");
  EXPECT_EQ(first.to_json()["__interrupt__"][0]["value"], "What is your name?");
  RunResult second = graph->invoke(resume("Ada"), on_thread("t"));
  EXPECT_FALSE(second.paused);
  EXPECT_EQ(second.values["answer"], "Ada");
  EXPECT_EQ(log.lines(),
            (std::vector<std::string>{"ask: start", "ask: start", "ask: got \"Ada\""}));
}

TEST_P(InterruptTest, InterruptOrPauseReturnsNothingAndPausesLikeInterrupt) {
  Log log;
  StateGraph g;
  g.add_node("ask", [&log](const State&, Runtime& rt) -> NodeResult {
    std::optional<Json> answer = rt.interrupt_or_pause("What is your name?");
    if (!answer) {
      log.add("ask: pausing");
      return Json{{"answer", "written while pausing"}};  // discarded
    }
    log.add("ask: got " + answer->dump());
    return Json{{"answer", *answer}};
  });
  g.add_edge(START, "ask");
  auto graph = g.compile(testing::options(saver_));

  RunResult first = graph->invoke(Json::object(), on_thread("t"));
  EXPECT_TRUE(first.paused);
  ASSERT_EQ(first.interrupts.size(), 1u);
  EXPECT_EQ(first.interrupts[0].value, "What is your name?");
  EXPECT_FALSE(first.values.contains("answer")) << "a pausing node's update is not applied";
  // The id interrupt() gives, so the two forms are interchangeable.
  StateSnapshot state = graph->get_state(on_thread("t"));
  ASSERT_EQ(state.tasks.size(), 1u);
  EXPECT_EQ(first.interrupts[0].id, graph_internal::interrupt_id("ask:" + state.tasks[0].id, 0));

  RunResult second = graph->invoke(resume("Ada"), on_thread("t"));
  EXPECT_FALSE(second.paused);
  EXPECT_EQ(second.values["answer"], "Ada");
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"ask: pausing", "ask: got \"Ada\""}));
}

TEST_P(InterruptTest, InterruptIdIsTheHashOfTheTaskNamespace) {
  Log log;
  auto graph = ask_graph(log);
  RunResult first = graph->invoke(Json::object(), on_thread("t"));
  StateSnapshot state = graph->get_state(on_thread("t"));
  ASSERT_EQ(state.tasks.size(), 1u);
  EXPECT_EQ(first.interrupts[0].id,
            graph_internal::interrupt_id("ask:" + state.tasks[0].id, 0));
  EXPECT_EQ(first.interrupts[0].id.size(), 32u);
}

// Task ids key saved writes, so they must not change between versions. The expected ids are
// the XXH3-128 of the parts, each followed by a NUL byte, fed part by part to a streaming
// state (how ids were first made).
TEST(TaskId, IsStableAcrossVersions) {
  EXPECT_EQ(graph_internal::task_id({"1ef8a3c2-0000-6000-8000-000000000001", "", "1", "model",
                                     "__pregel_pull", "__start__"}),
            "fcb9de35-26bc-d3ad-4879-66fec2532a79");
}

TEST(TaskId, LongPartsHashTheSameWay) {
  const std::string long_part(300, 'x');
  EXPECT_EQ(graph_internal::task_id({"1ef8a3c2-0000-6000-8000-000000000001", "", "1", "model",
                                     "__pregel_pull", "__start__", long_part}),
            "04243162-9f39-32e1-e2d7-b96cd0bfcffe");
}

TEST_P(InterruptTest, InterruptIdIsStableWhenTheStepIsRetried) {
  Log log;
  auto graph = ask_graph(log);
  const std::string id = graph->invoke(Json::object(), on_thread("t")).interrupts[0].id;
  RunResult again = graph->invoke(Json(nullptr), on_thread("t"));  // continue: re-raises
  ASSERT_EQ(again.interrupts.size(), 1u);
  EXPECT_EQ(again.interrupts[0].id, id);
}

TEST_P(InterruptTest, InterruptIdsDifferBetweenRuns) {
  Log log;
  auto graph = ask_graph(log);
  const std::string first = graph->invoke(Json::object(), on_thread("t1")).interrupts[0].id;
  const std::string second = graph->invoke(Json::object(), on_thread("t2")).interrupts[0].id;
  EXPECT_NE(first, second);
}

TEST_P(InterruptTest, SequentialInterruptsInOneNodeGetDistinctIdsAndReplayByPosition) {
  Log log;
  StateGraph g;
  g.add_node("ask", [&log](const State&, Runtime& rt) -> NodeResult {
    log.add("start");
    Json name = rt.interrupt("name?");
    Json age = rt.interrupt("age?");
    return Json{{"name", name}, {"age", age}};
  });
  g.add_edge(START, "ask");
  auto graph = g.compile(testing::options(saver_));
  const auto first = graph->invoke(Json::object(), on_thread("t")).interrupts;
  const auto second = graph->invoke(resume("Ada"), on_thread("t")).interrupts;
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(first[0].id, second[0].id);
  EXPECT_EQ(second[0].value, "age?");
  RunResult done = graph->invoke(resume(36), on_thread("t"));
  EXPECT_EQ(done.values.to_json(), (Json{{"name", "Ada"}, {"age", 36}}));
  EXPECT_EQ(log.count("start"), 3u);
}

TEST_P(InterruptTest, CatchingStdExceptionDoesNotSwallowThePause) {
  StateGraph g;
  g.add_node("careless", [](const State&, Runtime&) -> NodeResult {
    try {
      return Json{{"answer", interrupt("q")}};
    } catch (const std::exception&) {
      return Json{{"answer", "swallowed"}};
    }
  });
  g.add_edge(START, "careless");
  auto graph = g.compile(testing::options(saver_));
  EXPECT_TRUE(graph->invoke(Json::object(), on_thread("t")).paused);
  EXPECT_EQ(graph->invoke(resume("real"), on_thread("t")).values["answer"], "real");
}

TEST_P(InterruptTest, ResumingAThreadWithNothingPendingIsAConflictNamingTheThread) {
  Log log;
  auto graph = ask_graph(log);
  Error unknown = expect_error([&] { graph->invoke(resume("x"), on_thread("nobody")); });
  EXPECT_EQ(unknown.code(), ErrorCode::kConflict);
  EXPECT_NE(std::string(unknown.what()).find("'nobody'"), std::string::npos);
  graph->invoke(Json::object(), on_thread("t"));
  graph->invoke(resume("Ada"), on_thread("t"));
  Error finished = expect_error([&] { graph->invoke(resume("again"), on_thread("t")); });
  EXPECT_EQ(finished.code(), ErrorCode::kConflict);
  EXPECT_NE(std::string(finished.what()).find("no pending interrupt"), std::string::npos);
}

TEST_P(InterruptTest, PlainResumeWithSeveralPendingIsAConflictListingTheIds) {
  Log log;
  auto graph = parallel_graph(log);
  const auto interrupts = graph->invoke(Json::object(), on_thread("t")).interrupts;
  ASSERT_EQ(interrupts.size(), 2u);
  Error error = expect_error([&] { graph->invoke(resume("x"), on_thread("t")); });
  EXPECT_EQ(error.code(), ErrorCode::kConflict);
  EXPECT_NE(std::string(error.what()).find(interrupts[0].id), std::string::npos);
  EXPECT_NE(std::string(error.what()).find(interrupts[1].id), std::string::npos);
}

TEST_P(InterruptTest, UnknownInterruptIdIsAConflictNamingIt) {
  Log log;
  auto graph = ask_graph(log);
  graph->invoke(Json::object(), on_thread("t"));
  const std::string bogus = "0123456789abcdef0123456789abcdef";
  Error error = expect_error([&] { graph->invoke(resume_map({{bogus, 1}}), on_thread("t")); });
  EXPECT_EQ(error.code(), ErrorCode::kConflict);
  EXPECT_NE(std::string(error.what()).find(bogus), std::string::npos);
}

TEST_P(InterruptTest, AlreadyAnsweredInterruptIdIsAConflict) {
  Log log;
  auto graph = parallel_graph(log);
  const auto interrupts = graph->invoke(Json::object(), on_thread("t")).interrupts;
  graph->invoke(resume_map({{interrupts[0].id, "A1"}}), on_thread("t"));
  Error error = expect_error(
      [&] { graph->invoke(resume_map({{interrupts[0].id, "again"}}), on_thread("t")); });
  EXPECT_EQ(error.code(), ErrorCode::kConflict);
  EXPECT_NE(std::string(error.what()).find(interrupts[0].id), std::string::npos);
}

TEST_P(InterruptTest, CommandResumeWithoutCheckpointerIsInvalid) {
  StateGraph g;
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return {}; });
  g.add_edge(START, "a");
  Error error = expect_error([&] { g.compile()->invoke(resume("x")); });
  EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
}

TEST_P(InterruptTest, EmptyCommandIsRejectedWithTheReferenceMessage) {
  Log log;
  auto graph = ask_graph(log);
  Error error = expect_error([&] { graph->invoke(Command{}, on_thread("t")); });
  EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(std::string(error.what()), "Received empty Command input");
}

TEST_P(InterruptTest, FailedResumeIsNotPersistedAndTheThreadStaysAnswerable) {
  Log log;
  StateGraph g;
  g.add_node("number", [&log](const State&, Runtime& rt) -> NodeResult {
    Json answer = rt.interrupt("give me a number");
    log.add("got " + answer.dump());
    if (!answer.is_number()) throw Error::Unprocessable("bad answer " + answer.dump());
    return Json{{"n", answer}};
  });
  g.add_edge(START, "number");
  auto graph = g.compile(testing::options(saver_));
  const std::string id = graph->invoke(Json::object(), on_thread("t")).interrupts[0].id;
  Error error = expect_error([&] { graph->invoke(resume("oops"), on_thread("t")); });
  EXPECT_EQ(error.code(), ErrorCode::kUnprocessable);
  StateSnapshot state = graph->get_state(on_thread("t"));
  ASSERT_EQ(state.interrupts.size(), 1u);
  EXPECT_EQ(state.interrupts[0].id, id);
  RunResult fixed = graph->invoke(resume(42), on_thread("t"));
  EXPECT_EQ(fixed.values["n"], 42);
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"got \"oops\"", "got 42"}));
}

TEST_P(InterruptTest, ParallelInterruptsResumeOneByOneWithoutRerunningFinishedSiblings) {
  Log log;
  auto graph = parallel_graph(log);
  RunResult first = graph->invoke(Json::object(), on_thread("t"));
  ASSERT_EQ(first.interrupts.size(), 2u);
  EXPECT_EQ(first.values["answers"], (Json::array({"c:done"})));
  const std::string checkpoint = graph->get_state(on_thread("t")).config.checkpoint_id;

  RunResult second = graph->invoke(resume_map({{first.interrupts[0].id, "A1"}}), on_thread("t"));
  ASSERT_EQ(second.interrupts.size(), 1u);
  EXPECT_EQ(second.interrupts[0].id, first.interrupts[1].id);
  EXPECT_EQ(second.values["answers"], (Json::array({"a:A1", "c:done"})));
  StateSnapshot paused = graph->get_state(on_thread("t"));
  EXPECT_EQ(paused.config.checkpoint_id, checkpoint);  // the step has not finished
  EXPECT_EQ(paused.next, (std::vector<std::string>{"b"}));

  RunResult third = graph->invoke(resume_map({{first.interrupts[1].id, "B1"}}), on_thread("t"));
  EXPECT_FALSE(third.paused);
  EXPECT_EQ(third.values["answers"], (Json::array({"a:A1", "b:B1", "c:done"})));
  EXPECT_EQ(log.count("c: start"), 1u);
  EXPECT_EQ(log.count("a: start"), 2u);
  EXPECT_EQ(log.count("b: start"), 3u);
  EXPECT_EQ(log.count("j: [\"a:A1\",\"b:B1\",\"c:done\"]"), 1u);
}

TEST_P(InterruptTest, ParallelInterruptsResumeAllAtOnceWithAMap) {
  Log log;
  auto graph = parallel_graph(log);
  const auto interrupts = graph->invoke(Json::object(), on_thread("t")).interrupts;
  RunResult done = graph->invoke(
      resume_map({{interrupts[0].id, "A2"}, {interrupts[1].id, "B2"}}), on_thread("t"));
  EXPECT_FALSE(done.paused);
  EXPECT_EQ(done.values["answers"], (Json::array({"a:A2", "b:B2", "c:done"})));
  EXPECT_EQ(log.count("c: start"), 1u);
}

TEST_P(InterruptTest, NewInputOnAPausedThreadStartsANewRun) {
  Log log;
  auto graph = ask_graph(log);
  const std::string old_id = graph->invoke(Json::object(), on_thread("t")).interrupts[0].id;
  RunResult fresh = graph->invoke(Json{{"v", "new input"}}, on_thread("t"));
  ASSERT_EQ(fresh.interrupts.size(), 1u);
  EXPECT_NE(fresh.interrupts[0].id, old_id);
  EXPECT_EQ(fresh.values["v"], "new input");
  Error stale = expect_error(
      [&] { graph->invoke(resume_map({{old_id, "late"}}), on_thread("t")); });
  EXPECT_EQ(stale.code(), ErrorCode::kConflict);
}

TEST_P(InterruptTest, InterruptWorksFromAToolDeepInTheCallChain) {
  auto tool = [] { return interrupt(Json{{"form", "address"}}); };
  StateGraph g;
  g.add_node("tools", [&tool](const State&, Runtime&) -> NodeResult {
    return Json{{"address", tool()}};
  });
  g.add_edge(START, "tools");
  auto graph = g.compile(testing::options(saver_));
  EXPECT_EQ(graph->invoke(Json::object(), on_thread("t")).interrupts[0].value["form"], "address");
  EXPECT_EQ(graph->invoke(resume("Main St"), on_thread("t")).values["address"], "Main St");
}

// ------------------------------------------------------------------- static breakpoints

class BreakpointTest : public testing::SaverTest {
 protected:
  std::shared_ptr<CompiledGraph> one_two(Log& log, CompileOptions options) {
    StateGraph g;
    g.add_node("one", [&log](const State& s, Runtime&) -> NodeResult {
      log.add("one");
      return Json{{"n", s["n"].get<int>() + 1}};
    });
    g.add_node("two", [&log](const State& s, Runtime&) -> NodeResult {
      log.add("two");
      return Json{{"n", s["n"].get<int>() * 10}};
    });
    g.add_edge(START, "one").add_edge("one", "two");
    options.checkpointer = saver_;
    return g.compile(options);
  }
};

TEST_P(BreakpointTest, InterruptBeforeAndAfterPauseWithoutPayload) {
  Log log;
  auto graph = one_two(log, testing::options(nullptr, {"two"}, {"two"}));
  RunResult first = graph->invoke(Json{{"n", 1}}, on_thread("static"));
  EXPECT_TRUE(first.paused);
  EXPECT_TRUE(first.interrupts.empty());
  EXPECT_EQ(first.to_json(), (Json{{"n", 2}, {"__interrupt__", Json::array()}}));
  EXPECT_EQ(graph->get_state(on_thread("static")).next, (std::vector<std::string>{"two"}));

  RunResult second = graph->invoke(Json(nullptr), on_thread("static"));
  EXPECT_TRUE(second.paused);  // after "two"
  EXPECT_EQ(second.values["n"], 20);

  RunResult third = graph->invoke(Json(nullptr), on_thread("static"));
  EXPECT_FALSE(third.paused);
  EXPECT_EQ(third.to_json(), (Json{{"n", 20}}));
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"one", "two"}));
}

TEST_P(BreakpointTest, PerCallBreakpointsAndWildcard) {
  Log log;
  auto graph = one_two(log, {});
  RunConfig config = on_thread("t");
  config.interrupt_before = {"*"};
  RunResult first = graph->invoke(Json{{"n", 1}}, config);
  EXPECT_TRUE(first.paused);
  EXPECT_TRUE(log.lines().empty());
  RunResult second = graph->invoke(Json(nullptr), config);  // runs one, stops before two
  EXPECT_TRUE(second.paused);
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"one"}));
  RunResult done = graph->invoke(Json(nullptr), on_thread("t"));
  EXPECT_FALSE(done.paused);
  EXPECT_EQ(done.values["n"], 20);
}

TEST_P(BreakpointTest, ResumingABreakpointWithACommandResumeIsAConflict) {
  Log log;
  auto graph = one_two(log, testing::options(nullptr, {"two"}));
  graph->invoke(Json{{"n", 1}}, on_thread("t"));
  Error error = expect_error([&] { graph->invoke(resume("go"), on_thread("t")); });
  EXPECT_EQ(error.code(), ErrorCode::kConflict);
}

TOLLGATE_INSTANTIATE_SAVERS(InterruptTest);
TOLLGATE_INSTANTIATE_SAVERS(BreakpointTest);

}  // namespace
}  // namespace tollgate

namespace tollgate {
namespace {

class JoinAcrossPauseTest : public testing::SaverTest {};

TEST_P(JoinAcrossPauseTest, AJoinRemembersSourcesThatFinishedBeforeThePause) {
  Log log;
  auto build = [&] {
    StateGraph g;
    g.add_node("a", [&log](const State&, Runtime&) -> NodeResult {
      log.add("a");
      return {};
    });
    g.add_node("b", [](const State&, Runtime&) -> NodeResult { return {}; });
    g.add_node("b2", [](const State&, Runtime& rt) -> NodeResult {
      return Json{{"answer", rt.interrupt("b2?")}};
    });
    g.add_node("j", [&log](const State&, Runtime&) -> NodeResult {
      log.add("j");
      return {};
    });
    g.add_edge(START, "a").add_edge(START, "b").add_edge("b", "b2");
    g.add_edge(std::vector<std::string>{"a", "b2"}, "j");
    return g.compile(testing::options(saver_));
  };
  build()->invoke(Json::object(), on_thread("t"));
  // A new graph object: nothing cached, everything comes from the saver.
  RunResult done = build()->invoke(resume("ok"), on_thread("t"));
  EXPECT_FALSE(done.paused);
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"a", "j"}));
}

TOLLGATE_INSTANTIATE_SAVERS(JoinAcrossPauseTest);

}  // namespace
}  // namespace tollgate

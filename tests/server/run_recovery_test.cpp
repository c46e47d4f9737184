// Start-up recovery of a run whose process was killed in the middle of a step (docs/effects.md):
// a graph registered to re-run cut-off steps (ServedGraphOptions) continues by itself
// from its last checkpoint — the step's finished tasks kept, the decision it carries settled as
// the continued run ends — and one that does not is failed; a run that kills the process every
// time is failed after kMaxRunAttempts. The process really ends (_exit(137), as kill -9 would
// leave it) in death-test children that re-run this binary and share the test's files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "server/http_test_client.h"
#include "server/run_manager.h"
#include "support/test_folder.h"
#include "tollgate/server.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate::server {
namespace {

using testing::ClientResponse;
using testing::http_call;

const std::string kThread = "0192d9b4-3c1a-7a51-9c2e-5b1c8a3f0d11";
constexpr const char* kCrashVariable = "TOLLGATE_TEST_CRASH_IN_STEP";

// ask (a review) -> a and b in one step. With kCrashVariable set, b ends the process once a's
// result is stored: the step is cut off with one task finished and one not.
std::shared_ptr<const CompiledGraph> two_task_graph(std::shared_ptr<Saver> saver) {
  StateSchema schema;
  schema.append("ran");
  StateGraph g(schema);
  g.add_node("ask", [](const State&, Runtime& rt) -> NodeResult {
    return Json{{"answer", rt.interrupt("Proceed?")}};
  });
  g.add_node("a", [](const State&, Runtime&) -> NodeResult { return Json{{"ran", Json::array({"a"})}}; });
  g.add_node("b", [saver](const State&, Runtime& rt) -> NodeResult {
    if (std::getenv(kCrashVariable) != nullptr) {
      for (bool a_saved = false; !a_saved;) {
        auto tuple = saver->get_tuple(CheckpointConfig{rt.thread_id(), "", ""});
        for (const PendingWrite& write : tuple ? tuple->pending_writes : std::vector<PendingWrite>{}) {
          a_saved = a_saved || write.channel == "ran";
        }
      }
      ::_exit(137);
    }
    return Json{{"ran", Json::array({"b"})}};
  });
  g.add_edge(START, "ask").add_edge("ask", "a").add_edge("ask", "b");
  g.add_edge("a", END).add_edge("b", END);
  CompileOptions options;
  options.checkpointer = std::move(saver);
  return g.compile(std::move(options));
}

class RunRecovery : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    dir_ = folder();  // set before the children start, so that they inherit it
  }
  void TearDown() override {
    server_.reset();
    if (folder_) unsetenv(variable().c_str());
  }

  // The folder of the test's databases: made (and removed) by the parent; the death-test
  // children, which re-run the test from its start and are killed, inherit its path.
  std::string folder() {
    if (std::getenv(variable().c_str()) == nullptr) {
      folder_.emplace("recovery");
      setenv(variable().c_str(), folder_->path().c_str(), /*overwrite=*/1);
    }
    return std::getenv(variable().c_str());
  }

  static std::string variable() {
    return std::string("TOLLGATE_TEST_RECOVERY_DIR_") +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  void start() {
    const std::string& dir = dir_;
    ServerOptions options;
    options.port = 0;
    options.db_path = dir + "/server.db";
    options.checkpointer = open_sqlite_saver(dir + "/checkpoints.db");
    options.heartbeat_seconds = 0;
    GraphRegistry graphs;
    graphs.add("rerun", two_task_graph, "", {.rerun_cut_off_steps = true});
    graphs.add("plain", two_task_graph);
    server_ = std::make_unique<Server>(options, std::move(graphs));
    server_->start();
  }

  ClientResponse call(const std::string& method, const std::string& target,
                      const Json& body = Json()) {
    return http_call(server_->port(), method, target, body.is_null() ? "" : body.dump());
  }

  // In a child: pauses the thread at the review and approves it; b ends the process.
  void approve_and_crash(const std::string& graph) {
    setenv(kCrashVariable, "1", 1);
    start();
    call("POST", "/threads", {{"thread_id", kThread}});
    call("POST", "/threads/" + kThread + "/runs/wait", {{"assistant_id", graph}, {"input", Json::object()}});
    call("POST", "/threads/" + kThread + "/runs/wait",
         {{"assistant_id", graph}, {"command", {{"resume", "yes"}}}});
  }

  // In a child: starts the server again with b still crashing, and waits for the continued run.
  void restart_and_crash() {
    setenv(kCrashVariable, "1", 1);
    start();
    call("GET", "/threads/" + kThread + "/runs/" + cut_off_run() + "/join");
  }

  // The run that carried the approval (the thread's newest).
  std::string cut_off_run() {
    const ClientResponse runs = call("GET", "/threads/" + kThread + "/runs");
    EXPECT_EQ(runs.status, 200) << runs.body;
    return runs.json().is_array() && !runs.json().empty() ? runs.json()[0].value("run_id", "")
                                                          : "";
  }

  Json decision_outcomes() {
    Json outcomes = Json::array();
    for (const Json& entry : call("GET", "/audit?thread_id=" + kThread).json()) {
      if (entry.value("kind", "") == "decision") outcomes.push_back(entry["outcome"]);
    }
    return outcomes;
  }

  std::optional<tollgate::testing::TestFolder> folder_;  // the parent's only
  std::string dir_;
  std::unique_ptr<Server> server_;
};

TEST_F(RunRecovery, ARunOfAGraphThatRerunsCutOffStepsFinishesByItselfAfterTheRestart) {
  EXPECT_EXIT(approve_and_crash("rerun"), ::testing::ExitedWithCode(137), "");
  start();
  const std::string run = cut_off_run();
  const ClientResponse joined = call("GET", "/threads/" + kThread + "/runs/" + run + "/join");
  ASSERT_EQ(joined.status, 200) << joined.body;
  EXPECT_EQ(joined.json()["ran"], Json::array({"a", "b"}));  // a's kept result, b run again
  EXPECT_EQ(call("GET", "/threads/" + kThread + "/runs/" + run).json()["status"], "success");
  EXPECT_EQ(call("GET", "/threads/" + kThread).json()["status"], "idle");
}

TEST_F(RunRecovery, TheDecisionACutOffStepCarriedIsSettledByTheContinuedRun) {
  EXPECT_EXIT(approve_and_crash("rerun"), ::testing::ExitedWithCode(137), "");
  start();
  call("GET", "/threads/" + kThread + "/runs/" + cut_off_run() + "/join");
  EXPECT_EQ(decision_outcomes(), Json::array({"applied"}));
}

TEST_F(RunRecovery, TheJoinedStreamOfTheContinuedRunEndsWithItsFinalValues) {
  EXPECT_EXIT(approve_and_crash("rerun"), ::testing::ExitedWithCode(137), "");
  start();
  const auto events = testing::parse_sse(
      http_call(server_->port(), "GET", "/threads/" + kThread + "/runs/" + cut_off_run() + "/stream",
                "", {{"Last-Event-ID", "-1"}})  // from the first event on
          .body);
  ASSERT_FALSE(events.empty());
  Json last_values;
  for (const auto& event : events) {
    if (event.event == "values") last_values = event.data;
  }
  EXPECT_EQ(last_values["ran"], Json::array({"a", "b"}));
  // The continued attempt numbers its events after the earlier attempt's.
  for (std::size_t i = 1; i < events.size(); ++i) {
    EXPECT_LT(std::stoll(events[i - 1].id), std::stoll(events[i].id));
  }
}

TEST_F(RunRecovery, ARunOfAGraphThatDoesNotRerunCutOffStepsIsFailedAsBefore) {
  EXPECT_EXIT(approve_and_crash("plain"), ::testing::ExitedWithCode(137), "");
  start();
  const std::string run = cut_off_run();
  EXPECT_EQ(call("GET", "/threads/" + kThread + "/runs/" + run).json()["status"], "error");
  const Json thread = call("GET", "/threads/" + kThread).json();
  EXPECT_EQ(thread["status"], "error");
  // a's saved result shows; b never ran again.
  EXPECT_EQ(thread["values"]["ran"], Json::array({"a"})) << thread.dump();
  EXPECT_EQ(decision_outcomes(), Json::array({"lost"}));
}

TEST_F(RunRecovery, ARunThatKillsTheProcessEveryTimeIsFailedAfterTheAttemptLimit) {
  static_assert(RunManager::kMaxRunAttempts == 3, "one crash per attempt below");
  EXPECT_EXIT(approve_and_crash("rerun"), ::testing::ExitedWithCode(137), "");
  EXPECT_EXIT(restart_and_crash(), ::testing::ExitedWithCode(137), "");
  EXPECT_EXIT(restart_and_crash(), ::testing::ExitedWithCode(137), "");
  start();
  const std::string run = cut_off_run();
  EXPECT_EQ(call("GET", "/threads/" + kThread + "/runs/" + run).json()["status"], "error");
  const Json thread = call("GET", "/threads/" + kThread).json();
  EXPECT_EQ(thread["status"], "error");
  EXPECT_NE(thread["error"].get<std::string>().find("cut off 3 times"), std::string::npos)
      << thread.dump();
}

}  // namespace
}  // namespace tollgate::server

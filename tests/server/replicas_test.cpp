// Several replicas on one database (docs/deploy.md, "Several replicas"): two servers in this
// process share one SQLite file in ReplicaOptions::Mode::kShared, each with its own
// connections, reading each other's changes by polling — the same code the PostgreSQL
// replicas run, without notifications. Every request may go to either of them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "server/http_test_client.h"
#include "server/ids.h"
#include "server/run_request.h"
#include "server/server_fixture.h"
#include "server/sql_review_store.h"
#include "server/sql_store.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate::server::testing {
namespace {

using namespace std::chrono_literals;

class ReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::filesystem::temp_directory_path() /
          ("tollgate_replicas_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    remove_db();
    a_ = start("a");
    b_ = start("b");
  }
  void TearDown() override {
    gate_->open = true;
    a_.reset();
    b_.reset();
    remove_db();
  }
  std::unique_ptr<Server> start(const std::string& id) {
    ServerOptions options;
    options.port = 0;
    options.db_path = db_.string();
    options.checkpointer = open_sqlite_saver(db_.string());
    options.heartbeat_seconds = 0;
    options.replicas.mode = ReplicaOptions::Mode::kShared;
    options.replicas.id = id;
    options.replicas.heartbeat = 50ms;
    options.replicas.timeout = 600ms;
    options.replicas.poll = 20ms;
    GraphRegistry graphs = test_graphs(gate_);
    // Like "gated", but a step cut off (its node stopped by the replica's stop) runs again.
    graphs.add(
        "resumable",
        [gate = gate_](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
          StateGraph g;
          g.add_node("wait", [gate](const State&, Runtime& rt) -> NodeResult {
            gate->entered++;
            while (!gate->open) {
              if (rt.cancelled()) throw Error(ErrorCode::kCancelled, "stopped");
              std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            return Json{{"done", true}};
          });
          g.add_edge(START, "wait").add_edge("wait", END);
          return g.compile(compile_options(saver, "resumable"));
        },
        "", ServedGraphOptions{.rerun_cut_off_steps = true});
    auto server = std::make_unique<Server>(options, std::move(graphs));
    server->start();
    return server;
  }
  void remove_db() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_.string() + suffix);
  }

  static ClientResponse call(Server& server, const std::string& method, const std::string& target,
                             const Json& body = Json(),
                             const std::map<std::string, std::string>& headers = {}) {
    return http_call(server.port(), method, target, body.is_null() ? "" : body.dump(), headers);
  }
  std::string new_thread(Server& server) {
    auto response = call(server, "POST", "/threads", Json::object());
    EXPECT_EQ(response.status, 200) << response.body;
    return response.json()["thread_id"].get<std::string>();
  }
  // A background run of the gated graph; returns its id once its node is entered.
  std::string start_gated_run(Server& server, const std::string& thread_id,
                              const std::string& graph = "gated") {
    const int entered = gate_->entered.load();
    auto response = call(server, "POST", "/threads/" + thread_id + "/runs",
                         {{"assistant_id", graph}, {"input", Json::object()}});
    EXPECT_EQ(response.status, 200) << response.body;
    for (int i = 0; i < 1000 && gate_->entered.load() == entered; ++i) std::this_thread::sleep_for(5ms);
    EXPECT_GT(gate_->entered.load(), entered) << "the gated node never started";
    return response.json()["run_id"].get<std::string>();
  }
  Json run_of(Server& server, const std::string& thread_id, const std::string& run_id) {
    return call(server, "GET", "/threads/" + thread_id + "/runs/" + run_id).json();
  }
  // Polls `server` until the run has `status` (generous: nothing here is timed).
  void wait_for_run(Server& server, const std::string& thread_id, const std::string& run_id,
                    const std::string& status) {
    for (int i = 0; i < 1000; ++i) {
      if (run_of(server, thread_id, run_id)["status"] == status) return;
      std::this_thread::sleep_for(10ms);
    }
    FAIL() << "run " << run_id << " never became " << status << ": "
           << run_of(server, thread_id, run_id).dump();
  }

  std::filesystem::path db_;
  std::shared_ptr<Gate> gate_ = std::make_shared<Gate>();
  std::unique_ptr<Server> a_;
  std::unique_ptr<Server> b_;
};

TEST_F(ReplicasTest, AJoinOnOneReplicaFollowsARunExecutingOnTheOther) {
  const std::string thread_id = new_thread(*a_);
  const std::string run_id = start_gated_run(*a_, thread_id);
  auto joined = std::async(std::launch::async, [&] {
    return call(*b_, "GET", "/threads/" + thread_id + "/runs/" + run_id + "/join");
  });
  EXPECT_EQ(joined.wait_for(100ms), std::future_status::timeout) << "the join answered early";
  gate_->open = true;
  ClientResponse response = joined.get();
  EXPECT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.json()["done"], true) << response.body;
}

TEST_F(ReplicasTest, AStreamJoinedOnOneReplicaCarriesTheOtherReplicasEventsToTheEnd) {
  const std::string thread_id = new_thread(*a_);
  const std::string run_id = start_gated_run(*a_, thread_id);
  auto streamed = std::async(std::launch::async, [&] {
    return call(*b_, "GET", "/threads/" + thread_id + "/runs/" + run_id + "/stream", Json(),
                {{"Last-Event-ID", "-1"}});
  });
  std::this_thread::sleep_for(50ms);
  gate_->open = true;
  ClientResponse response = streamed.get();
  ASSERT_EQ(response.status, 200) << response.body;
  auto events = parse_sse(response.body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().event, "metadata") << response.body;
  bool saw_done = false;
  for (const auto& event : events) {
    if (event.event == "values" && event.data.value("done", false)) saw_done = true;
  }
  EXPECT_TRUE(saw_done) << response.body;
}

TEST_F(ReplicasTest, RejectRefusesARunWhileTheThreadRunsOnAnotherReplica) {
  const std::string thread_id = new_thread(*a_);
  start_gated_run(*a_, thread_id);
  auto response = call(*b_, "POST", "/threads/" + thread_id + "/runs",
                       {{"assistant_id", "gated"}, {"input", Json::object()},
                        {"multitask_strategy", "reject"}});
  EXPECT_EQ(response.status, 409) << response.body;
}

TEST_F(ReplicasTest, AnEnqueuedRunOnAnotherReplicaWaitsForTheRunningOneThenRuns) {
  const std::string thread_id = new_thread(*a_);
  const std::string first = start_gated_run(*a_, thread_id);
  auto second = call(*b_, "POST", "/threads/" + thread_id + "/runs",
                     {{"assistant_id", "gated"}, {"input", Json::object()},
                      {"multitask_strategy", "enqueue"}});
  ASSERT_EQ(second.status, 200) << second.body;
  const std::string second_id = second.json()["run_id"].get<std::string>();
  std::this_thread::sleep_for(150ms);  // several polls of b: it must not start meanwhile
  EXPECT_EQ(run_of(*b_, thread_id, second_id)["status"], "pending");
  EXPECT_EQ(gate_->entered.load(), 1);
  gate_->open = true;
  wait_for_run(*a_, thread_id, first, "success");
  wait_for_run(*b_, thread_id, second_id, "success");
  EXPECT_EQ(gate_->entered.load(), 2);
}

TEST_F(ReplicasTest, ACancelSentToOneReplicaStopsTheRunExecutingOnTheOther) {
  const std::string thread_id = new_thread(*a_);
  const std::string run_id = start_gated_run(*a_, thread_id);
  auto response =
      call(*b_, "POST", "/threads/" + thread_id + "/runs/" + run_id + "/cancel?wait=1");
  EXPECT_EQ(response.status, 204) << response.body;
  EXPECT_EQ(run_of(*a_, thread_id, run_id)["status"], "interrupted");
}

TEST_F(ReplicasTest, InterruptStrategyOnOneReplicaCancelsTheRunOnTheOtherAndRunsNext) {
  const std::string thread_id = new_thread(*a_);
  const std::string first = start_gated_run(*a_, thread_id);
  auto second = call(*b_, "POST", "/threads/" + thread_id + "/runs",
                     {{"assistant_id", "hitl"}, {"input", Json::object()},
                      {"multitask_strategy", "interrupt"}});
  ASSERT_EQ(second.status, 200) << second.body;
  const std::string second_id = second.json()["run_id"].get<std::string>();
  wait_for_run(*a_, thread_id, first, "interrupted");
  wait_for_run(*b_, thread_id, second_id, "success");
}

TEST_F(ReplicasTest, DeletingAThreadWhileItRunsOnAnotherReplicaIsRefused) {
  const std::string thread_id = new_thread(*a_);
  start_gated_run(*a_, thread_id);
  EXPECT_EQ(call(*b_, "DELETE", "/threads/" + thread_id).status, 409);
  EXPECT_EQ(call(*b_, "GET", "/threads/" + thread_id).json()["status"], "busy");
}

TEST_F(ReplicasTest, ADecisionSentToBothReplicasAtOnceIsAcceptedOnce) {
  const std::string thread_id = new_thread(*a_);
  auto paused = call(*a_, "POST", "/threads/" + thread_id + "/runs/wait",
                     {{"assistant_id", "hitl"}, {"input", Json::object()}});
  ASSERT_EQ(paused.status, 200) << paused.body;
  const Json resume{{"assistant_id", "hitl"}, {"command", {{"resume", "yes"}}}};
  auto on_a = std::async(std::launch::async, [&] {
    return call(*a_, "POST", "/threads/" + thread_id + "/runs/wait", resume);
  });
  auto on_b = std::async(std::launch::async, [&] {
    return call(*b_, "POST", "/threads/" + thread_id + "/runs/wait", resume);
  });
  const int a_status = on_a.get().status;
  const int b_status = on_b.get().status;
  EXPECT_EQ((a_status == 200) + (b_status == 200), 1) << a_status << " " << b_status;
  EXPECT_EQ(call(*a_, "GET", "/threads/" + thread_id).json()["status"], "idle");
}

TEST_F(ReplicasTest, AReplicaThatStopsHandsItsRunningRunToAnotherWhichContinuesIt) {
  const std::string thread_id = new_thread(*a_);
  const std::string run_id = start_gated_run(*a_, thread_id, "resumable");
  a_.reset();  // a clean stop
  gate_->open = true;
  wait_for_run(*b_, thread_id, run_id, "success");
  EXPECT_EQ(call(*b_, "GET", "/threads/" + thread_id).json()["values"]["done"], true);
  EXPECT_EQ(gate_->entered.load(), 2) << "the step ran once on each replica";
}

// Another replica accepted a decision a moment ago and is about to store its run: the review is
// claimed by a run not stored yet. That claim is not taken for orphaned.
TEST_F(ReplicasTest, AReviewJustClaimedByAnotherReplicasDecisionIsNotTakenOver) {
  const std::string thread_id = new_thread(*a_);
  auto paused = call(*a_, "POST", "/threads/" + thread_id + "/runs/wait",
                     {{"assistant_id", "hitl"}, {"input", Json::object()}});
  ASSERT_EQ(paused.status, 200) << paused.body;
  {
    SqliteReviewStore reviews(db_.string());
    std::vector<ReviewRecord> records = reviews.list(thread_id);
    ASSERT_EQ(records.size(), 1u);
    ASSERT_EQ(reviews.decide(thread_id, records[0].checkpoint_id, records[0].interrupt_id, "ada",
                             "01900000-0000-7000-8000-0000000000aa", now_millis()),
              1u);
  }
  auto second = call(*b_, "POST", "/threads/" + thread_id + "/runs/wait",
                     {{"assistant_id", "hitl"}, {"command", {{"resume", "yes"}}}});
  EXPECT_EQ(second.status, 409) << second.body;
  EXPECT_EQ(call(*b_, "GET", "/threads/" + thread_id).json()["status"], "interrupted");
}

// A replica that stops without a word: its row stays, its heartbeat stops.
TEST_F(ReplicasTest, APendingRunOfADeadReplicaIsTakenOverAndRuns) {
  const std::string thread_id = new_thread(*a_);
  {
    SqliteStore store(db_.string());
    store.register_replica("ghost", Json::object());
    RunRecord run;
    run.run_id = "01900000-0000-7000-8000-000000000001";
    run.thread_id = thread_id;
    run.assistant_id = system_assistant_id("gated");
    run.status = RunStatus::kPending;
    run.owner = "ghost";
    RunRequest request;
    request.thread_id = thread_id;
    request.assistant_id = run.assistant_id;
    request.input = Json::object();
    run.kwargs = request.to_kwargs();
    run.kwargs["config"]["configurable"] = {{"run_id", run.run_id}, {"thread_id", thread_id}};
    run.metadata = {{"graph_id", "gated"}};
    run.created_at = run.updated_at = 1;
    ASSERT_TRUE(store.insert_run(run, Json::object()));
  }
  gate_->open = true;
  wait_for_run(*b_, thread_id, "01900000-0000-7000-8000-000000000001", "success");
  EXPECT_EQ(call(*a_, "GET", "/threads/" + thread_id).json()["error"], nullptr);
  Json run = run_of(*a_, thread_id, "01900000-0000-7000-8000-000000000001");
  EXPECT_EQ(run["status"], "success");
}

TEST_F(ReplicasTest, APausedRunCutOffOnADeadReplicaLeavesItsThreadAnswerable) {
  const std::string thread_id = new_thread(*a_);
  auto paused = call(*a_, "POST", "/threads/" + thread_id + "/runs/wait",
                     {{"assistant_id", "hitl"}, {"input", Json::object()}});
  ASSERT_EQ(paused.status, 200) << paused.body;
  // The run that paused, as a replica that died mid-step would have left it.
  const std::string run_id =
      call(*a_, "GET", "/threads/" + thread_id + "/runs").json()[0]["run_id"].get<std::string>();
  {
    SqliteStore store(db_.string());
    store.register_replica("ghost", Json::object());
    RunRecord run = *store.get_run(run_id);
    run.status = RunStatus::kRunning;
    run.owner = "ghost";
    store.put_run(run);
  }
  wait_for_run(*b_, thread_id, run_id, "error");
  EXPECT_EQ(call(*b_, "GET", "/threads/" + thread_id).json()["status"], "interrupted");
  auto resumed = call(*b_, "POST", "/threads/" + thread_id + "/runs/wait",
                      {{"assistant_id", "hitl"}, {"command", {{"resume", "yes"}}}});
  EXPECT_EQ(resumed.status, 200) << resumed.body;
  EXPECT_EQ(call(*a_, "GET", "/threads/" + thread_id).json()["status"], "idle");
}

TEST_F(ReplicasTest, AThreadsV2EventsAreNumberedOnceAcrossRunsOnBothReplicas) {
  const std::string thread_id = new_thread(*a_);
  auto paused = call(*a_, "POST", "/threads/" + thread_id + "/runs/wait",
                     {{"assistant_id", "hitl"}, {"input", Json::object()}});
  ASSERT_EQ(paused.status, 200) << paused.body;
  auto resumed = call(*b_, "POST", "/threads/" + thread_id + "/runs/wait",
                      {{"assistant_id", "hitl"}, {"command", {{"resume", "yes"}}}});
  ASSERT_EQ(resumed.status, 200) << resumed.body;
  auto runs = call(*a_, "GET", "/threads/" + thread_id + "/runs").json();
  ASSERT_EQ(runs.size(), 2u);
  SqliteStore store(db_.string());
  // Numbers only: the values events stored naming their checkpoints read as any state.
  store.set_state_texts([](const std::string&, const std::string&, const std::string&, StateView) {
    return std::optional<std::string>("{}");
  });
  std::vector<LogEntry> events = store.thread_events(thread_id);
  ASSERT_FALSE(events.empty());
  std::int64_t previous = 0;
  for (const LogEntry& e : events) {
    EXPECT_EQ(e.seq, previous + 1) << "the thread's events skip or repeat a number";
    previous = e.seq;
  }
  // Each run's lifecycle is there: b's run did not write over a's events.
  for (const Json& run : runs) {
    const std::string prefix = "synth:" + run["run_id"].get<std::string>() + ":";
    bool found = false;
    for (const LogEntry& e : events) found = found || e.id.rfind(prefix, 0) == 0;
    EXPECT_TRUE(found) << "no lifecycle event of run " << run["run_id"];
  }
}

// The config file's "replicas" section.
std::string refusal_of(const Json& section) {
  try {
    parse_replica_options(section);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ReplicaOptionsTest, MillisecondsAndDurationsAreRead) {
  ReplicaOptions options =
      parse_replica_options({{"id", "web-1"}, {"heartbeat", "250ms"}, {"timeout", "2s"}, {"poll", "1m"}});
  EXPECT_EQ(options.id, "web-1");
  EXPECT_EQ(options.heartbeat, 250ms);
  EXPECT_EQ(options.timeout, 2000ms);
  EXPECT_EQ(options.poll, 60000ms);
}

TEST(ReplicaOptionsTest, AnUnknownKeyIsRefusedNamingTheKnownOnes) {
  EXPECT_EQ(refusal_of({{"hartbeat", "1s"}}),
            "replicas: unknown key 'hartbeat' (expected id, heartbeat, timeout, poll)");
}

TEST(ReplicaOptionsTest, ABadDurationIsRefusedNamingTheField) {
  EXPECT_NE(refusal_of({{"timeout", "10 seconds"}}).find("replicas.timeout: invalid duration"),
            std::string::npos);
  EXPECT_NE(refusal_of({{"poll", "0ms"}}).find("replicas.poll: invalid duration"), std::string::npos);
  EXPECT_NE(refusal_of({{"heartbeat", 5}}).find("replicas.heartbeat: must be a duration string"),
            std::string::npos);
}

TEST(ReplicaOptionsTest, ATimeoutNotAboveTwoHeartbeatsIsRefused) {
  EXPECT_NE(refusal_of({{"heartbeat", "5s"}, {"timeout", "10s"}}).find("replicas.timeout: must be more than twice"),
            std::string::npos);
}

TEST(ReplicaOptionsTest, AnEmptyIdIsRefused) {
  EXPECT_NE(refusal_of({{"id", ""}}).find("replicas.id: must be a non-empty string"),
            std::string::npos);
}

}  // namespace
}  // namespace tollgate::server::testing

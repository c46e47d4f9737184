// Runs and threads never get stuck, spent or lost: a thread's status follows its runs and its
// latest checkpoint through races, cancels, deletes and the death of the process.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <boost/asio.hpp>
#include <thread>

#include "server/run_manager.h"
#include "server/server_fixture.h"
#include "server/sql_review_store.h"
#include "server/sql_store.h"

namespace tollgate::server {
namespace {

using testing::parse_sse;

const std::string kHitlAssistant = "d2a02ed8-fb92-5e43-81ea-cb78d82caa2f";

class RunLifecycleTest : public testing::ServerFixture {
 protected:
  std::string interrupt_id(const std::string& thread) {
    return call("GET", "/threads/" + thread + "/state").json()["tasks"][0]["interrupts"][0]["id"];
  }
  testing::ClientResponse respond_v2(const std::string& thread, const std::string& interrupt,
                                     const Json& response, const Json& extra = Json::object()) {
    Json params{{"namespace", Json::array()}, {"interrupt_id", interrupt}, {"response", response}};
    params.update(extra);
    return call("POST", "/threads/" + thread + "/commands",
                {{"id", 1}, {"method", "input.respond"}, {"params", params}});
  }
  void wait_for_gate() {
    for (int i = 0; i < 1000 && gate_->entered == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_GT(gate_->entered, 0);
  }
  // Stops the server and writes, as a process killed with SIGKILL would have left it, a run
  // that was executing on the thread.
  void crash_with_run_executing(const std::string& thread, int attempts, const Json& kwargs) {
    server_.reset();
    SqliteStore store(db_.string());
    RunRecord run;
    run.run_id = "01a22a56-2955-72c0-878b-ce6bc760372b";
    run.thread_id = thread;
    run.assistant_id = kHitlAssistant;
    run.status = RunStatus::kRunning;
    run.attempts = attempts;
    run.kwargs = kwargs;
    store.put_run(run);
  }
  std::int64_t rows(const char* table, const std::string& column, const std::string& value) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(db_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* statement = nullptr;
    const std::string sql =
        std::string("SELECT count(*) FROM ") + table + " WHERE " + column + " = ?";
    sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr);
    sqlite3_bind_text(statement, 1, value.c_str(), -1, SQLITE_TRANSIENT);
    std::int64_t count =
        sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : -1;
    sqlite3_finalize(statement);
    sqlite3_close(db);
    return count;
  }
};

// ------------------------------------------------------------ a Command is checked whole first

TEST_F(RunLifecycleTest, ResumeWithAGotoIsRefusedAndThePauseStaysAnswerable) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  auto refused =
      call("POST", "/threads/" + thread + "/runs/wait",
           {{"assistant_id", "hitl"}, {"command", {{"resume", "approve"}, {"goto", "tool"}}}});
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(refused.json()["detail"].get<std::string>().find("command.goto"), std::string::npos);
  EXPECT_EQ(call("GET", "/threads/" + thread).json()["status"], "interrupted");
  EXPECT_EQ(call("GET", "/threads/" + thread + "/runs").json().size(), 1u);
  auto approved = call("POST", "/threads/" + thread + "/runs/wait",
                       {{"assistant_id", "hitl"}, {"command", {{"resume", "approve"}}}});
  EXPECT_EQ(approved.status, 200) << approved.body;
  EXPECT_EQ(approved.json()["decision"], "approve");
}

TEST_F(RunLifecycleTest, GotoToAnUnknownNodeIs400NamingTheFieldAndTheNodes) {
  std::string thread = new_thread();
  auto response = call("POST", "/threads/" + thread + "/runs/wait",
                       {{"assistant_id", "hitl"}, {"command", {{"goto", {"agent", "nowhere"}}}}});
  EXPECT_EQ(response.status, 400) << response.body;
  const std::string detail = response.json()["detail"];
  EXPECT_NE(detail.find("command.goto[1]: unknown node \"nowhere\""), std::string::npos) << detail;
  EXPECT_NE(detail.find("agent, review, tool"), std::string::npos) << detail;
  EXPECT_EQ(call("GET", "/threads/" + thread + "/runs").json().size(), 0u);
}

TEST_F(RunLifecycleTest, V2RespondWithAGotoIsRefusedAndThePauseStaysAnswerable) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  const std::string id = interrupt_id(thread);
  auto refused = respond_v2(thread, id, "approve", {{"goto", "tool"}});
  EXPECT_EQ(refused.json()["type"], "error") << refused.body;
  EXPECT_NE(refused.json()["message"].get<std::string>().find("goto"), std::string::npos);
  EXPECT_EQ(call("GET", "/threads/" + thread).json()["status"], "interrupted");
  EXPECT_EQ(respond_v2(thread, id, "approve").json()["type"], "success");
  wait_for_status(thread, "idle");
  EXPECT_EQ(call("GET", "/threads/" + thread + "/state").json()["values"]["decision"], "approve");
}

TEST_F(RunLifecycleTest, ResumeThatAppliedOneDecisionBeforeFailingIsAFailureNotARefusal) {
  std::string thread = new_thread();
  auto paused = call("POST", "/threads/" + thread + "/runs/wait",
                     {{"assistant_id", "pair"}, {"input", Json::object()}});
  const Json interrupts = paused.json()["__interrupt__"];
  ASSERT_EQ(interrupts.size(), 2u) << paused.body;
  Json answers = Json::object();
  for (const Json& interrupt : interrupts) {
    answers[interrupt["id"].get<std::string>()] =
        interrupt["value"]["question"] == "first?" ? "ok" : "bad";
  }
  // "first" takes its answer and saves it; "second" refuses its own: the thread moved, so the
  // run is a failure the client sees as such, not a refusal that claims nothing happened.
  auto response = call("POST", "/threads/" + thread + "/runs/wait",
                       {{"assistant_id", "pair"}, {"command", {{"resume", answers}}}});
  EXPECT_EQ(response.status, 200) << response.body;
  EXPECT_TRUE(response.json().contains("__error__")) << response.body;
  auto runs = call("GET", "/threads/" + thread + "/runs").json();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["status"], "error");
  EXPECT_EQ(call("GET", "/threads/" + thread).json()["status"], "error");
}

// ------------------------------------------------------- a thread's record is its checkpoint

// After every run the thread's record (status, values, interrupts) is what its latest
// checkpoint reads back as: the record is written from the state the run ended on.
TEST_F(RunLifecycleTest, TheThreadRecordAfterEachRunIsItsLatestCheckpoint) {
  auto expect_record_is_state = [&](const std::string& thread, const std::string& status) {
    const Json record = call("GET", "/threads/" + thread).json();
    const Json state = call("GET", "/threads/" + thread + "/state").json();
    EXPECT_EQ(record["status"], status);
    EXPECT_EQ(record["values"], state["values"]);
    Json interrupts = Json::object();
    for (const Json& task : state["tasks"]) {
      if (!task["interrupts"].empty()) interrupts[task["id"].get<std::string>()] = task["interrupts"];
    }
    if (interrupts.empty() && !state["next"].empty()) {  // a static breakpoint
      for (const Json& task : state["tasks"]) interrupts[task["id"].get<std::string>()] = Json::array();
    }
    EXPECT_EQ(record["interrupts"], interrupts);
  };
  const Json input{{"messages", {{{"role", "user"}, {"content", "delete /tmp/x"}}}}};
  std::string thread = new_thread();
  auto paused = call("POST", "/threads/" + thread + "/runs/wait",
                     {{"assistant_id", "hitl"}, {"input", input}});
  ASSERT_EQ(paused.status, 200) << paused.body;
  expect_record_is_state(thread, "interrupted");
  auto done = call("POST", "/threads/" + thread + "/runs/wait",
                   {{"assistant_id", "hitl"}, {"command", {{"resume", "approve"}}}});
  ASSERT_EQ(done.status, 200) << done.body;
  expect_record_is_state(thread, "idle");

  std::string stopped = new_thread();
  auto breakpoint =
      call("POST", "/threads/" + stopped + "/runs/wait",
           {{"assistant_id", "hitl"}, {"input", input}, {"interrupt_before", {"review"}}});
  ASSERT_EQ(breakpoint.status, 200) << breakpoint.body;
  expect_record_is_state(stopped, "interrupted");
}

// ------------------------------------------------------------------------ status never stuck

TEST_F(RunLifecycleTest, MetadataPatchesRacingRunEndsNeverLeaveTheThreadBusy) {
  std::string thread = new_thread();
  std::atomic<bool> done{false};
  std::thread patcher([&] {
    for (int i = 0; !done; ++i) {
      call("PATCH", "/threads/" + thread, {{"metadata", {{"patch", i}}}});
    }
  });
  for (int i = 0; i < 20; ++i) {
    auto paused = call("POST", "/threads/" + thread + "/runs/wait",
                       {{"assistant_id", "hitl"},
                        {"input", {{"messages", {{{"role", "user"}, {"content", "x"}}}}}}});
    ASSERT_EQ(paused.status, 200) << paused.body;
    EXPECT_EQ(call("GET", "/threads/" + thread).json()["status"], "interrupted") << "round " << i;
  }
  done = true;
  patcher.join();
  EXPECT_EQ(call("GET", "/threads/" + thread).json()["status"], "interrupted");
  EXPECT_TRUE(call("GET", "/threads/" + thread).json()["metadata"].contains("patch"));
}

TEST_F(RunLifecycleTest, PatchWritesOnlyTheMetadata) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  auto patched = call("PATCH", "/threads/" + thread, {{"metadata", {{"owner", "ada"}}}});
  ASSERT_EQ(patched.status, 200);
  EXPECT_EQ(patched.json()["status"], "interrupted");
  EXPECT_EQ(patched.json()["metadata"]["owner"], "ada");
  EXPECT_EQ(patched.json()["metadata"]["graph_id"], "hitl");
  EXPECT_EQ(patched.json()["interrupts"].size(), 1u);
}

TEST_F(RunLifecycleTest, AThreadLeftBusyByAnOlderServerIsReconciledWithItsCheckpointAtStart) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  server_.reset();
  {
    SqliteStore store(db_.string());
    ThreadRecord t = *store.get_thread(thread);
    t.status = ThreadStatus::kBusy;  // a run's end was stored, its thread's refresh was not
    store.update_thread(t);
  }
  start();
  EXPECT_EQ(call("GET", "/threads/" + thread).json()["status"], "interrupted");
  EXPECT_EQ(respond_v2(thread, interrupt_id(thread), "approve").json()["type"], "success");
  wait_for_status(thread, "idle");
}

// --------------------------------------------------------------- recovery after a kill -9

TEST_F(RunLifecycleTest, AResumeCutOffByACrashLeavesThePausedThreadInterruptedAndAnswerable) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  const std::string id = interrupt_id(thread);
  crash_with_run_executing(thread, 1, {{"command", {{"resume", "approve"}}}});
  start();
  EXPECT_EQ(call("GET", "/threads/" + thread + "/runs/01a22a56-2955-72c0-878b-ce6bc760372b")
                .json()["status"],
            "error");
  auto t = call("GET", "/threads/" + thread).json();
  EXPECT_EQ(t["status"], "interrupted");
  EXPECT_TRUE(t["error"].is_null());
  EXPECT_EQ(respond_v2(thread, id, "after the crash").json()["type"], "success");
  wait_for_status(thread, "idle");
  EXPECT_EQ(call("GET", "/threads/" + thread + "/state").json()["values"]["decision"],
            "after the crash");
}

// The decision had been accepted (its review claimed by the run) but not yet taken when the
// process died: the review is open again, so the pause is answered with 200, not 409.
TEST_F(RunLifecycleTest, AResumeCutOffBeforeItsDecisionWasTakenLeavesTheReviewOpen) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  const std::string id = interrupt_id(thread);
  const std::string checkpoint =
      call("GET", "/threads/" + thread + "/state").json()["checkpoint"]["checkpoint_id"];
  crash_with_run_executing(thread, 1, {{"command", {{"resume", {{id, "approve"}}}}}});
  ASSERT_EQ(SqliteReviewStore(db_.string())
                .decide(thread, checkpoint, id, "local", "01a22a56-2955-72c0-878b-ce6bc760372b", 1),
            1u);
  start();
  auto approved = call("POST", "/threads/" + thread + "/runs/wait",
                       {{"assistant_id", "hitl"}, {"command", {{"resume", "after the crash"}}}});
  EXPECT_EQ(approved.status, 200) << approved.body;
  EXPECT_EQ(approved.json()["decision"], "after the crash");
}

// A decision's claim stayed behind without its run (the run's insert failed on a full disk and
// putting the claim back failed too): the next decision takes the review over.
TEST_F(RunLifecycleTest, AClaimWhoseRunWasNeverStoredDoesNotHoldTheReview) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  const std::string id = interrupt_id(thread);
  const std::string checkpoint =
      call("GET", "/threads/" + thread + "/state").json()["checkpoint"]["checkpoint_id"];
  ASSERT_EQ(SqliteReviewStore(db_.string())
                .decide(thread, checkpoint, id, "local", "01a22a56-2955-72c0-878b-ce6bc7603999", 1),
            1u);
  auto approved = call("POST", "/threads/" + thread + "/runs/wait",
                       {{"assistant_id", "hitl"}, {"command", {{"resume", "approve"}}}});
  EXPECT_EQ(approved.status, 200) << approved.body;
  EXPECT_EQ(approved.json()["decision"], "approve");
}

// The process died after the graph took the decision (the review task finished and its writes
// were saved on the checkpoint) and before the step's next checkpoint. The finished task waits
// for nothing, so the thread must not read as a pause (which every decision would refuse with
// 409): it reads as its cut-off run ended, and a run with no input continues the step. (A graph
// registered with rerun_cut_off_steps is continued by recovery itself: run_recovery_test.)
TEST_F(RunLifecycleTest, AResumeCutOffAfterItsDecisionWasTakenLeavesNoPauseAndContinues) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  const Json state = call("GET", "/threads/" + thread + "/state").json();
  const std::string task = state["tasks"][0]["id"];
  const std::string checkpoint = state["checkpoint"]["checkpoint_id"];
  crash_with_run_executing(thread, 1, {{"command", {{"resume", "approve"}}}});
  saver_->put_writes({thread, "", checkpoint}, {{"decision", "approve"}, {"branch:to:tool", nullptr}},
                     task);
  start();
  const Json t = call("GET", "/threads/" + thread).json();
  EXPECT_EQ(t["status"], "error");
  EXPECT_TRUE(t["interrupts"].empty()) << t.dump();
  auto continued = call("POST", "/threads/" + thread + "/runs/wait",
                        {{"assistant_id", "hitl"}, {"input", nullptr}});
  EXPECT_EQ(continued.status, 200) << continued.body;
  EXPECT_EQ(call("GET", "/threads/" + thread + "/state").json()["values"]["decision"], "approve");
}

TEST_F(RunLifecycleTest, RecoveryCountsAnAttemptBeforeItReadsTheCheckpoint) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  crash_with_run_executing(thread, 1, Json::object());
  start();
  SqliteStore store(db_.string());
  EXPECT_EQ(store.get_run("01a22a56-2955-72c0-878b-ce6bc760372b")->attempts, 2);
}

TEST_F(RunLifecycleTest, ARunCutOffTooOftenIsFailedWithoutRecoveringItsCheckpoint) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  crash_with_run_executing(thread, RunManager::kMaxRunAttempts, Json::object());
  start();
  EXPECT_EQ(call("GET", "/threads/" + thread + "/runs/01a22a56-2955-72c0-878b-ce6bc760372b")
                .json()["status"],
            "error");
  auto t = call("GET", "/threads/" + thread).json();
  EXPECT_EQ(t["status"], "error");  // not read from the (paused) checkpoint
  EXPECT_NE(t["error"].get<std::string>().find("cut off 3 times"), std::string::npos) << t.dump();
  // The thread can run again.
  auto retry = call("POST", "/threads/" + thread + "/runs/wait",
                    {{"assistant_id", "hitl"}, {"command", {{"resume", "approve"}}}});
  EXPECT_EQ(retry.status, 200) << retry.body;
}

// ------------------------------------------------------------------------------- cancel

TEST_F(RunLifecycleTest, ACancelledRunLeavesNoPauseWithNothingToAnswer) {
  std::string thread = new_thread();
  auto run = call("POST", "/threads/" + thread + "/runs",
                  {{"assistant_id", "gated"}, {"input", Json::object()}})
                 .json();
  wait_for_gate();
  std::string path = "/threads/" + thread + "/runs/" + run["run_id"].get<std::string>();
  ASSERT_EQ(call("POST", path + "/cancel?wait=1&action=interrupt").status, 204);
  auto t = call("GET", "/threads/" + thread).json();
  EXPECT_EQ(t["status"], "idle");
  EXPECT_EQ(t["interrupts"], Json::object());
  auto search = call("POST", "/threads/search", {{"status", "interrupted"}}).json();
  EXPECT_TRUE(search.empty());
}

TEST_F(RunLifecycleTest, CancelOnDisconnectLeavesTheThreadIdleNotPaused) {
  std::string thread = new_thread();
  {
    // A client streams a run and goes away: the run is cancelled.
    namespace net = boost::asio;
    net::io_context io;
    net::ip::tcp::socket socket(io);
    socket.connect({net::ip::make_address("127.0.0.1"), server_->port()});
    const std::string body =
        Json{{"assistant_id", "gated"}, {"input", Json::object()}, {"on_disconnect", "cancel"}}
            .dump();
    const std::string request = "POST /threads/" + thread +
                                "/runs/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                                "application/json\r\nContent-Length: " +
                                std::to_string(body.size()) + "\r\n\r\n" + body;
    net::write(socket, net::buffer(request));
    wait_for_gate();
  }
  for (int i = 0; i < 1000 && call("GET", "/threads/" + thread).json()["status"] == "busy"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto runs = call("GET", "/threads/" + thread + "/runs").json();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["status"], "interrupted");
  auto t = call("GET", "/threads/" + thread).json();
  EXPECT_EQ(t["status"], "idle");
  EXPECT_EQ(t["interrupts"], Json::object());
}

// ------------------------------------------------------------------------------- delete

TEST_F(RunLifecycleTest, DeletingAThreadWhileItsRunExecutesIs409AndKeepsEverything) {
  std::string thread = new_thread();
  auto run = call("POST", "/threads/" + thread + "/runs",
                  {{"assistant_id", "gated"}, {"input", Json::object()}})
                 .json();
  wait_for_gate();
  auto refused = call("DELETE", "/threads/" + thread);
  EXPECT_EQ(refused.status, 409) << refused.body;
  gate_->open = true;
  auto joined =
      call("GET", "/threads/" + thread + "/runs/" + run["run_id"].get<std::string>() + "/join");
  EXPECT_EQ(joined.json()["done"], true);
  EXPECT_EQ(call("GET", "/threads/" + thread).json()["status"], "idle");
}

TEST_F(RunLifecycleTest, ADeletedThreadLeavesNoRowsAndNoCheckpointsBehind) {
  gate_->open = true;
  std::string thread = new_thread();
  run_to_interrupt(thread);
  call("POST", "/threads/" + thread + "/runs/wait",
       {{"assistant_id", "hitl"}, {"command", {{"resume", "approve"}}}});
  const std::string run_id = call("GET", "/threads/" + thread + "/runs").json()[0]["run_id"];
  ASSERT_GT(rows("server_thread_event_batches", "thread_id", thread), 0);
  ASSERT_GT(rows("server_run_event_batches", "run_id", run_id), 0);
  ASSERT_EQ(call("DELETE", "/threads/" + thread).status, 204);
  EXPECT_EQ(rows("server_threads", "thread_id", thread), 0);
  EXPECT_EQ(rows("server_runs", "thread_id", thread), 0);
  EXPECT_EQ(rows("server_thread_event_batches", "thread_id", thread), 0);
  EXPECT_EQ(rows("server_run_event_batches", "run_id", run_id), 0);
  EXPECT_FALSE(saver_->get_tuple(CheckpointConfig{thread, "", ""}).has_value());
}

// ------------------------------------------------------------------------- system assistants

TEST_F(RunLifecycleTest, ASystemAssistantCannotBeDeletedAndRunsKeepWorking) {
  auto refused = call("DELETE", "/assistants/" + kHitlAssistant);
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(call("GET", "/assistants/hitl").status, 200);
  std::string thread = new_thread();
  EXPECT_EQ(call("POST", "/threads/" + thread + "/runs/wait",
                 {{"assistant_id", "hitl"}, {"input", Json::object()}})
                .status,
            200);
}

TEST_F(RunLifecycleTest, AnAssistantCreatedByAClientCanBeDeleted) {
  auto created = call("POST", "/assistants", {{"graph_id", "hitl"}, {"name", "mine"}});
  ASSERT_EQ(created.status, 200) << created.body;
  auto id = created.json()["assistant_id"].get<std::string>();
  EXPECT_EQ(call("DELETE", "/assistants/" + id).status, 200);
  EXPECT_EQ(call("GET", "/assistants/" + id).status, 404);
}

TEST_F(RunLifecycleTest, AQueuedRunExecutesTheGraphItsRequestWasCheckedAgainst) {
  auto created = call("POST", "/assistants", {{"graph_id", "actors"}});
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string id = created.json()["assistant_id"];
  const std::string thread = new_thread();
  auto queued = call("POST", "/threads/" + thread + "/runs",
                     {{"assistant_id", id}, {"input", Json::object()}, {"after_seconds", 0.5}});
  ASSERT_EQ(queued.status, 200) << queued.body;
  EXPECT_EQ(queued.json()["metadata"]["graph_id"], "actors");
  // The assistant moves to another graph before the run starts.
  auto patched = call("PATCH", "/assistants/" + id, {{"graph_id", "pair"}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  wait_for_status(thread, "interrupted");
  const Json interrupts = call("GET", "/threads/" + thread).json()["interrupts"];
  ASSERT_EQ(interrupts.size(), 1u) << interrupts.dump();  // "pair" would pause twice
  EXPECT_EQ(interrupts.begin()->at(0)["value"], "Proceed?") << interrupts.dump();
}

}  // namespace
}  // namespace tollgate::server

// Runs and threads never get stuck, spent or lost: a thread's status follows its runs and its
// latest checkpoint through races, cancels, deletes and the death of the process.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <boost/asio.hpp>
#include <thread>

#include "server/run_manager.h"
#include "server/server_fixture.h"
#include "server/sqlite_store.h"

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
    run.status = "running";
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
  auto refused = call("POST", "/threads/" + thread + "/runs/wait",
                      {{"assistant_id", "hitl"},
                       {"command", {{"resume", "approve"}, {"goto", "tool"}}}});
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

}  // namespace
}  // namespace tollgate::server

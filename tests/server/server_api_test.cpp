// The Agent Server over real HTTP on 127.0.0.1, serving small graphs built here.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "server/server_fixture.h"
#include "server/sql_store.h"

namespace tollgate::server {
namespace {

using testing::http_call;
using testing::parse_sse;

class ServerApiTest : public testing::ServerFixture {
 protected:
  // Runs the `actors` graph on `thread` until it pauses, then resumes it with "yes"; returns the
  // resume's answer. The thread then has two runs.
  testing::ClientResponse pause_then_resume(const std::string& thread) {
    auto first = call("POST", "/threads/" + thread + "/runs/wait",
                      {{"assistant_id", "actors"}, {"input", Json::object()}});
    EXPECT_EQ(first.status, 200) << first.body;
    return call("POST", "/threads/" + thread + "/runs/wait",
                {{"assistant_id", "actors"}, {"command", {{"resume", "yes"}}}});
  }

  // Streams the `tokens` graph on a new thread in messages-tuple mode; returns each `messages`
  // event's [chunk, metadata] and the thread.
  std::pair<std::vector<Json>, std::string> token_tuples() {
    const std::string thread = new_thread();
    std::vector<Json> tuples;
    for (const auto& e : stream(thread, {{"assistant_id", "tokens"},
                                         {"input", {{"messages", Json::array()}}},
                                         {"stream_mode", {"messages-tuple"}}})) {
      if (e.event == "messages") tuples.push_back(e.data);
    }
    return {std::move(tuples), thread};
  }
};

TEST_F(ServerApiTest, OkAnswersTrue) {
  auto response = call("GET", "/ok");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.json(), Json({{"ok", true}}));
}

TEST_F(ServerApiTest, ALoopbackPageGetsCorsHeadersExposingContentLocation) {
  auto response = call("GET", "/ok", Json(), {{"origin", "http://localhost:5173"}});
  EXPECT_EQ(response.header("access-control-allow-origin"), "http://localhost:5173");
  EXPECT_NE(response.header("access-control-expose-headers").find("content-location"),
            std::string::npos);
}

TEST_F(ServerApiTest, PreflightIs204EchoingRequestedHeaders) {
  auto response = call("OPTIONS", "/threads", Json(),
                       {{"Access-Control-Request-Headers", "content-type,x-api-key"}});
  EXPECT_EQ(response.status, 204);
  EXPECT_EQ(response.header("access-control-allow-headers"), "content-type,x-api-key");
  EXPECT_NE(response.header("access-control-allow-methods").find("PATCH"), std::string::npos);
}

TEST_F(ServerApiTest, OversizedBodyIs413WithJsonDetail) {
  std::string big(100 * 1024, 'x');
  auto response =
      http_call(server_->port(), "POST", "/threads", "{\"metadata\":{\"x\":\"" + big + "\"}}");
  EXPECT_EQ(response.status, 413);
  EXPECT_NE(response.json()["detail"].get<std::string>().find("too large"), std::string::npos);
}

TEST_F(ServerApiTest, MalformedJsonIs400) {
  auto response = http_call(server_->port(), "POST", "/threads", "{\"metadata\": ");
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(response.json()["detail"].get<std::string>().find("not valid JSON"), std::string::npos);
}

// Defect 2: one limit for every JSON body, checked while parsing.
TEST_F(ServerApiTest, EveryJsonBodyNestedTooDeeplyIs400NamingTheLimit) {
  const std::string thread = new_thread();
  const std::string deep = "{\"metadata\":" + std::string(300, '[') + std::string(300, ']') + "}";
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"POST", "/threads"},
           {"PATCH", "/threads/" + thread},
           {"POST", "/threads/search"},
           {"POST", "/assistants"},
           {"POST", "/threads/" + thread + "/runs/stream"},
           {"POST", "/threads/" + thread + "/runs/wait"},
           {"POST", "/threads/" + thread + "/state"},
           {"POST", "/threads/" + thread + "/commands"},
           {"POST", "/threads/" + thread + "/stream/events"}}) {
    auto response = http_call(server_->port(), method, path, deep);
    EXPECT_EQ(response.status, 400) << method << " " << path;
    EXPECT_EQ(response.json()["detail"], "Request body nests deeper than 256 levels")
        << method << " " << path;
  }
}

// Defect 1: a 256-byte segment made the console's file fallback throw std::filesystem_error.
TEST_F(ServerApiTest, AConsolePathWithANameOver255BytesIs404) {
  console_dir_ = (std::filesystem::temp_directory_path() /
                  ("tollgate_console_" + std::to_string(::getpid())))
                     .string();
  std::filesystem::create_directories(console_dir_);
  restart();
  EXPECT_EQ(call("GET", "/" + std::string(256, 'a')).status, 404);
  EXPECT_EQ(call("GET", "/" + std::string(5000, 'a')).status, 404);
  EXPECT_EQ(call("GET", "/ok").status, 200);
  std::filesystem::remove_all(console_dir_);
}

TEST_F(ServerApiTest, UnknownThreadIs404NamingIt) {
  auto response = call("GET", "/threads/00000000-0000-4000-8000-000000000000");
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(response.json()["detail"],
            "Thread with ID 00000000-0000-4000-8000-000000000000 not found");
}

TEST_F(ServerApiTest, ThreadIdThatIsNotAUuidIs400NamingTheField) {
  auto response = call("GET", "/threads/not-a-uuid");
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(response.json()["detail"].get<std::string>().find("thread_id"), std::string::npos);
}

TEST_F(ServerApiTest, UnknownAssistantIs404WithTheReferenceMessage) {
  std::string thread = new_thread();
  auto response = call("POST", "/threads/" + thread + "/runs", {{"assistant_id", "nope"}});
  EXPECT_EQ(response.status, 404);
  EXPECT_NE(response.json()["detail"].get<std::string>().find("No assistant found for \"nope\""),
            std::string::npos);
}

TEST_F(ServerApiTest, BadStreamModeIs400NamingTheField) {
  std::string thread = new_thread();
  auto response = call("POST", "/threads/" + thread + "/runs/stream",
                       {{"assistant_id", "hitl"}, {"stream_mode", {"bogus"}}});
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(response.json()["detail"].get<std::string>().find("stream_mode[0]"), std::string::npos);
}

TEST_F(ServerApiTest, CreatingAnExistingThreadIs409UnlessDoNothing) {
  std::string thread = new_thread();
  EXPECT_EQ(call("POST", "/threads", {{"thread_id", thread}}).status, 409);
  auto same = call("POST", "/threads", {{"thread_id", thread}, {"if_exists", "do_nothing"}});
  EXPECT_EQ(same.status, 200);
  EXPECT_EQ(same.json()["thread_id"], thread);
}

TEST_F(ServerApiTest, SystemAssistantIsFoundByGraphIdWithTheUuid5Id) {
  auto response = call("GET", "/assistants/hitl");
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(response.json()["assistant_id"], "d2a02ed8-fb92-5e43-81ea-cb78d82caa2f");
  EXPECT_EQ(response.json()["metadata"]["created_by"], "system");
}

TEST_F(ServerApiTest, FreshThreadStateHasNullCheckpoint) {
  std::string thread = new_thread();
  auto state = call("GET", "/threads/" + thread + "/state").json();
  EXPECT_TRUE(state["checkpoint"].is_null());
  EXPECT_EQ(state["next"], Json::array());
}

TEST_F(ServerApiTest, StreamedRunStartsWithMetadataAndEndsWithTheInterruptTwice) {
  std::string thread = new_thread();
  auto response = call("POST", "/threads/" + thread + "/runs/stream",
                       {{"assistant_id", "hitl"},
                        {"input", {{"messages", {{{"role", "user"}, {"content", "hi"}}}}}},
                        {"stream_mode", {"values", "updates"}}});
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(response.header("content-type"), "text/event-stream");
  EXPECT_EQ(response.header("content-location").rfind("/threads/" + thread + "/runs/", 0), 0u);
  auto events = parse_sse(response.body);
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events[0].event, "metadata");
  EXPECT_EQ(events[0].id, "0");
  EXPECT_EQ(events[0].data["attempt"], 1);
  const auto& last = events.back();
  const auto& before_last = events[events.size() - 2];
  EXPECT_EQ(before_last.event, "updates");
  EXPECT_TRUE(before_last.data.contains("__interrupt__"));
  EXPECT_EQ(last.event, "values");
  ASSERT_EQ(last.data.size(), 1u);
  EXPECT_EQ(last.data["__interrupt__"][0]["value"]["question"], "Approve tool call delete_file?");
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].id, std::to_string(i));
}

TEST_F(ServerApiTest, StreamedTokensReadInMessagesTupleModeAsTheyWereWhenEmitted) {
  const auto [tuples, thread] = token_tuples();
  ASSERT_EQ(tuples.size(), 4u);
  EXPECT_EQ(tuples[0][0],
            (Json{{"type", "AIMessageChunk"}, {"id", "ai-1"}, {"content", "Hello "}}));
  EXPECT_EQ(tuples[1][0], (Json{{"type", "AIMessageChunk"}, {"id", "ai-1"}, {"content", "there"}}));
  const Json& metadata = tuples[0][1];
  EXPECT_EQ(metadata["langgraph_node"], "model");
  EXPECT_EQ(metadata["langgraph_checkpoint_ns"],
            "model:" + metadata["langgraph_task_id"].get<std::string>());
  EXPECT_EQ(metadata["checkpoint_ns"], metadata["langgraph_checkpoint_ns"]);
  EXPECT_EQ(metadata["thread_id"], thread);
  EXPECT_EQ(metadata["graph_id"], "tokens");
  EXPECT_EQ(tuples[1][1], metadata);
}

TEST_F(ServerApiTest, EachNodesStreamedTokensCarryItsOwnMetadata) {
  std::vector<Json> metadata;
  for (const Json& tuple : token_tuples().first) metadata.push_back(tuple[1]);
  ASSERT_EQ(metadata.size(), 4u);
  EXPECT_EQ(metadata[2]["langgraph_node"], "again");
  EXPECT_EQ(metadata[2]["langgraph_step"], 2);
  EXPECT_EQ(metadata[2]["checkpoint_ns"],
            "again:" + metadata[2]["langgraph_task_id"].get<std::string>());
  EXPECT_NE(metadata[2]["langgraph_task_id"], metadata[0]["langgraph_task_id"]);
  EXPECT_EQ(metadata[3], metadata[2]);
}

TEST_F(ServerApiTest, PausedThreadIsInterruptedWithItsInterruptInThreadAndState) {
  std::string thread = new_thread();
  auto events = run_to_interrupt(thread);
  std::string interrupt_id = events.back().data["__interrupt__"][0]["id"];
  auto t = call("GET", "/threads/" + thread).json();
  EXPECT_EQ(t["status"], "interrupted");
  EXPECT_EQ(t["metadata"]["graph_id"], "hitl");
  ASSERT_EQ(t["interrupts"].size(), 1u);
  EXPECT_EQ(t["interrupts"].begin().value()[0]["id"], interrupt_id);
  auto state = call("GET", "/threads/" + thread + "/state").json();
  EXPECT_EQ(state["next"], Json({"review"}));
  EXPECT_EQ(state["tasks"][0]["interrupts"][0]["id"], interrupt_id);
  EXPECT_EQ(state["values"]["messages"][0]["type"], "human");
  EXPECT_TRUE(state["values"]["messages"][0]["id"].is_string());
}

TEST_F(ServerApiTest, ResumeWithCommandFinishesTheRunAndTheThreadIsIdle) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  auto events = stream(thread, {{"assistant_id", "hitl"},
                                {"input", nullptr},
                                {"command", {{"resume", "approve"}}},
                                {"stream_mode", {"values"}}});
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().event, "values");
  EXPECT_EQ(events.back().data["decision"], "approve");
  auto t = call("GET", "/threads/" + thread).json();
  EXPECT_EQ(t["status"], "idle");
  EXPECT_EQ(t["interrupts"], Json::object());
  EXPECT_EQ(call("GET", "/threads/" + thread + "/state").json()["next"], Json::array());
}

TEST_F(ServerApiTest, WithoutAuthTheLocalUserStartsAndDecidesAndTheRunRecordsIt) {
  std::string thread = new_thread();
  auto resumed = pause_then_resume(thread);
  ASSERT_EQ(resumed.status, 200) << resumed.body;
  EXPECT_EQ(resumed.json()["started_by"], "local");
  EXPECT_EQ(resumed.json()["decided_by"], "local");
  auto runs = call("GET", "/threads/" + thread + "/runs").json();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["kwargs"]["decided_by"]["id"], "local");
  EXPECT_EQ(runs[1]["kwargs"]["started_by"]["id"], "local");
  EXPECT_FALSE(runs[1]["kwargs"].contains("decided_by"));
}

TEST_F(ServerApiTest, TheRunsListPagesNewestFirstAndFiltersByStatus) {
  std::string thread = new_thread();
  auto resumed = pause_then_resume(thread);
  ASSERT_EQ(resumed.status, 200) << resumed.body;
  const Json all = call("GET", "/threads/" + thread + "/runs").json();
  ASSERT_EQ(all.size(), 2u);
  const Json newest = call("GET", "/threads/" + thread + "/runs?limit=1").json();
  ASSERT_EQ(newest.size(), 1u);
  EXPECT_EQ(newest[0]["run_id"], all[0]["run_id"]);
  const Json older = call("GET", "/threads/" + thread + "/runs?limit=1&offset=1").json();
  ASSERT_EQ(older.size(), 1u);
  EXPECT_EQ(older[0]["run_id"], all[1]["run_id"]);
  EXPECT_EQ(call("GET", "/threads/" + thread + "/runs?limit=18446744073709551615").json().size(),
            2u);
  EXPECT_EQ(call("GET", "/threads/" + thread + "/runs?offset=2").json(), Json::array());
  EXPECT_EQ(call("GET", "/threads/" + thread + "/runs?status=success&offset=1").json().size(), 1u);
  EXPECT_EQ(call("GET", "/threads/" + thread + "/runs?limit=x").status, 400);
}

// A server on a ManualClock: its records are stamped with that clock's time, not the system's.
class ServerClockTest : public testing::ServerFixture {
 protected:
  ManualClock manual_{std::chrono::system_clock::time_point(std::chrono::seconds(4102444800))};
};

TEST_F(ServerClockTest, ThreadAndRunTimesComeFromTheServersClock) {
  clock_ = &manual_;
  restart();
  const std::string thread = new_thread();
  manual_.advance(std::chrono::minutes(1));
  auto run = call("POST", "/threads/" + thread + "/runs/wait",
                  {{"assistant_id", "actors"}, {"input", Json::object()}});
  ASSERT_EQ(run.status, 200) << run.body;
  const Json runs = call("GET", "/threads/" + thread + "/runs").json();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["created_at"], "2100-01-01T00:01:00.000Z");
  EXPECT_EQ(runs[0]["updated_at"], "2100-01-01T00:01:00.000Z");
  const Json read = call("GET", "/threads/" + thread).json();
  EXPECT_EQ(read["created_at"], "2100-01-01T00:00:00.000Z");
  EXPECT_EQ(read["updated_at"], "2100-01-01T00:01:00.000Z");  // the run's outcome
}

TEST_F(ServerApiTest, ResumeByInterruptIdMapWorks) {
  std::string thread = new_thread();
  std::string id = run_to_interrupt(thread).back().data["__interrupt__"][0]["id"];
  auto events =
      stream(thread, {{"assistant_id", "hitl"}, {"command", {{"resume", {{id, "mapped"}}}}}});
  EXPECT_EQ(events.back().data["decision"], "mapped");
}

TEST_F(ServerApiTest, ResumeOfAThreadThatIsNotPausedIs409AndNothingChanges) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  stream(thread, {{"assistant_id", "hitl"}, {"command", {{"resume", "approve"}}}});
  auto history_before = call("POST", "/threads/" + thread + "/history", {{"limit", 100}}).json();
  auto response = call("POST", "/threads/" + thread + "/runs/stream",
                       {{"assistant_id", "hitl"}, {"command", {{"resume", "again"}}}});
  EXPECT_EQ(response.status, 409) << response.body;
  EXPECT_EQ(call("POST", "/threads/" + thread + "/history", {{"limit", 100}}).json().size(),
            history_before.size());
  EXPECT_EQ(call("GET", "/threads/" + thread).json()["status"], "idle");
}

TEST_F(ServerApiTest, ResumeForAnUnknownInterruptIdIs409AndTheThreadStaysPaused) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  auto response = call("POST", "/threads/" + thread + "/runs/wait",
                       {{"assistant_id", "hitl"},
                        {"command", {{"resume", {{"0123456789abcdef0123456789abcdef", "x"}}}}}});
  EXPECT_EQ(response.status, 409) << response.body;
  EXPECT_EQ(call("GET", "/threads/" + thread).json()["status"], "interrupted");
}

TEST_F(ServerApiTest, WaitReturnsStateWithTheInterrupt) {
  std::string thread = new_thread();
  auto response = call("POST", "/threads/" + thread + "/runs/wait",
                       {{"assistant_id", "hitl"},
                        {"input", {{"messages", {{{"role", "user"}, {"content", "x"}}}}}}});
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_FALSE(response.header("content-location").empty());
  auto body = response.json();
  EXPECT_TRUE(body.contains("messages"));
  EXPECT_EQ(body["__interrupt__"].size(), 1u);
}

TEST_F(ServerApiTest, HistoryIsNewestFirstAndLinkedByParents) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  stream(thread, {{"assistant_id", "hitl"}, {"command", {{"resume", "ok"}}}});
  auto history = call("POST", "/threads/" + thread + "/history", {{"limit", 10}}).json();
  ASSERT_GE(history.size(), 3u);
  EXPECT_EQ(history[0]["next"], Json::array());
  for (std::size_t i = 0; i + 1 < history.size(); ++i) {
    EXPECT_EQ(history[i]["parent_checkpoint"]["checkpoint_id"],
              history[i + 1]["checkpoint"]["checkpoint_id"]);
  }
  auto before =
      call("POST", "/threads/" + thread + "/history",
           {{"limit", 10},
            {"before",
             {{"configurable", {{"checkpoint_id", history[0]["checkpoint"]["checkpoint_id"]}}}}}})
          .json();
  EXPECT_EQ(before.size(), history.size() - 1);
}

TEST_F(ServerApiTest, JoinStreamReplaysEventsAfterLastEventId) {
  std::string thread = new_thread();
  auto response =
      call("POST", "/threads/" + thread + "/runs/stream",
           {{"assistant_id", "hitl"}, {"input", Json::object()}, {"stream_resumable", true}});
  auto original = parse_sse(response.body);
  std::string location = response.header("content-location");
  auto replay = parse_sse(call("GET", location + "/stream", Json(), {{"Last-Event-ID", "0"}}).body);
  ASSERT_EQ(replay.size(), original.size() - 1);
  EXPECT_EQ(replay[0].id, "1");
  auto all = parse_sse(call("GET", location + "/stream", Json(), {{"Last-Event-ID", "-1"}}).body);
  EXPECT_EQ(all.size(), original.size());
}

TEST_F(ServerApiTest, RejectStrategyOnABusyThreadIs409) {
  std::string thread = new_thread();
  auto first = call("POST", "/threads/" + thread + "/runs",
                    {{"assistant_id", "gated"}, {"input", Json::object()}});
  ASSERT_EQ(first.status, 200);
  auto second = call("POST", "/threads/" + thread + "/runs",
                     {{"assistant_id", "gated"}, {"input", Json::object()}});
  EXPECT_EQ(second.status, 409);
  EXPECT_NE(second.json()["detail"].get<std::string>().find("already running"), std::string::npos);
}

TEST_F(ServerApiTest, EnqueuedRunStartsAfterTheFirstFinishes) {
  std::string thread = new_thread();
  auto first = call("POST", "/threads/" + thread + "/runs",
                    {{"assistant_id", "gated"}, {"input", Json::object()}})
                   .json();
  auto second =
      call(
          "POST", "/threads/" + thread + "/runs",
          {{"assistant_id", "gated"}, {"input", Json::object()}, {"multitask_strategy", "enqueue"}})
          .json();
  EXPECT_EQ(second["status"], "pending");
  gate_->open = true;
  auto joined =
      call("GET", "/threads/" + thread + "/runs/" + second["run_id"].get<std::string>() + "/join");
  EXPECT_EQ(joined.status, 200);
  EXPECT_EQ(call("GET", "/threads/" + thread + "/runs/" + first["run_id"].get<std::string>())
                .json()["status"],
            "success");
  EXPECT_EQ(call("GET", "/threads/" + thread + "/runs/" + second["run_id"].get<std::string>())
                .json()["status"],
            "success");
}

TEST_F(ServerApiTest, InterruptStrategyCancelsTheRunningRun) {
  std::string thread = new_thread();
  auto first = call("POST", "/threads/" + thread + "/runs",
                    {{"assistant_id", "gated"}, {"input", Json::object()}})
                   .json();
  for (int i = 0; i < 1000 && gate_->entered == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GT(gate_->entered, 0);
  auto second = call("POST", "/threads/" + thread + "/runs",
                     {{"assistant_id", "hitl"},
                      {"input", Json::object()},
                      {"multitask_strategy", "interrupt"}})
                    .json();
  call("GET", "/threads/" + thread + "/runs/" + second["run_id"].get<std::string>() + "/join");
  EXPECT_EQ(call("GET", "/threads/" + thread + "/runs/" + first["run_id"].get<std::string>())
                .json()["status"],
            "interrupted");
}

TEST_F(ServerApiTest, CancelWithWaitAnswers204AfterTheRunStopped) {
  std::string thread = new_thread();
  auto run = call("POST", "/threads/" + thread + "/runs",
                  {{"assistant_id", "gated"}, {"input", Json::object()}})
                 .json();
  std::string path = "/threads/" + thread + "/runs/" + run["run_id"].get<std::string>();
  auto cancel = call("POST", path + "/cancel?wait=1&action=interrupt");
  EXPECT_EQ(cancel.status, 204);
  EXPECT_EQ(call("GET", path).json()["status"], "interrupted");
  // The run has stopped once the cancel answered, so the thread is no longer busy. Whether it
  // is idle or paused depends on whether the run reached its interrupt before the cancel.
  EXPECT_NE(call("GET", "/threads/" + thread).json()["status"], "busy");
}

TEST_F(ServerApiTest, UpdateStateOnABusyThreadIs409) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  call("POST", "/threads/" + thread + "/runs",
       {{"assistant_id", "gated"}, {"input", Json::object()}, {"multitask_strategy", "enqueue"}});
  auto response = call("POST", "/threads/" + thread + "/state", {{"values", {{"decision", "x"}}}});
  EXPECT_EQ(response.status, 409);
}

TEST_F(ServerApiTest, PausedThreadSurvivesARestartAndCanBeResumed) {
  std::string thread = new_thread();
  std::string id = run_to_interrupt(thread).back().data["__interrupt__"][0]["id"];
  restart();
  auto t = call("GET", "/threads/" + thread).json();
  EXPECT_EQ(t["status"], "interrupted");
  EXPECT_EQ(t["interrupts"].begin().value()[0]["id"], id);
  auto events = stream(thread, {{"assistant_id", "hitl"}, {"command", {{"resume", "later"}}}});
  EXPECT_EQ(events.back().data["decision"], "later");
}

TEST_F(ServerApiTest, RunExecutingWhenTheProcessDiedIsMarkedErrorAtStartup) {
  std::string thread = new_thread();
  server_.reset();
  {
    SqliteStore store(db_.string());
    RunRecord run;
    run.run_id = "01a22a56-2955-72c0-878b-ce6bc760372b";
    run.thread_id = thread;
    run.assistant_id = "d2a02ed8-fb92-5e43-81ea-cb78d82caa2f";
    run.status = RunStatus::kRunning;
    store.put_run(run);
    ThreadRecord t = *store.get_thread(thread);
    t.status = ThreadStatus::kBusy;
    store.update_thread(t);
  }
  start();
  auto run =
      call("GET", "/threads/" + thread + "/runs/01a22a56-2955-72c0-878b-ce6bc760372b").json();
  EXPECT_EQ(run["status"], "error");
  auto t = call("GET", "/threads/" + thread).json();
  EXPECT_EQ(t["status"], "error");
  EXPECT_NE(t["error"].get<std::string>().find("server stopped"), std::string::npos);
  auto retry = call("POST", "/threads/" + thread + "/runs/wait",
                    {{"assistant_id", "hitl"}, {"input", Json::object()}});
  EXPECT_EQ(retry.status, 200);
}

TEST_F(ServerApiTest, DeletedThreadIsGone) {
  std::string thread = new_thread();
  run_to_interrupt(thread);
  EXPECT_EQ(call("DELETE", "/threads/" + thread).status, 204);
  EXPECT_EQ(call("GET", "/threads/" + thread).status, 404);
}

TEST_F(ServerApiTest, SearchFiltersByStatusAndMetadata) {
  std::string a = new_thread();
  call("POST", "/threads", {{"metadata", {{"owner", "ada"}}}});
  run_to_interrupt(a);
  auto interrupted = call("POST", "/threads/search", {{"status", "interrupted"}}).json();
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(interrupted[0]["thread_id"], a);
  auto owned = call("POST", "/threads/search", {{"metadata", {{"owner", "ada"}}}});
  EXPECT_EQ(owned.json().size(), 1u);
  EXPECT_EQ(owned.header("x-pagination-total"), "1");
}

TEST_F(ServerApiTest, StatelessWaitRunsOnATemporaryThread) {
  gate_->open = true;
  auto response =
      call("POST", "/runs/wait", {{"assistant_id", "gated"}, {"input", Json::object()}});
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.header("content-location").rfind("/runs/", 0), 0u);
}

TEST_F(ServerApiTest, V2RunStartCreatesTheThreadAndInputRespondResumes) {
  const std::string thread = "01a22a5f-fc6b-77b1-b535-d795c65d4ad0";
  auto started =
      call("POST", "/threads/" + thread + "/commands",
           {{"id", 1},
            {"method", "run.start"},
            {"params",
             {{"assistant_id", "hitl"},
              {"input", {{"messages", {{{"type", "human"}, {"content", "x"}, {"id", "m1"}}}}}}}}});
  ASSERT_EQ(started.status, 200);
  EXPECT_EQ(started.json()["type"], "success") << started.body;
  wait_for_status(thread, "interrupted");
  auto state = call("GET", "/threads/" + thread + "/state").json();
  EXPECT_EQ(state["values"]["messages"][0]["id"], "m1");
  std::string id = state["tasks"][0]["interrupts"][0]["id"];
  auto responded = call(
      "POST", "/threads/" + thread + "/commands",
      {{"id", 3},
       {"method", "input.respond"},
       {"params", {{"namespace", Json::array()}, {"interrupt_id", id}, {"response", "approve"}}}});
  EXPECT_EQ(responded.json()["type"], "success") << responded.body;
  wait_for_status(thread, "idle");
  EXPECT_EQ(call("GET", "/threads/" + thread + "/state").json()["values"]["decision"], "approve");
}

TEST_F(ServerApiTest, V2InputRespondOnAnIdleThreadIsAConflictWithAProtocolError) {
  std::string thread = new_thread();
  auto response = call("POST", "/threads/" + thread + "/commands",
                       {{"id", 4},
                        {"method", "input.respond"},
                        {"params", {{"interrupt_id", "x"}, {"response", 1}}}});
  EXPECT_EQ(response.status, 409);
  EXPECT_EQ(response.json()["type"], "error");
  EXPECT_EQ(response.json()["error"], "invalid_argument");
  EXPECT_EQ(response.json()["message"],
            "input.respond can only be used while the run is interrupted.");
}

TEST_F(ServerApiTest, V2UnknownCommandIsReported) {
  std::string thread = new_thread();
  auto response =
      call("POST", "/threads/" + thread + "/commands", {{"id", 5}, {"method", "agent.fly"}});
  EXPECT_EQ(response.json()["error"], "unknown_command");
}

}  // namespace
}  // namespace tollgate::server

// GET /threads/{id}/timeline over real HTTP with API-key users: a run that paused on a review,
// the run that resumed it with the reviewer's decision, the steps between, the OpenTelemetry
// form, a fork shown as a branch, and the thread's access rule.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/sha256.h"
#include "server/auth.h"
#include "server/http_test_client.h"
#include "tollgate/agent.h"
#include "tollgate/chat_model.h"
#include "tollgate/human_in_the_loop.h"
#include "tollgate/memory_saver.h"
#include "tollgate/server.h"

namespace tollgate::server {
namespace {

using testing::http_call;

// An agent whose one send_email call is reviewed, then answered "Sent.".
GraphRegistry email_agent() {
  GraphRegistry registry;
  registry.add("mail", [](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
    Tool send_email("send_email", "Send an email.",
                    Json::parse(R"({"type":"object","required":["to"],
                                    "properties":{"to":{"type":"string"}}})"),
                    [](const Json& args, const ToolContext&) {
                      return "sent to " + args["to"].get<std::string>();
                    });
    AgentOptions options;
    options.model = std::make_shared<ScriptedChatModel>(std::vector<Json>{
        Json{{"content", "I will email bob."},
             {"tool_calls", {{{"name", "send_email"}, {"args", {{"to", "bob@example.com"}}}}}},
             {"usage_metadata", {{"input_tokens", 12}, {"output_tokens", 7}, {"total_tokens", 19}}}},
        Json("Sent.")});
    options.tools = {send_email};
    options.middleware = {make_human_in_the_loop(
        {.interrupt_on = parse_interrupt_on(Json{{"send_email", true}})})};
    options.checkpointer = std::move(saver);
    return create_agent(std::move(options));
  });
  return registry;
}

AuthUser user(std::string id, std::vector<std::string> roles) {
  return AuthUser{id, "", std::move(roles), core::sha256_hex("key-" + id)};
}

class TimelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::filesystem::temp_directory_path() /
          ("tollgate_timeline_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    remove_db();
    ServerOptions options;
    options.port = 0;
    options.db_path = db_.string();
    options.checkpointer = make_memory_saver();
    options.heartbeat_seconds = 0;
    options.auth.users = {user("alice", {"user"}), user("bob", {"user"}), user("rita", {"reviewer"})};
    server_ = std::make_unique<Server>(std::move(options), email_agent());
    server_->start();
    thread_ = paused_then_resumed();
  }
  void TearDown() override {
    server_.reset();
    remove_db();
  }
  void remove_db() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_.string() + suffix);
  }
  testing::ClientResponse call(const std::string& who, const std::string& method,
                               const std::string& target, const Json& body = Json()) {
    return http_call(server_->port(), method, target, body.is_null() ? "" : body.dump(),
                     {{"x-api-key", "key-" + who}});
  }
  // alice's thread: paused on send_email, approved by rita, finished.
  std::string paused_then_resumed() {
    auto created = call("alice", "POST", "/threads", Json::object());
    EXPECT_EQ(created.status, 200) << created.body;
    const std::string thread = created.json()["thread_id"].get<std::string>();
    auto paused = call("alice", "POST", "/threads/" + thread + "/runs/wait",
                       {{"assistant_id", "mail"},
                        {"input", {{"messages", {{{"role", "user"}, {"content", "email bob"}}}}}}});
    EXPECT_EQ(paused.status, 200) << paused.body;
    auto resumed = call("rita", "POST", "/threads/" + thread + "/runs/wait",
                        {{"assistant_id", "mail"},
                         {"command", {{"resume", {{"decisions", {{{"type", "approve"}}}}}}}}});
    EXPECT_EQ(resumed.status, 200) << resumed.body;
    return thread;
  }
  Json timeline(const std::string& query = "") {
    auto response = call("alice", "GET", "/threads/" + thread_ + "/timeline" + query);
    EXPECT_EQ(response.status, 200) << response.body;
    return response.json();
  }
  // The run's first step of `kind`; null when it has none.
  static Json step_of(const Json& run, const std::string& kind) {
    for (const Json& step : run.at("steps")) {
      if (step.at("kind") == kind) return step;
    }
    return Json();
  }

  std::filesystem::path db_;
  std::unique_ptr<Server> server_;
  std::string thread_;
};

TEST_F(TimelineTest, TheRunThatResumedIsLinkedToTheRunThatPaused) {
  Json t = timeline();
  ASSERT_EQ(t["runs"].size(), 2u) << t.dump(2);
  EXPECT_TRUE(t["runs"][0]["paused_at_checkpoint_id"].is_string());
  EXPECT_TRUE(t["runs"][1]["paused_at_checkpoint_id"].is_null());
  EXPECT_EQ(t["runs"][1]["status"], "success");
  EXPECT_EQ(t["runs"][1]["kind"], "resume");
  EXPECT_EQ(t["runs"][1]["resumed_run_id"], t["runs"][0]["run_id"]);
  EXPECT_EQ(t["runs"][0]["resumed_by_run_ids"], Json::array({t["runs"][1]["run_id"]}));
}

TEST_F(TimelineTest, EachRunNamesWhoStartedItAndWhoDecided) {
  Json t = timeline();
  EXPECT_EQ(t["runs"][0]["started_by"], "alice");
  EXPECT_EQ(t["runs"][1]["started_by"], "alice");
  EXPECT_EQ(t["runs"][1]["decided_by"], "rita");
}

TEST_F(TimelineTest, TheInterruptShowsTheGatedCallAndTheReviewersDecision) {
  Json t = timeline();
  Json pause = step_of(t["runs"][0], "interrupt");
  ASSERT_FALSE(pause.is_null()) << t.dump(2);
  EXPECT_EQ(pause["gated"][0]["name"], "send_email");
  EXPECT_EQ(pause["gated"][0]["args"]["to"], "bob@example.com");
  ASSERT_EQ(pause["decisions"].size(), 1u);
  Json decision = pause["decisions"][0];
  EXPECT_EQ(decision["decided_by"], "rita");
  EXPECT_EQ(decision["outcome"], "applied");
  EXPECT_EQ(decision["decided"]["decisions"][0]["type"], "approve");
  EXPECT_TRUE(decision["received_at"].is_string());
  EXPECT_EQ(t["runs"][1]["started_from_checkpoint_id"], pause["checkpoint_id"]);
}

TEST_F(TimelineTest, TheModelCallShowsItsInputOutputAndTokens) {
  Json t = timeline();
  Json model = step_of(t["runs"][0], "model_call");
  ASSERT_FALSE(model.is_null()) << t.dump(2);
  EXPECT_EQ(model["input"]["message_count"], 1);
  EXPECT_EQ(model["output"]["tool_calls"][0]["name"], "send_email");
  EXPECT_EQ(model["usage"]["output_tokens"], 7);
  EXPECT_TRUE(model["started_at"].is_string());
  EXPECT_TRUE(model["checkpoint_id"].is_string());
}

TEST_F(TimelineTest, TheApprovedToolCallRunsInTheResumedRunWithItsResult) {
  Json t = timeline();
  Json tool = step_of(t["runs"][1], "tool_call");
  ASSERT_FALSE(tool.is_null()) << t.dump(2);
  EXPECT_EQ(tool["name"], "send_email");
  EXPECT_EQ(tool["args"]["to"], "bob@example.com");
  EXPECT_EQ(tool["result"], "sent to bob@example.com");
  EXPECT_EQ(tool["answered_by"], "tool");
  EXPECT_TRUE(step_of(t["runs"][0], "tool_call").is_null());
}

TEST_F(TimelineTest, AnotherUsersThreadIs404) {
  EXPECT_EQ(call("bob", "GET", "/threads/" + thread_ + "/timeline").status, 404);
  EXPECT_EQ(call("bob", "GET", "/threads/" + thread_ + "/timeline?format=otel").status, 404);
}

TEST_F(TimelineTest, AnUnknownFormatIs400NamingTheField) {
  auto response = call("alice", "GET", "/threads/" + thread_ + "/timeline?format=xml");
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(response.body.find("format:"), std::string::npos) << response.body;
}

TEST_F(TimelineTest, TheOtelFormIsOneTraceWithASpanPerRunAndChildSpansPerStep) {
  Json t = timeline();
  Json otel = timeline("?format=otel");
  Json& spans = otel["resourceSpans"][0]["scopeSpans"][0]["spans"];
  std::string trace = thread_;
  std::erase(trace, '-');
  std::size_t roots = 0;
  std::size_t steps = t["runs"][0]["steps"].size() + t["runs"][1]["steps"].size();
  for (Json& span : spans) {
    EXPECT_EQ(span["traceId"], trace);
    EXPECT_EQ(span["spanId"].get<std::string>().size(), 16u);
    EXPECT_TRUE(span["startTimeUnixNano"].is_string());
    if (span["parentSpanId"] == "") ++roots;
  }
  EXPECT_EQ(roots, 2u);
  EXPECT_EQ(spans.size(), 2 + steps);
  EXPECT_EQ(spans[1]["parentSpanId"], spans[0]["spanId"]);
}

TEST_F(TimelineTest, AForkFromAnEarlierCheckpointIsABranchNamingWhoWroteIt) {
  Json before = timeline();
  Json pause = step_of(before["runs"][0], "interrupt");
  ASSERT_FALSE(pause.is_null());
  auto fork = call("alice", "POST", "/threads/" + thread_ + "/state",
                   {{"values", {{"messages", Json::array()}}},
                    {"checkpoint", {{"checkpoint_id", pause["checkpoint_id"]}}}});
  ASSERT_EQ(fork.status, 200) << fork.body;
  const std::string forked = fork.json()["checkpoint"]["checkpoint_id"].get<std::string>();
  Json after = timeline();
  Json last = after["checkpoints"].back();
  EXPECT_EQ(last["checkpoint_id"], forked);
  EXPECT_EQ(last["parent_checkpoint_id"], pause["checkpoint_id"]);
  EXPECT_TRUE(last["branch"].get<bool>());
  ASSERT_EQ(after["state_updates"].size(), 1u);
  EXPECT_TRUE(after["state_updates"][0]["fork"].get<bool>());
  EXPECT_EQ(after["state_updates"][0]["by"], "alice");
}

}  // namespace
}  // namespace tollgate::server

// The effect ledger (docs/effects.md): a tool call's intent is stored before the tool runs; a
// step re-run after the call's result was lost does not run the tool blindly but pauses with an
// effect_uncertain review; approve, reject and respond; idempotent tools and their keys; a new
// message on a thread waiting on that review is not told the call was cancelled. On the memory
// saver and the SQLite saver, the process-ending seam (TOLLGATE_FAULT) on SQLite; built again
// for the postgres tier (TOLLGATE_LEDGER_ON_POSTGRES), where all of it runs on the PostgreSQL
// saver, each test in a schema of its own.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "support/forwarding_saver.h"
#include "support/postgres_test_server.h"
#include "support/test_folder.h"
#include "tollgate/agent.h"
#include "tollgate/effect_intents.h"
#include "tollgate/error.h"
#include "tollgate/human_in_the_loop.h"
#include "tollgate/memory_saver.h"
#include "tollgate/messages.h"
#include "tollgate/middleware.h"
#include "tollgate/postgres_saver.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate {
namespace {

// Loses the result of a tool call: the first put_writes of a ToolMessage fails, as if the
// process had stopped right after the tool returned. Everything else passes.
class ResultLosingSaver final : public testing::ForwardingSaver {
 public:
  using ForwardingSaver::ForwardingSaver;

  void arm() { armed_ = true; }

  void put_writes(const CheckpointConfig& config,
                  const std::vector<std::pair<std::string, Json>>& writes,
                  const std::string& task_id, const std::string& task_path = "") override {
    {
      std::lock_guard lock(mutex_);
      if (armed_ && carries_tool_result(writes)) {
        armed_ = false;
        throw Error::Unavailable("the process stopped (lost result)");
      }
    }
    ForwardingSaver::put_writes(config, writes, task_id, task_path);
  }

 private:
  static bool carries_tool_result(const std::vector<std::pair<std::string, Json>>& writes) {
    for (const auto& [channel, value] : writes) {
      if (channel == "messages" && value.is_array() && !value.empty() &&
          value[0].value("type", "") == "tool") {
        return true;
      }
    }
    return false;
  }

  std::mutex mutex_;  // guards armed_
  bool armed_ = false;
};

// A tool with an effect it counts, and the idempotency keys it was called with.
struct Effects {
  std::atomic<int> runs{0};
  std::mutex mutex;
  std::vector<std::string> keys;
  // Set by the tool: whether its intent was already stored when it ran.
  std::atomic<bool> intent_seen_before_run{false};
};

Tool counting_tool(std::shared_ptr<Effects> effects, std::shared_ptr<Saver> saver,
                   bool idempotent = false) {
  return Tool(
      "send_email", "Sends an email.",
      Json{{"type", "object"}, {"properties", {{"to", {{"type", "string"}}}}}},
      [effects, saver](const Json& args, const ToolContext& context) -> Json {
        if (saver) {
          auto tuple = saver->get_tuple(CheckpointConfig{"t1", "", ""});
          for (const auto& write : tuple ? tuple->pending_writes : std::vector<PendingWrite>{}) {
            if (write.channel == kIntentChannel && write.value.contains(context.tool_call_id)) {
              effects->intent_seen_before_run = true;
            }
          }
        }
        effects->runs += 1;
        std::lock_guard lock(effects->mutex);
        effects->keys.push_back(context.idempotency_key);
        return "sent to " + args.value("to", std::string("?"));
      },
      ToolOptions{idempotent});
}

Json script_call() {
  return Json{{"id", "ai-1"},
              {"content", ""},
              {"tool_calls", {{{"id", "call-1"}, {"name", "send_email"}, {"args", {{"to", "bob"}}}}}}};
}

Json input() {
  return Json{{"messages", {human_message("mail bob", "h1")}}};
}

// The Command answering the effect_uncertain review with `one` decision.
Command decision(Json one) {
  Command command;
  command.resume = Json{{"decisions", Json::array({std::move(one)})}};
  return command;
}

enum class SaverKind { kMemory, kSqlite, kPostgres };

class EffectLedger : public ::testing::TestWithParam<SaverKind> {
 protected:
  void SetUp() override {
    switch (GetParam()) {
      case SaverKind::kMemory:
        inner_ = make_memory_saver();
        break;
      case SaverKind::kSqlite:
        inner_ = open_sqlite_saver((folder_.path() / "t.db").string());
        break;
      case SaverKind::kPostgres:
        TOLLGATE_REQUIRE_POSTGRES();
        schema_ = std::make_unique<testing::ScratchSchema>();
        inner_ = open_postgres_saver(testing::test_postgres_url(), {.schema = schema_->name()});
        break;
    }
    saver_ = std::make_shared<ResultLosingSaver>(inner_);
  }

  std::shared_ptr<CompiledGraph> agent(bool idempotent = false, Durability durability = Durability::kSync,
                                       std::vector<Json> more_replies = {},
                                       std::optional<Json> interrupt_on = std::nullopt) {
    durability_ = durability;
    AgentOptions options;
    std::vector<Json> replies{script_call(), Json("done")};
    replies.insert(replies.end(), more_replies.begin(), more_replies.end());
    options.model = std::make_shared<ScriptedChatModel>(std::move(replies));
    options.tools = {counting_tool(effects_, inner_, idempotent)};
    options.checkpointer = saver_;
    options.middleware = {make_patch_tool_calls()};
    if (interrupt_on) {
      HumanInTheLoopOptions gate;
      gate.interrupt_on = parse_interrupt_on(*interrupt_on);
      options.middleware.push_back(make_human_in_the_loop(std::move(gate)));
    }
    return create_agent(std::move(options));
  }

  RunConfig config() const {
    RunConfig config;
    config.thread_id = "t1";
    config.durability = durability_;
    config.decided_by = RunActor{"rita", "", {"reviewer"}};
    return config;
  }

  // Runs the agent until the tool ran and its result was lost, then runs the step again.
  RunResult lose_result_and_rerun(const CompiledGraph& graph) {
    saver_->arm();
    EXPECT_THROW(graph.invoke(input(), config()), Error);
    EXPECT_EQ(effects_->runs.load(), 1);
    return graph.invoke(Json(), config());
  }

  static const Json& tool_message_of(const RunResult& result) {
    const Json& messages = result.values["messages"];
    for (const Json& message : messages) {
      if (message.value("type", "") == "tool") return message;
    }
    static const Json kNone;
    return kNone;
  }

  testing::TestFolder folder_{"ledger"};
  std::unique_ptr<testing::ScratchSchema> schema_;  // before the savers: dropped after them
  std::shared_ptr<Saver> inner_;
  std::shared_ptr<ResultLosingSaver> saver_;
  std::shared_ptr<Effects> effects_ = std::make_shared<Effects>();
  Durability durability_ = Durability::kSync;
};

TEST_P(EffectLedger, TheIntentIsStoredBeforeTheToolRuns) {
  agent()->invoke(input(), config());
  EXPECT_EQ(effects_->runs.load(), 1);
  EXPECT_TRUE(effects_->intent_seen_before_run.load());
}

TEST_P(EffectLedger, TheIntentIsStoredBeforeTheToolRunsUnderExitDurability) {
  agent(false, Durability::kExit)->invoke(input(), config());
  EXPECT_TRUE(effects_->intent_seen_before_run.load());
}

TEST_P(EffectLedger, TheIntentIsStoredBeforeTheToolRunsUnderAsyncDurability) {
  agent(false, Durability::kAsync)->invoke(input(), config());
  EXPECT_TRUE(effects_->intent_seen_before_run.load());
}

TEST_P(EffectLedger, TheIntentNamesTheCallAndWhoDecided) {
  const auto graph = agent();
  lose_result_and_rerun(*graph);
  auto tuple = inner_->get_tuple(CheckpointConfig{"t1", "", ""});
  ASSERT_TRUE(tuple);
  Json intent;
  for (const auto& write : tuple->pending_writes) {
    if (write.channel == kIntentChannel) intent = write.value["call-1"];
  }
  EXPECT_EQ(intent["tool_call_id"], "call-1");
  EXPECT_EQ(intent["name"], "send_email");
  EXPECT_EQ(intent["thread_id"], "t1");
  EXPECT_EQ(intent["digest"], tool_call_digest("send_email", Json{{"to", "bob"}}));
  EXPECT_EQ(intent["decided_by"]["id"], "rita");
}

TEST_P(EffectLedger, ALostResultPausesWithAnEffectUncertainReviewInsteadOfRunningAgain) {
  const RunResult result = lose_result_and_rerun(*agent());
  EXPECT_EQ(effects_->runs.load(), 1);
  ASSERT_EQ(result.interrupts.size(), 1u);
  const Json& review = result.interrupts[0].value;
  EXPECT_EQ(review["review_configs"][0]["reason"], "effect_uncertain");
  EXPECT_EQ(review["review_configs"][0]["allowed_decisions"],
            Json::array({"approve", "reject", "respond"}));
  EXPECT_EQ(review["action_requests"][0]["name"], "send_email");
  EXPECT_NE(review["action_requests"][0]["description"].get<std::string>().find(
                "started before the server stopped and may have run"),
            std::string::npos);
}

TEST_P(EffectLedger, TheUncertainReviewAsksTheReviewersOfTheCallsOwnReview) {
  const auto graph =
      agent(false, Durability::kSync, {},
            Json{{"send_email", {{"allowed_decisions", {"approve", "reject"}},
                                 {"reviewers", {"role:admin"}},
                                 {"self_approval", false},
                                 {"approvals_required", 2}}}});
  const RunResult paused = graph->invoke(input(), config());
  ASSERT_EQ(paused.interrupts.size(), 1u);
  saver_->arm();
  EXPECT_THROW(graph->invoke(decision({{"type", "approve"}}), config()), Error);
  ASSERT_EQ(effects_->runs.load(), 1);
  const RunResult uncertain = graph->invoke(Json(), config());
  ASSERT_EQ(uncertain.interrupts.size(), 1u);
  const Json& review_config = uncertain.interrupts[0].value["review_configs"][0];
  EXPECT_EQ(review_config["reason"], "effect_uncertain");
  EXPECT_EQ(review_config["reviewers"], Json::array({"role:admin"}));
  EXPECT_EQ(review_config["self_approval"], false);
  EXPECT_EQ(review_config["approvals_required"], 2);
  EXPECT_EQ(effects_->runs.load(), 1);
}

TEST_P(EffectLedger, TheUncertainReviewOfACallWithDefaultRulesNamesNoReviewers) {
  const RunResult result = lose_result_and_rerun(*agent());
  ASSERT_EQ(result.interrupts.size(), 1u);
  EXPECT_FALSE(result.interrupts[0].value["review_configs"][0].contains("reviewers"));
}

TEST_P(EffectLedger, ApproveRunsTheCallAgainWithTheSameIdempotencyKey) {
  const auto graph = agent();
  lose_result_and_rerun(*graph);
  const RunResult done =
      graph->invoke(decision({{"type", "approve"}}), config());
  EXPECT_FALSE(done.paused);
  ASSERT_EQ(effects_->runs.load(), 2);
  EXPECT_EQ(effects_->keys[0], effects_->keys[1]);
  EXPECT_EQ(tool_message_of(done)["content"], "sent to bob");
}

TEST_P(EffectLedger, RejectTellsTheModelTheCallDidNotHappen) {
  const auto graph = agent();
  lose_result_and_rerun(*graph);
  const RunResult done = graph->invoke(
      decision({{"type", "reject"}, {"message", "bob never got it"}}), config());
  EXPECT_EQ(effects_->runs.load(), 1);
  const Json& message = tool_message_of(done);
  EXPECT_EQ(message["status"], "error");
  EXPECT_NE(message["content"].get<std::string>().find("decided it did not happen"),
            std::string::npos);
  EXPECT_NE(message["content"].get<std::string>().find("bob never got it"), std::string::npos);
}

TEST_P(EffectLedger, RespondMakesTheReviewersTextTheResult) {
  const auto graph = agent();
  lose_result_and_rerun(*graph);
  const RunResult done = graph->invoke(
      decision({{"type", "respond"}, {"message", "it was sent at 10:02"}}),
      config());
  EXPECT_EQ(effects_->runs.load(), 1);
  EXPECT_EQ(tool_message_of(done)["content"], "it was sent at 10:02");
  EXPECT_EQ(tool_message_of(done)["status"], "success");
}

TEST_P(EffectLedger, AnEditIsRefusedAndTheReviewStaysPending) {
  const auto graph = agent();
  lose_result_and_rerun(*graph);
  const Json edit = {{"type", "edit"},
                     {"edited_action", {{"name", "send_email"}, {"args", {{"to", "eve"}}}}}};
  EXPECT_THROW(graph->invoke(decision(edit), config()), Error);
  const StateSnapshot state = graph->get_state(config());
  ASSERT_EQ(state.interrupts.size(), 1u);
  EXPECT_EQ(state.interrupts[0].value["review_configs"][0]["reason"], "effect_uncertain");
  EXPECT_EQ(effects_->runs.load(), 1);
}

TEST_P(EffectLedger, AnIdempotentToolIsRunAgainAutomaticallyWithTheSameKey) {
  const RunResult result = lose_result_and_rerun(*agent(/*idempotent=*/true));
  EXPECT_FALSE(result.paused);
  ASSERT_EQ(effects_->runs.load(), 2);
  EXPECT_EQ(effects_->keys[0], effects_->keys[1]);
}

TEST_P(EffectLedger, AFinishedCallIsNotReviewedAgain) {
  const auto graph = agent();
  const RunResult result = graph->invoke(input(), config());
  EXPECT_FALSE(result.paused);
  EXPECT_EQ(effects_->runs.load(), 1);
}

TEST_P(EffectLedger, ANewMessageOnAThreadWaitingOnTheReviewIsToldTheCallMayHaveRun) {
  const auto graph = agent(false, Durability::kSync, {Json("noted")});
  lose_result_and_rerun(*graph);
  const RunResult done =
      graph->invoke(Json{{"messages", {human_message("what happened?", "h2")}}}, config());
  EXPECT_FALSE(done.paused);
  EXPECT_EQ(effects_->runs.load(), 1);
  const std::string text = tool_message_of(done)["content"].get<std::string>();
  EXPECT_NE(text.find("may or may not have run"), std::string::npos) << text;
  EXPECT_EQ(text.find("cancelled"), std::string::npos) << text;
}

TEST_P(EffectLedger, ANewMessageOnAThreadPausedBeforeTheCallStartedIsToldItWasCancelled) {
  AgentOptions options;
  options.model = std::make_shared<ScriptedChatModel>(std::vector<Json>{script_call(), Json("ok")});
  options.tools = {counting_tool(effects_, nullptr)};
  options.checkpointer = saver_;
  options.middleware = {make_patch_tool_calls(),
                        make_human_in_the_loop({.interrupt_on = parse_interrupt_on(
                                                    Json{{"send_email", true}})})};
  const auto graph = create_agent(std::move(options));
  ASSERT_TRUE(graph->invoke(input(), config()).paused);
  const RunResult done =
      graph->invoke(Json{{"messages", {human_message("never mind", "h2")}}}, config());
  EXPECT_EQ(effects_->runs.load(), 0);
  EXPECT_NE(tool_message_of(done)["content"].get<std::string>().find("was cancelled"),
            std::string::npos);
}

const char* saver_name(const ::testing::TestParamInfo<SaverKind>& info) {
  switch (info.param) {
    case SaverKind::kMemory: return "Memory";
    case SaverKind::kSqlite: return "Sqlite";
    case SaverKind::kPostgres: return "Postgres";
  }
  return "?";
}

#ifdef TOLLGATE_LEDGER_ON_POSTGRES
INSTANTIATE_TEST_SUITE_P(Savers, EffectLedger, ::testing::Values(SaverKind::kPostgres), saver_name);
#else
INSTANTIATE_TEST_SUITE_P(Savers, EffectLedger,
                         ::testing::Values(SaverKind::kMemory, SaverKind::kSqlite), saver_name);

TEST(IdempotencyKey, IsTheSameForTheSameCallAndDiffersByThreadCallAndArguments) {
  const std::string digest = tool_call_digest("send_email", Json{{"to", "bob"}});
  const std::string key = idempotency_key("t1", "call-1", digest);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, idempotency_key("t1", "call-1", digest));
  EXPECT_NE(key, idempotency_key("t2", "call-1", digest));
  EXPECT_NE(key, idempotency_key("t1", "call-2", digest));
  EXPECT_NE(key, idempotency_key("t1", "call-1", tool_call_digest("send_email", Json{{"to", "eve"}})));
}

TEST(IdempotencyKey, IsHandedToTheToolOutsideAGraphToo) {
  std::string seen;
  Tool tool("echo", "", Json::object(), [&seen](const Json&, const ToolContext& context) -> Json {
    seen = context.idempotency_key;
    return "ok";
  });
  run_tool_call(Json{{"id", "c1"}, {"name", "echo"}, {"args", Json::object()}}, {tool}, {});
  EXPECT_EQ(seen, idempotency_key("", "c1", tool_call_digest("echo", Json::object())));
}
#endif

// TEST SEAM: TOLLGATE_FAULT ends the process at the planned point. The death test re-runs this
// binary (whose tool seam reads the variable afresh) and the child inherits, through
// `variable`, the parent's database path (the PostgreSQL schema in the postgres tier).
class FaultSeam : public ::testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
#ifdef TOLLGATE_LEDGER_ON_POSTGRES
    TOLLGATE_REQUIRE_POSTGRES();
#endif
  }

  void TearDown() override {
    if (!owned_variable_.empty()) unsetenv(owned_variable_.c_str());
  }

  // The parent makes (and drops) the database; the death-test children, which re-run the test
  // from its start and are killed, inherit its name.
  std::string shared_db(const char* variable) {
    if (std::getenv(variable) == nullptr) {
#ifdef TOLLGATE_LEDGER_ON_POSTGRES
      schema_ = std::make_unique<testing::ScratchSchema>();
      setenv(variable, schema_->name().c_str(), /*overwrite=*/1);
#else
      folder_.emplace("seam");
      setenv(variable, (folder_->path() / "t.db").c_str(), /*overwrite=*/1);
#endif
      owned_variable_ = variable;
    }
    return std::getenv(variable);
  }

  static std::shared_ptr<Saver> open_saver(const std::string& db) {
#ifdef TOLLGATE_LEDGER_ON_POSTGRES
    return open_postgres_saver(testing::test_postgres_url(), {.schema = db});
#else
    return open_sqlite_saver(db);
#endif
  }

  RunResult run_agent(const std::string& db, Json model_reply, const Json& graph_input) {
    AgentOptions options;
    options.model = std::make_shared<ScriptedChatModel>(std::vector<Json>{std::move(model_reply), Json("done")});
    options.tools = {counting_tool(effects_, nullptr)};
    options.checkpointer = open_saver(db);
    RunConfig config;
    config.thread_id = "t1";
    return create_agent(std::move(options))->invoke(graph_input, config);
  }

  std::optional<testing::TestFolder> folder_;  // the parent's only
  std::unique_ptr<testing::ScratchSchema> schema_;
  std::string owned_variable_;
  std::shared_ptr<Effects> effects_ = std::make_shared<Effects>();
};

TEST_F(FaultSeam, CrashAfterToolEndsTheProcessBeforeTheResultIsSavedAndTheRerunReviews) {
  const std::string db = shared_db("TOLLGATE_TEST_SEAM_DB_AFTER");
  EXPECT_EXIT(
      {
        setenv("TOLLGATE_FAULT", "crash_after_tool:send_email", 1);
        run_agent(db, script_call(), input());
      },
      ::testing::ExitedWithCode(137), "");
  const RunResult result = run_agent(db, Json("done"), Json());
  EXPECT_EQ(effects_->runs.load(), 0);
  ASSERT_EQ(result.interrupts.size(), 1u);
  EXPECT_EQ(result.interrupts[0].value["review_configs"][0]["reason"], "effect_uncertain");
}

TEST_F(FaultSeam, CrashBeforeToolLeavesNothingUncertainAndTheRerunRunsIt) {
  const std::string db = shared_db("TOLLGATE_TEST_SEAM_DB_BEFORE");
  EXPECT_EXIT(
      {
        setenv("TOLLGATE_FAULT", "crash_before_tool:send_email", 1);
        run_agent(db, script_call(), input());
      },
      ::testing::ExitedWithCode(137), "");
  const RunResult result = run_agent(db, Json("done"), Json());
  EXPECT_FALSE(result.paused);
  EXPECT_EQ(effects_->runs.load(), 1);
}

}  // namespace
}  // namespace tollgate

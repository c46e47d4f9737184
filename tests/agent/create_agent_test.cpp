// create_agent: graph shape, middleware order and jumps, tool execution, streaming.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "tollgate/agent.h"
#include "tollgate/error.h"
#include "tollgate/memory_saver.h"
#include "tollgate/messages.h"
#include "tollgate/middleware.h"

namespace tollgate {
namespace {

Tool echo_tool(const std::string& name = "echo") {
  return Tool(name, "Echoes its text.",
              Json{{"type", "object"},
                   {"properties", {{"text", {{"type", "string"}}}}},
                   {"required", {"text"}}},
              [](const Json& args, const ToolContext&) -> Json {
                return "echo: " + args["text"].get<std::string>();
              });
}

Json call(const std::string& id, const std::string& text) {
  return Json{{"id", id}, {"name", "echo"}, {"args", {{"text", text}}}};
}

Json reply_with_calls(std::string id, Json calls) {
  return Json{{"id", std::move(id)}, {"content", ""}, {"tool_calls", std::move(calls)}};
}

Json input(const std::string& text) {
  return Json{{"messages", {human_message(text, "h1")}}};
}

// Records the order in which its hooks and wrappers run, in a log shared by several instances.
struct OrderLog {
  std::mutex mutex;
  std::vector<std::string> entries;
  void add(std::string e) {
    std::lock_guard lock(mutex);
    entries.push_back(std::move(e));
  }
};

class RecordingMiddleware : public AgentMiddleware {
 public:
  RecordingMiddleware(std::string name, std::shared_ptr<OrderLog> log, unsigned hooks)
      : name_(std::move(name)), log_(std::move(log)), hooks_(hooks) {}
  std::string name() const override { return name_; }
  unsigned hooks() const override { return hooks_; }
  std::optional<HookResult> before_agent(const HookContext&) const override {
    return record("before_agent");
  }
  std::optional<HookResult> before_model(const HookContext&) const override {
    return record("before_model");
  }
  std::optional<HookResult> after_model(const HookContext&) const override {
    return record("after_model");
  }
  std::optional<HookResult> after_agent(const HookContext&) const override {
    return record("after_agent");
  }
  Json wrap_model_call(const ModelCallRequest& r, const ModelCallHandler& next) const override {
    log_->add(name_ + ".wrap_model_call");
    return next(r);
  }
  Json wrap_tool_call(const ToolCallRequest& r, const ToolCallHandler& next) const override {
    log_->add(name_ + ".wrap_tool_call");
    return next(r);
  }

 private:
  std::optional<HookResult> record(const char* hook) const {
    log_->add(name_ + "." + hook);
    return std::nullopt;
  }
  std::string name_;
  std::shared_ptr<OrderLog> log_;
  unsigned hooks_;
};

class EndBeforeModel : public AgentMiddleware {
 public:
  std::string name() const override { return "Guard"; }
  unsigned hooks() const override { return kBeforeModel; }
  std::vector<JumpTo> can_jump_to(Hook) const override { return {JumpTo::kEnd}; }
  std::optional<HookResult> before_model(const HookContext&) const override {
    return HookResult{{{"messages", {ai_message("blocked by guard", Json::array(), "guard-1")}}},
                      JumpTo::kEnd};
  }
};

AgentOptions options_with(std::vector<Json> script, std::vector<Tool> tools = {echo_tool()}) {
  AgentOptions options;
  options.model = std::make_shared<ScriptedChatModel>(std::move(script));
  options.tools = std::move(tools);
  return options;
}

TEST(CreateAgent, RequiresAModel) {
  AgentOptions options;
  try {
    create_agent(std::move(options));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), "create_agent: model is required");
  }
}

TEST(CreateAgent, RefusesTheSameMiddlewareTwice) {
  AgentOptions options = options_with({Json("hi")});
  options.middleware = {make_patch_tool_calls(), make_patch_tool_calls()};
  EXPECT_THROW(
      {
        try {
          create_agent(std::move(options));
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "Middleware PatchToolCallsMiddleware is defined multiple times");
          throw;
        }
      },
      Error);
}

TEST(CreateAgent, RefusesDuplicateToolNames) {
  EXPECT_THROW(create_agent(options_with({Json("hi")}, {echo_tool(), echo_tool()})), Error);
}

std::string construction_error(AgentOptions options) {
  try {
    create_agent(std::move(options));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

TEST(CreateAgent, RefusesAReviewPolicyForAToolItLacksNamingTheKnownOnes) {
  AgentOptions options = options_with({Json("hi")}, {echo_tool(), echo_tool("shout")});
  HumanInTheLoopOptions hitl;
  hitl.interrupt_on = parse_interrupt_on({{"ecoh", true}});
  options.middleware = {make_human_in_the_loop(std::move(hitl))};
  EXPECT_EQ(construction_error(std::move(options)),
            "interrupt_on.ecoh: unknown tool 'ecoh' (the agent's tools: echo, shout)");
}

TEST(CreateAgent, RefusesAnAutoApprovalForAToolItLacks) {
  AgentOptions options = options_with({Json("hi")});
  HumanInTheLoopOptions hitl;
  hitl.interrupt_on["missing"] = ToolReviewPolicy::auto_approve();
  options.middleware = {make_human_in_the_loop(std::move(hitl))};
  EXPECT_EQ(construction_error(std::move(options)),
            "interrupt_on.missing: unknown tool 'missing' (the agent's tools: echo)");
}

TEST(CreateAgent, HitlWithGivenToolsRefusesAnUnknownToolAtOnce) {
  HumanInTheLoopOptions hitl;
  hitl.interrupt_on = parse_interrupt_on({{"ecoh", true}});
  try {
    make_human_in_the_loop(std::move(hitl), {echo_tool()});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(), "interrupt_on.ecoh: unknown tool 'ecoh' (the agent's tools: echo)");
  }
}

TEST(CreateAgent, HitlWithGivenToolsAcceptsAPolicyForThem) {
  HumanInTheLoopOptions hitl;
  hitl.interrupt_on = parse_interrupt_on({{"echo", true}});
  EXPECT_NE(make_human_in_the_loop(std::move(hitl), {echo_tool()}), nullptr);
}

TEST(CreateAgent, HasOneNodePerImplementedHook) {
  AgentOptions options = options_with({Json("hi")});
  options.middleware = {make_patch_tool_calls(), make_human_in_the_loop({})};
  const auto agent = create_agent(std::move(options));
  std::vector<std::string> names = agent->node_names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{"HumanInTheLoopMiddleware.after_model",
                                      "PatchToolCallsMiddleware.before_agent", "model", "tools"}));
}

TEST(CreateAgent, AnswerWithoutToolCallsEndsTheRun) {
  const auto agent = create_agent(options_with({Json{{"id", "ai-1"}, {"content", "hello"}}}));
  const RunResult result = agent->invoke(input("hi"));
  ASSERT_EQ(result.values["messages"].size(), 2u);
  EXPECT_EQ(result.values["messages"][1]["content"], "hello");
  EXPECT_FALSE(result.paused);
}

TEST(CreateAgent, SystemPromptIsSentFirstButNotStored) {
  auto model = std::make_shared<ScriptedChatModel>(std::vector<Json>{Json("hello")});
  AgentOptions options;
  options.model = model;
  options.system_prompt = "Be brief.";
  const RunResult result = create_agent(std::move(options))->invoke(input("hi"));
  ASSERT_EQ(model->requests().size(), 1u);
  EXPECT_EQ(message_type(model->requests()[0].messages[0]), "system");
  EXPECT_EQ(message_text(model->requests()[0].messages[0]), "Be brief.");
  EXPECT_EQ(message_type(result.values["messages"][0]), "human");
}

// Records where the first history message lives, as the wrapper and the model see it.
struct HistoryAddresses {
  const Json* in_state = nullptr;
  const Json* in_wrapper_request = nullptr;
  const Json* in_model_request = nullptr;
};

class AddressRecordingWrapper : public AgentMiddleware {
 public:
  explicit AddressRecordingWrapper(std::shared_ptr<HistoryAddresses> seen) : seen_(std::move(seen)) {}
  std::string name() const override { return "AddressRecordingWrapper"; }
  unsigned hooks() const override { return kWrapModelCall; }
  Json wrap_model_call(const ModelCallRequest& r, const ModelCallHandler& next) const override {
    seen_->in_state = &(*r.state)["messages"][0];
    seen_->in_wrapper_request = &r.messages[0];
    return next(r);
  }

 private:
  std::shared_ptr<HistoryAddresses> seen_;
};

class AddressRecordingModel : public ChatModel {
 public:
  explicit AddressRecordingModel(std::shared_ptr<HistoryAddresses> seen) : seen_(std::move(seen)) {}
  Json invoke(const ChatRequest& request, const TokenCallback*) override {
    seen_->in_model_request = &request.messages[1];  // [0] is the system prompt
    return ai_message("hello", Json::array(), "ai-1");
  }
  std::string name() const override { return "test:address-recording"; }

 private:
  std::shared_ptr<HistoryAddresses> seen_;
};

TEST(CreateAgent, TheModelIsGivenTheThreadsHistoryNotACopy) {
  auto seen = std::make_shared<HistoryAddresses>();
  AgentOptions options;
  options.model = std::make_shared<AddressRecordingModel>(seen);
  options.system_prompt = "Be brief.";
  options.middleware = {std::make_shared<AddressRecordingWrapper>(seen)};
  create_agent(std::move(options))->invoke(input("hi"));
  ASSERT_NE(seen->in_state, nullptr);
  EXPECT_EQ(seen->in_wrapper_request, seen->in_state);
  EXPECT_EQ(seen->in_model_request, seen->in_state);
}

TEST(CreateAgent, ToolsAreOfferedToTheModel) {
  auto model = std::make_shared<ScriptedChatModel>(std::vector<Json>{Json("hello")});
  AgentOptions options;
  options.model = model;
  options.tools = {echo_tool()};
  create_agent(std::move(options))->invoke(input("hi"));
  ASSERT_EQ(model->requests()[0].tools.size(), 1u);
  EXPECT_EQ(model->requests()[0].tools[0].name, "echo");
  EXPECT_EQ(model->requests()[0].tools[0].parameters["required"], Json({"text"}));
}

TEST(CreateAgent, ParallelToolCallsAllRunAndAnswerInCallOrder) {
  const auto agent = create_agent(options_with(
      {reply_with_calls("ai-1", {call("c1", "one"), call("c2", "two"), call("c3", "three")}),
       Json("done")}));
  const Json messages = agent->invoke(input("go")).values["messages"];
  ASSERT_EQ(messages.size(), 6u);
  EXPECT_EQ(messages[2]["tool_call_id"], "c1");
  EXPECT_EQ(messages[2]["content"], "echo: one");
  EXPECT_EQ(messages[3]["tool_call_id"], "c2");
  EXPECT_EQ(messages[4]["tool_call_id"], "c3");
  EXPECT_EQ(message_text(messages[5]), "done");
}

TEST(CreateAgent, ToolsReadWhoStartedTheRunAndWhoDecided) {
  Tool whoami("echo", "Tells who asked.", Json::object(),
              [](const Json&, const ToolContext& context) -> Json {
                return context.started_by().id + "/" + context.decided_by().id;
              });
  const auto agent = create_agent(
      options_with({reply_with_calls("ai-1", {call("c1", "x")}), Json("done")}, {whoami}));
  RunConfig config;
  config.started_by = RunActor{"alice", "", {"user"}};
  config.decided_by = RunActor{"bob", "", {"reviewer"}};
  const Json messages = agent->invoke(input("go"), config).values["messages"];
  ASSERT_GE(messages.size(), 3u);
  EXPECT_EQ(messages[2]["content"], "alice/bob");
}

TEST(CreateAgent, InvalidToolArgumentsBecomeAnErrorToolMessage) {
  const auto agent = create_agent(options_with(
      {reply_with_calls("ai-1", {Json{{"id", "c1"}, {"name", "echo"}, {"args", {{"text", 5}}}}}),
       Json("sorry")}));
  const Json messages = agent->invoke(input("go")).values["messages"];
  EXPECT_EQ(messages[2]["status"], "error");
  EXPECT_NE(messages[2]["content"].get<std::string>().find("text: expected string"),
            std::string::npos)
      << messages[2].dump();
}

TEST(CreateAgent, HooksAndWrappersRunInLangChainOrder) {
  auto log = std::make_shared<OrderLog>();
  const unsigned all = AgentMiddleware::kBeforeAgent | AgentMiddleware::kBeforeModel |
                       AgentMiddleware::kAfterModel | AgentMiddleware::kAfterAgent |
                       AgentMiddleware::kWrapModelCall | AgentMiddleware::kWrapToolCall;
  AgentOptions options = options_with({reply_with_calls("ai-1", {call("c1", "x")}), Json("done")});
  options.middleware = {std::make_shared<RecordingMiddleware>("A", log, all),
                        std::make_shared<RecordingMiddleware>("B", log, all)};
  create_agent(std::move(options))->invoke(input("go"));
  EXPECT_EQ(log->entries,
            (std::vector<std::string>{
                "A.before_agent", "B.before_agent",  // once, in order
                "A.before_model", "B.before_model", "A.wrap_model_call", "B.wrap_model_call",
                "B.after_model", "A.after_model",        // reversed
                "A.wrap_tool_call", "B.wrap_tool_call",  // A outermost
                "A.before_model", "B.before_model", "A.wrap_model_call", "B.wrap_model_call",
                "B.after_model", "A.after_model", "B.after_agent", "A.after_agent"}));
}

TEST(CreateAgent, HookCanJumpToTheEnd) {
  auto model = std::make_shared<ScriptedChatModel>(std::vector<Json>{Json("never")});
  AgentOptions options;
  options.model = model;
  options.middleware = {std::make_shared<EndBeforeModel>()};
  const Json messages = create_agent(std::move(options))->invoke(input("go")).values["messages"];
  EXPECT_EQ(model->requests().size(), 0u);
  EXPECT_EQ(message_text(messages.back()), "blocked by guard");
}

TEST(CreateAgent, ModelTokensStreamIntoMessagesMode) {
  const auto agent = create_agent(options_with({Json("two words")}, {}));
  RunConfig config;
  config.stream_modes = {StreamMode::kMessages};
  std::string streamed;
  config.on_event = [&](const StreamEvent& event) {
    if (event.mode != StreamMode::kMessages) return;
    const Json& chunk = event.data.is_array() && !event.data.empty() ? event.data[0] : event.data;
    streamed += message_text(chunk);
  };
  agent->invoke(input("hi"), config);
  EXPECT_EQ(streamed, "two words");
}

// An agent whose echo calls are all reviewed, with memory checkpoints, replying `script`.
std::shared_ptr<const CompiledGraph> agent_reviewing_echo(std::vector<Json> script) {
  AgentOptions options = options_with(std::move(script));
  HumanInTheLoopOptions hitl;
  hitl.interrupt_on = parse_interrupt_on({{"echo", true}});
  options.middleware = {make_human_in_the_loop(std::move(hitl))};
  options.checkpointer = make_memory_saver();
  return create_agent(std::move(options));
}

RunConfig thread_t1() {
  RunConfig config;
  config.thread_id = "t1";
  return config;
}

TEST(CreateAgent, HitlPausesOnceAndApprovalRunsTheTool) {
  const auto agent =
      agent_reviewing_echo({reply_with_calls("ai-1", {call("c1", "x"), call("c2", "y")}), Json("done")});
  const RunConfig config = thread_t1();
  const RunResult paused = agent->invoke(input("go"), config);
  ASSERT_EQ(paused.interrupts.size(), 1u);
  EXPECT_EQ(paused.interrupts[0].value["action_requests"].size(), 2u);
  Command resume;
  resume.resume =
      Json{{"decisions", {{{"type", "approve"}}, {{"type", "respond"}, {"message", "skipped"}}}}};
  const Json messages = agent->invoke(resume, config).values["messages"];
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages[2]["content"], "skipped");  // written by the review step, before the tools ran
  EXPECT_EQ(messages[3]["content"], "echo: x");
}

TEST(CreateAgent, RefusedDecisionKeepsTheThreadPaused) {
  AgentOptions options = options_with({reply_with_calls("ai-1", {call("c1", "x")}), Json("done")});
  HumanInTheLoopOptions hitl;
  hitl.interrupt_on = parse_interrupt_on({{"echo", true}});
  options.middleware = {make_human_in_the_loop(std::move(hitl))};
  options.checkpointer = make_memory_saver();
  const auto agent = create_agent(std::move(options));
  RunConfig config;
  config.thread_id = "t1";
  agent->invoke(input("go"), config);
  Command bad;
  bad.resume = Json{{"decisions", Json::array()}};
  try {
    agent->invoke(bad, config);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnprocessable);
  }
  EXPECT_EQ(agent->get_state(config).interrupts.size(), 1u);
  Command good;
  good.resume = Json{{"decisions", {{{"type", "approve"}}}}};
  EXPECT_EQ(message_text(agent->invoke(good, config).values["messages"].back()), "done");
}

// An agent reviewing echo calls while `reviewed` says so (a `when` that can change its mind
// between the pause and the resume).
std::shared_ptr<const CompiledGraph> agent_reviewing_while(std::shared_ptr<std::atomic<bool>> reviewed,
                                                           std::vector<Json> script) {
  AgentOptions options = options_with(std::move(script));
  InterruptOnConfig config;
  config.allowed_decisions = {"approve", "reject"};
  config.when = [reviewed](const ToolCallReview&) { return reviewed->load(); };
  HumanInTheLoopOptions hitl;
  hitl.interrupt_on["echo"] = ToolReviewPolicy::with(config);
  options.middleware = {make_human_in_the_loop(std::move(hitl))};
  options.checkpointer = make_memory_saver();
  return create_agent(std::move(options));
}

TEST(CreateAgent, ADecisionIsRefusedWhenTheRebuiltReviewDiffersFromTheOneShown) {
  auto reviewed = std::make_shared<std::atomic<bool>>(true);
  const auto agent = agent_reviewing_while(
      reviewed, {reply_with_calls("ai-1", {call("c1", "x"), call("c2", "y")}), Json("done")});
  RunConfig config;
  config.thread_id = "t1";
  ASSERT_EQ(agent->invoke(input("go"), config).interrupts.size(), 1u);
  reviewed->store(false);  // now the rule would review neither call
  Command resume;
  resume.resume = Json{{"decisions", {{{"type", "reject"}}, {{"type", "reject"}}}}};
  try {
    agent->invoke(resume, config);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConflict);
    EXPECT_NE(std::string(e.what()).find("2 action(s) were shown, 0 would run now"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(agent->get_state(config).interrupts.size(), 1u);  // still paused, nothing ran
}

TEST(CreateAgent, ADecisionOnTheSameRebuiltReviewIsApplied) {
  auto reviewed = std::make_shared<std::atomic<bool>>(true);
  const auto agent =
      agent_reviewing_while(reviewed, {reply_with_calls("ai-1", {call("c1", "x")}), Json("done")});
  RunConfig config;
  config.thread_id = "t1";
  agent->invoke(input("go"), config);
  Command resume;
  resume.resume = Json{{"decisions", {{{"type", "approve"}}}}};
  const Json messages = agent->invoke(resume, config).values["messages"];
  EXPECT_EQ(messages[2]["content"], "echo: x");
}

// A resume that also commits an AI message (Command{resume, update}: the resolved card kept in
// the history, same superstep) must still apply the decisions to the calls that were reviewed.
TEST(CreateAgent, AResumeWhoseUpdateAddsAnAiMessageStillDecidesTheReviewedCalls) {
  const auto agent =
      agent_reviewing_echo({reply_with_calls("ai-1", {call("c1", "x"), call("c2", "y")}), Json("done")});
  const RunConfig config = thread_t1();
  ASSERT_EQ(agent->invoke(input("go"), config).interrupts.size(), 1u);
  Command resume;
  resume.resume =
      Json{{"decisions", {{{"type", "approve"}}, {{"type", "respond"}, {"message", "answered"}}}}};
  resume.update = Json{{"messages", {ai_message("Resolved: echo x approved, echo y answered.", Json::array(), "card-1")}}};
  const RunResult done = agent->invoke(resume, config);
  EXPECT_TRUE(done.interrupts.empty());
  std::vector<std::string> texts;
  for (const Json& m : done.values["messages"]) texts.push_back(message_text(m));
  EXPECT_EQ(texts, (std::vector<std::string>{"go", "", "Resolved: echo x approved, echo y answered.",
                                             "answered", "echo: x", "done"}));
}

TEST(PatchToolCalls, AnswersMalformedToolCallsOfTheHistory) {
  AgentOptions options = options_with({Json("fine")});
  options.middleware = {make_patch_tool_calls()};
  const Json broken = {
      {"type", "ai"},
      {"id", "ai-0"},
      {"content", ""},
      {"tool_calls", Json::array()},
      {"invalid_tool_calls",
       {{{"id", "bad1"}, {"name", "echo"}, {"args", "{\"text\": "}, {"error", "truncated"}}}}};
  const Json messages =
      create_agent(std::move(options))
          ->invoke(
              Json{{"messages", {human_message("hi", "h1"), broken, human_message("again", "h2")}}})
          .values["messages"];
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(
      messages[2]["content"],
      "Tool call echo with id bad1 could not be executed - arguments were malformed or truncated.");
  EXPECT_EQ(messages[2]["tool_call_id"], "bad1");
  EXPECT_EQ(message_text(messages[3]), "again");
}

TEST(PatchToolCalls, AnswersOnlyTheCallsWithoutAToolMessageAndEachIdOnce) {
  AgentOptions options = options_with({Json("fine")});
  options.middleware = {make_patch_tool_calls()};
  const Json call1{{"id", "c1"}, {"name", "echo"}, {"args", {{"text", "x"}}}};
  const Json call2{{"id", "c2"}, {"name", "echo"}, {"args", {{"text", "y"}}}};
  const Json history = {human_message("hi", "h1"),
                        ai_message("", Json::array({call1, call2}), "a1"),
                        tool_message("echo: x", "c1", "echo"),
                        ai_message("", Json::array({call2}), "a2"),  // the same id again
                        human_message("again", "h2")};
  const Json messages =
      create_agent(std::move(options))->invoke(Json{{"messages", history}}).values["messages"];
  ASSERT_EQ(messages.size(), 7u);  // one answer added, and the model's reply
  EXPECT_EQ(messages[1]["id"], "a1");
  EXPECT_EQ(messages[2]["tool_call_id"], "c2");
  EXPECT_EQ(messages[2]["content"],
            "Tool call echo with id c2 was cancelled - another message came in before it could "
            "be completed.");
  EXPECT_EQ(messages[3]["tool_call_id"], "c1");
  EXPECT_EQ(message_text(messages[3]), "echo: x");
  EXPECT_EQ(messages[4]["id"], "a2");
  EXPECT_EQ(message_text(messages[5]), "again");
}

TEST(PatchToolCalls, AToolMessageBeforeItsCallStillAnswersIt) {
  AgentOptions options = options_with({Json("fine")});
  options.middleware = {make_patch_tool_calls()};
  const Json call{{"id", "c1"}, {"name", "echo"}, {"args", {{"text", "x"}}}};
  const Json history = {human_message("hi", "h1"), tool_message("echo: x", "c1", "echo"),
                        ai_message("", Json::array({call}), "a1"), human_message("again", "h2")};
  const Json messages =
      create_agent(std::move(options))->invoke(Json{{"messages", history}}).values["messages"];
  ASSERT_EQ(messages.size(), 5u);  // no answer added: the model's reply only
  EXPECT_EQ(messages[2]["id"], "a1");
  EXPECT_EQ(message_text(messages[4]), "fine");
}

TEST(PatchToolCalls, AHistoryLeavingManyCallsOpenIsPatchedAsAShortOne) {
  AgentOptions options = options_with({Json("fine")});
  options.middleware = {make_patch_tool_calls()};
  // 70 calls at once (more than are searched open one by one), answered but for c41.
  Json calls = Json::array();
  for (int i = 0; i < 70; ++i) {
    calls.push_back({{"id", "c" + std::to_string(i)}, {"name", "echo"}, {"args", Json::object()}});
  }
  Json history = {human_message("hi", "h1"), ai_message("", calls, "a1")};
  for (int i = 0; i < 70; ++i) {
    if (i != 41) history.push_back(tool_message("ok", "c" + std::to_string(i), "echo"));
  }
  history.push_back(human_message("again", "h2"));
  const Json messages =
      create_agent(std::move(options))->invoke(Json{{"messages", history}}).values["messages"];
  ASSERT_EQ(messages.size(), history.size() + 2);  // one answer added, and the model's reply
  EXPECT_EQ(messages[2]["tool_call_id"], "c41");
  EXPECT_EQ(messages[2]["content"],
            "Tool call echo with id c41 was cancelled - another message came in before it could "
            "be completed.");
}

TEST(PatchToolCalls, LeavesAWellFormedHistoryUntouched) {
  auto model = std::make_shared<ScriptedChatModel>(std::vector<Json>{Json("fine")});
  AgentOptions options;
  options.model = model;
  options.middleware = {make_patch_tool_calls()};
  const Json messages = create_agent(std::move(options))->invoke(input("hi")).values["messages"];
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0]["id"], "h1");
}

}  // namespace
}  // namespace tollgate

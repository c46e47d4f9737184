// create_deep_agent: in-state files across turns, the subagent inheritance rules, and reviews
// raised inside subagents — surfaced on the parent run, resumed without re-running earlier
// steps, one interrupt per parallel subagent answered by id in call order.
#include <gtest/gtest.h>

#include "support/deep_agent_fakes.h"
#include "tollgate/deep_agent.h"
#include "tollgate/error.h"
#include "tollgate/memory_saver.h"
#include "tollgate/messages.h"

namespace tollgate {
namespace {

using testing::answered;
using testing::call;
using testing::delegating;
using testing::first_human;
using testing::Outbox;
using testing::RoutedModel;

RunConfig thread(const std::string& id) {
  RunConfig config;
  config.thread_id = id;
  return config;
}

Command resume(Json value) {
  Command command;
  command.resume = std::move(value);
  return command;
}

Json approve() { return Json{{"decisions", {{{"type", "approve"}}}}}; }

DeepAgentOptions mailer_agent(std::shared_ptr<ChatModel> model, Outbox& outbox) {
  DeepAgentOptions options;
  options.model = std::move(model);
  options.general_purpose_subagent = false;
  SubAgent mailer;
  mailer.name = "mailer";
  mailer.description = "Sends emails.";
  mailer.system_prompt = "You send emails.";
  mailer.tools = std::vector<Tool>{outbox.tool()};
  mailer.interrupt_on = parse_interrupt_on({{"send_email", true}});
  options.subagents.push_back(std::move(mailer));
  options.checkpointer = make_memory_saver();
  return options;
}

TEST(DeepAgent, FilesWrittenInOneTurnAreReadInTheNext) {
  auto model = std::make_shared<ScriptedChatModel>(std::vector<Json>{
      ai_message("", Json::array({call("write_file", {{"file_path", "/a.txt"}, {"content", "hi"}},
                                       "w")})),
      ai_message("written"),
      ai_message("", Json::array({call("read_file", {{"file_path", "/a.txt"}}, "r")})),
      ai_message("read")});
  DeepAgentOptions options;
  options.model = model;
  options.checkpointer = make_memory_saver();
  auto agent = create_deep_agent(std::move(options));
  agent->invoke(Json{{"messages", {human_message("write")}}}, thread("files"));
  EXPECT_EQ(agent->get_state(thread("files")).values["files"]["/a.txt"]["content"], "hi");
  const RunResult second = agent->invoke(Json{{"messages", {human_message("read")}}}, thread("files"));
  const Json& messages = second.values["messages"];
  EXPECT_EQ(message_text(messages[messages.size() - 2]), "1  hi");
}

TEST(DeepAgent, ASubagentReviewPausesTheParentInTheSubagentsNamespace) {
  Outbox outbox;
  auto agent = create_deep_agent(
      mailer_agent(std::make_shared<RoutedModel>(delegating({"alice"}, "mailer")), outbox));
  const RunResult paused = agent->invoke(Json{{"messages", {human_message("go")}}}, thread("ns"));
  ASSERT_EQ(paused.interrupts.size(), 1u);
  EXPECT_EQ(paused.interrupts[0].value["action_requests"][0]["args"]["to"], "alice");
  const StateSnapshot snapshot = agent->get_state(thread("ns"));
  ASSERT_EQ(snapshot.tasks.size(), 1u);
  EXPECT_EQ(snapshot.tasks[0].name, "tools");
  EXPECT_EQ(snapshot.tasks[0].interrupts.size(), 1u);
  // The subagent's checkpoints live in the namespace of the parent's tool task.
  const auto inner = agent->checkpointer()->get_tuple(
      CheckpointConfig{"ns", "tools:" + snapshot.tasks[0].id, ""});
  ASSERT_TRUE(inner.has_value());
  EXPECT_EQ(inner->config.checkpoint_ns, "tools:" + snapshot.tasks[0].id);
}

TEST(DeepAgent, ResumingASubagentRunsNeitherItsEarlierStepsNorTheParentsOtherCalls) {
  Outbox outbox;
  auto model = std::make_shared<RoutedModel>([](const Json& messages) -> Json {
    const std::string task = first_human(messages);
    if (task == "email alice") {
      return answered(messages) ? ai_message("reported")
                                : ai_message("", Json::array({call("send_email", {{"to", "alice"}},
                                                                   "call_alice")}));
    }
    if (answered(messages)) return ai_message("all done");
    return ai_message("", Json::array({call("send_email", {{"to", "boss"}}, "call_boss"),
                                       call("task", {{"description", "email alice"},
                                                     {"subagent_type", "mailer"}},
                                            "call_task")}));
  });
  DeepAgentOptions options = mailer_agent(model, outbox);
  options.tools = {outbox.tool()};  // the main agent's own send_email is not reviewed
  auto agent = create_deep_agent(std::move(options));
  const RunResult paused = agent->invoke(Json{{"messages", {human_message("go")}}}, thread("r"));
  ASSERT_EQ(paused.interrupts.size(), 1u);
  EXPECT_EQ(outbox.sent(), (std::vector<std::string>{"boss"}));
  EXPECT_EQ(model->calls(), 2);  // main, subagent

  const Json edit{{"decisions",
                   {{{"type", "edit"},
                     {"edited_action", {{"name", "send_email"}, {"args", {{"to", "carol"}}}}}}}}};
  const RunResult done = agent->invoke(resume(edit), thread("r"));
  EXPECT_FALSE(done.paused);
  EXPECT_EQ(outbox.sent(), (std::vector<std::string>{"boss", "carol"}));
  EXPECT_EQ(model->calls(), 4);  // + subagent after the review, + main
  EXPECT_EQ(message_text(done.values["messages"].back()), "all done");
}

TEST(DeepAgent, ARejectionInsideASubagentReachesTheSubagentsModel) {
  Outbox outbox;
  auto agent = create_deep_agent(
      mailer_agent(std::make_shared<RoutedModel>(delegating({"alice"}, "mailer")), outbox));
  agent->invoke(Json{{"messages", {human_message("go")}}}, thread("rej"));
  const RunResult done = agent->invoke(
      resume({{"decisions", {{{"type", "reject"}, {"message", "not today"}}}}}), thread("rej"));
  EXPECT_FALSE(done.paused);
  EXPECT_TRUE(outbox.sent().empty());
  const Json& messages = done.values["messages"];
  EXPECT_EQ(message_text(messages[2]), "reported on alice");
}

TEST(DeepAgent, ParallelSubagentsPauseOncePerSubagentInCallOrderAndResumeById) {
  Outbox outbox;
  auto agent = create_deep_agent(mailer_agent(
      std::make_shared<RoutedModel>(delegating({"alice", "bob"}, "mailer")), outbox));
  const RunResult paused = agent->invoke(Json{{"messages", {human_message("go")}}}, thread("par"));
  ASSERT_EQ(paused.interrupts.size(), 2u);
  EXPECT_EQ(paused.interrupts[0].value["action_requests"][0]["args"]["to"], "alice");
  EXPECT_EQ(paused.interrupts[1].value["action_requests"][0]["args"]["to"], "bob");

  Command bob;
  bob.resume_map[paused.interrupts[1].id] = approve();
  const RunResult half = agent->invoke(bob, thread("par"));
  ASSERT_EQ(half.interrupts.size(), 1u);
  EXPECT_EQ(half.interrupts[0].id, paused.interrupts[0].id);
  EXPECT_EQ(outbox.sent(), (std::vector<std::string>{"bob"}));

  Command alice;
  alice.resume_map[paused.interrupts[0].id] =
      Json{{"decisions", {{{"type", "reject"}, {"message", "no"}}}}};
  const RunResult done = agent->invoke(alice, thread("par"));
  EXPECT_FALSE(done.paused);
  EXPECT_EQ(outbox.sent(), (std::vector<std::string>{"bob"}));
  const Json& messages = done.values["messages"];
  EXPECT_EQ(message_text(messages[2]), "reported on alice");  // task results in call order
  EXPECT_EQ(message_text(messages[3]), "reported on bob");
}

TEST(DeepAgent, TheGeneralPurposeSubagentInheritsTheMainAgentsReviews) {
  Outbox outbox;
  DeepAgentOptions options;
  options.model = std::make_shared<RoutedModel>(delegating({"dave"}, "general-purpose"));
  options.tools = {outbox.tool()};
  options.interrupt_on = parse_interrupt_on({{"send_email", true}, {"task", false}});
  options.checkpointer = make_memory_saver();
  auto agent = create_deep_agent(std::move(options));
  const RunResult paused = agent->invoke(Json{{"messages", {human_message("go")}}}, thread("gp"));
  ASSERT_EQ(paused.interrupts.size(), 1u);
  EXPECT_EQ(paused.interrupts[0].value["action_requests"][0]["name"], "send_email");
  EXPECT_TRUE(outbox.sent().empty());
}

TEST(DeepAgent, ASubagentsOwnInterruptOnReplacesTheMainAgents) {
  Outbox outbox;
  DeepAgentOptions options = mailer_agent(
      std::make_shared<RoutedModel>(delegating({"erin"}, "mailer")), outbox);
  options.tools = {outbox.tool()};  // the main agent's entry must gate a tool it has
  options.interrupt_on = parse_interrupt_on({{"send_email", true}});
  options.subagents[0].interrupt_on = InterruptOn{};  // reviews nothing
  auto agent = create_deep_agent(std::move(options));
  const RunResult done = agent->invoke(Json{{"messages", {human_message("go")}}}, thread("own"));
  EXPECT_FALSE(done.paused);
  EXPECT_EQ(outbox.sent(), (std::vector<std::string>{"erin"}));
}

TEST(DeepAgent, AMainEntryForAToolOnlyASubagentWithItsOwnPolicyHasIsRefused) {
  Outbox outbox;
  DeepAgentOptions options = mailer_agent(
      std::make_shared<RoutedModel>(delegating({"erin"}, "mailer")), outbox);
  options.interrupt_on = parse_interrupt_on({{"send_email", true}});
  options.subagents[0].interrupt_on = InterruptOn{};
  try {
    create_deep_agent(std::move(options));
    FAIL() << "an interrupt_on entry that gates nothing was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("interrupt_on.send_email: unknown tool 'send_email'"),
              std::string::npos)
        << e.what();
  }
}

TEST(DeepAgent, AMainEntryForAnInheritingSubagentsToolGatesItThere) {
  Outbox outbox;
  DeepAgentOptions options = mailer_agent(
      std::make_shared<RoutedModel>(delegating({"ivy"}, "mailer")), outbox);
  options.interrupt_on = parse_interrupt_on({{"send_email", true}});
  options.subagents[0].interrupt_on.reset();  // inherits the main agent's
  auto agent = create_deep_agent(std::move(options));
  const RunResult paused = agent->invoke(Json{{"messages", {human_message("go")}}}, thread("inh"));
  EXPECT_TRUE(paused.paused);
  EXPECT_TRUE(outbox.sent().empty());
}

TEST(DeepAgent, ACompiledSubagentInheritsNothing) {
  Outbox outbox;
  auto model = std::make_shared<RoutedModel>(delegating({"frank"}, "plain"));
  AgentOptions plain;
  plain.model = model;
  plain.tools = {outbox.tool()};
  plain.name = "plain";
  DeepAgentOptions options;
  options.model = model;
  options.general_purpose_subagent = false;
  options.interrupt_on = parse_interrupt_on({{"send_email", true}});
  options.tools = {outbox.tool()};
  options.compiled_subagents.push_back({"plain", "Sends emails unreviewed.", create_agent(plain)});
  options.checkpointer = make_memory_saver();
  auto agent = create_deep_agent(std::move(options));
  const RunResult done = agent->invoke(Json{{"messages", {human_message("go")}}}, thread("cmp"));
  EXPECT_FALSE(done.paused);
  EXPECT_EQ(outbox.sent(), (std::vector<std::string>{"frank"}));
}

TEST(DeepAgent, AnUnknownSubagentTypeIsAnsweredWithTheAllowedOnes) {
  Outbox outbox;
  auto agent = create_deep_agent(
      mailer_agent(std::make_shared<RoutedModel>(delegating({"gus"}, "poet")), outbox));
  const RunResult done = agent->invoke(Json{{"messages", {human_message("go")}}}, thread("unk"));
  EXPECT_EQ(message_text(done.values["messages"][2]),
            "We cannot invoke subagent poet because it does not exist, the only allowed types "
            "are `mailer`");
}

TEST(DeepAgent, RefusesASubagentWithoutADescription) {
  Outbox outbox;
  DeepAgentOptions options =
      mailer_agent(std::make_shared<RoutedModel>(delegating({}, "mailer")), outbox);
  options.subagents[0].description.clear();
  EXPECT_THROW(create_deep_agent(std::move(options)), Error);
}

}  // namespace
}  // namespace tollgate

namespace tollgate {
namespace {

DeepAgentResolvers catalog(Outbox& outbox) {
  DeepAgentResolvers resolvers;
  resolvers.tool = [&outbox](const std::string& name) {
    if (name != "send_email") throw Error::InvalidArgument("unknown tool '" + name + "'");
    return outbox.tool();
  };
  return resolvers;
}

std::string parse_error(const Json& spec, const DeepAgentResolvers& resolvers) {
  try {
    parse_deep_agent_options(spec, resolvers, "agents.deep");
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(DeepAgentOptionsJson, ReadsEveryKeyInSnakeCase) {
  Outbox outbox;
  const DeepAgentOptions options = parse_deep_agent_options(
      Json::parse(R"({"kind": "deep_agent", "model": "demo", "tools": ["send_email"],
        "system_prompt": "Be brief.", "interrupt_on": {"send_email": true},
        "permissions": [{"operations": ["write"], "paths": ["/secrets/**"], "mode": "interrupt"}],
        "subagents": [{"name": "mailer", "description": "Sends emails.", "tools": ["send_email"],
                       "interrupt_on": {}}],
        "general_purpose_subagent": false, "key_style": "js", "name": "deep"})"),
      catalog(outbox));
  EXPECT_EQ(options.tools.size(), 1u);
  EXPECT_EQ(options.system_prompt, "Be brief.");
  EXPECT_EQ(options.interrupt_on.count("send_email"), 1u);
  ASSERT_EQ(options.permissions.size(), 1u);
  ASSERT_EQ(options.subagents.size(), 1u);
  EXPECT_TRUE(options.subagents[0].interrupt_on.has_value());
  EXPECT_FALSE(options.subagents[0].permissions.has_value());  // inherits
  EXPECT_FALSE(options.general_purpose_subagent);
  EXPECT_EQ(options.key_style, KeyStyle::kJs);
  EXPECT_EQ(options.name, "deep");
}

TEST(DeepAgentOptionsJson, NamesTheFieldOfAMistake) {
  Outbox outbox;
  const DeepAgentResolvers resolvers = catalog(outbox);
  EXPECT_EQ(parse_error(Json::parse(R"({"subagents": [{"description": "x"}]})"), resolvers),
            "agents.deep.subagents[0].name: required");
  EXPECT_EQ(parse_error(Json::parse(R"({"tools": ["send_email", "nope"]})"), resolvers),
            "agents.deep.tools[1]: unknown tool 'nope'");
  EXPECT_EQ(parse_error(Json::parse(R"({"permissions": [{"operations": ["read"], "paths": ["x"]}]})"),
                        resolvers),
            "agents.deep.permissions: permissions[0]: Permission path must start with '/': 'x'");
  EXPECT_EQ(parse_error(Json::parse(R"({"backend": {"kind": "s3"}})"), resolvers),
            "agents.deep.backend.kind: unknown backend 's3' (expected 'state' or 'directory')");
  EXPECT_EQ(parse_error(Json::parse(R"({"subagent": []})"), resolvers),
            "agents.deep.subagent: unknown key");
}

TEST(DeepAgent, AUserInterruptOnEntryOverridesThePermissionsReview) {
  auto model = std::make_shared<ScriptedChatModel>(std::vector<Json>{
      ai_message("", Json::array({call("write_file", {{"file_path", "/secrets/k"}, {"content", "x"}},
                                       "w")})),
      ai_message("done")});
  DeepAgentOptions options;
  options.model = model;
  options.permissions = {FilesystemPermission({"write"}, {"/secrets/**"}, "interrupt")};
  options.interrupt_on = parse_interrupt_on({{"write_file", false}});
  options.checkpointer = make_memory_saver();
  auto agent = create_deep_agent(std::move(options));
  const RunResult done = agent->invoke(Json{{"messages", {human_message("save")}}}, thread("o"));
  EXPECT_FALSE(done.paused);
  EXPECT_EQ(done.values["files"]["/secrets/k"]["content"], "x");
}

TEST(DeepAgent, AnEditedFilesystemCallMeetsTheDenyRulesAgain) {
  auto model = std::make_shared<ScriptedChatModel>(std::vector<Json>{
      ai_message("", Json::array({call("write_file", {{"file_path", "/secrets/k"}, {"content", "x"}},
                                       "w")})),
      ai_message("done")});
  DeepAgentOptions options;
  options.model = model;
  options.permissions = {FilesystemPermission({"write"}, {"/locked/**"}, "deny"),
                         FilesystemPermission({"write"}, {"/secrets/**"}, "interrupt")};
  options.checkpointer = make_memory_saver();
  auto agent = create_deep_agent(std::move(options));
  const RunResult paused = agent->invoke(Json{{"messages", {human_message("save")}}}, thread("e"));
  ASSERT_EQ(paused.interrupts.size(), 1u);
  const Json edit{
      {"decisions",
       {{{"type", "edit"},
         {"edited_action",
          {{"name", "write_file"}, {"args", {{"file_path", "/locked/k"}, {"content", "x"}}}}}}}}};
  const RunResult done = agent->invoke(resume(edit), thread("e"));
  const std::string result = message_text(done.values["messages"][2]);
  EXPECT_NE(result.find("Error: permission denied for write on /locked/k"), std::string::npos)
      << result;
  EXPECT_TRUE(done.values["files"].empty());
}

}  // namespace
}  // namespace tollgate

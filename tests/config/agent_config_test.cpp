// The agent config loader: what a declaration builds, and one test per refused mistake, each
// checking the JSON path the error names.
#include "tollgate/agent_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "demo/demo_model.h"
#include "demo/demo_tools.h"
#include "tollgate/error.h"
#include "tollgate/memory_saver.h"
#include "tollgate/messages.h"

namespace tollgate {
namespace {

Tool echo_tool(const std::string& name, const std::string& arg) {
  return Tool(
      name, "Echoes its argument.",
      Json{{"type", "object"}, {"required", {arg}}, {"properties", {{arg, {{"type", "string"}}}}}},
      [name, arg](const Json& args, const ToolContext&) {
        return name + " ran with " + args[arg].get<std::string>();
      });
}

AgentConfigOptions test_options() {
  AgentConfigOptions options;
  options.tools = {echo_tool("send_email", "to"), echo_tool("execute_sql", "query"),
                   echo_tool("lookup", "key")};
  options.model_options = with_demo_model();
  options.model_options.getenv = [](const std::string&) -> std::optional<std::string> {
    return std::nullopt;
  };
  return options;
}

// A scripted agent: "mail" asks for send_email, "sql" runs a query given after "sql ".
Json mail_agent() {
  return Json::parse(R"({
    "model": "scripted",
    "script": {"conversations": [
      {"match": "mail", "replies": [
        {"tool_calls": [{"name": "send_email", "args": {"to": "eve@evil.com"}}]}, "Result: {tool_results}"]},
      {"match": "read", "replies": [
        {"tool_calls": [{"name": "execute_sql", "args": {"query": "SELECT 1"}}]}, "Read: {tool_results}"]},
      {"match": "write", "replies": [
        {"tool_calls": [{"name": "execute_sql", "args": {"query": "DELETE FROM users"}}]}, "Wrote."]}]},
    "system_prompt": "You send mail.",
    "tools": ["send_email", "execute_sql"],
    "interrupt_on": {
      "send_email": {"allowed_decisions": ["approve", "reject"], "description": "Mail {to}?"},
      "execute_sql": {"allowed_decisions": ["approve", "reject"], "when": {"sql_writes": true}}},
    "description": "Mails and SQL."})");
}

std::vector<AgentDeclaration> parse(const Json& agents) {
  return parse_agent_declarations(agents, std::filesystem::temp_directory_path(), test_options());
}

std::string error_of(const Json& agents) {
  try {
    parse(agents);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "no error for " << agents.dump();
  return "";
}

// The error of the mail agent with `patch` merged into it.
std::string error_with(const Json& patch) {
  Json agent = mail_agent();
  agent.merge_patch(patch);
  return error_of(Json{{"mail", agent}});
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

Json start(const std::shared_ptr<CompiledGraph>& agent, const std::string& thread,
           const std::string& text) {
  RunConfig config;
  config.thread_id = thread;
  auto result = agent->invoke(Json{{"messages", {human_message(text)}}}, config);
  return result.interrupts.empty() ? result.values.to_json()
                                   : Json{{"interrupt", result.interrupts[0].value}};
}

TEST(AgentConfigTest, DeclaresEachAgentWithItsToolsPromptAndDescription) {
  auto agents = parse(Json{{"mail", mail_agent()}, {"plain", {{"model", "demo"}}}});
  ASSERT_EQ(agents.size(), 2u);
  EXPECT_EQ(agents[0].graph_id, "mail");
  EXPECT_EQ(agents[0].description, "Mails and SQL.");
  EXPECT_EQ(agents[0].options.system_prompt, "You send mail.");
  ASSERT_EQ(agents[0].options.tools.size(), 2u);
  EXPECT_EQ(agents[0].options.tools[1].name(), "execute_sql");
  EXPECT_EQ(agents[0].options.model->name(), "scripted");
  EXPECT_EQ(agents[1].graph_id, "plain");
  EXPECT_EQ(agents[1].options.model->name(), "demo");
  EXPECT_TRUE(agents[1].options.tools.empty());
}

TEST(AgentConfigTest, AGatedToolPausesWithTheTemplateDescription) {
  auto agent = parse(Json{{"mail", mail_agent()}})[0].build(make_memory_saver());
  Json paused = start(agent, "t1", "mail eve");
  ASSERT_TRUE(paused.contains("interrupt")) << paused.dump();
  EXPECT_EQ(paused["interrupt"]["action_requests"][0]["description"], "Mail eve@evil.com?");
  EXPECT_EQ(paused["interrupt"]["review_configs"][0]["allowed_decisions"],
            Json::array({"approve", "reject"}));
}

TEST(AgentConfigTest, ASqlWritesRuleLetsAReadRunWithoutAPause) {
  auto agent = parse(Json{{"mail", mail_agent()}})[0].build(make_memory_saver());
  Json done = start(agent, "t1", "read the users");
  ASSERT_FALSE(done.contains("interrupt")) << done.dump();
  EXPECT_EQ(message_text(done["messages"].back()), "Read: execute_sql ran with SELECT 1");
}

TEST(AgentConfigTest, ASqlWritesRulePausesAWrite) {
  auto agent = parse(Json{{"mail", mail_agent()}})[0].build(make_memory_saver());
  EXPECT_TRUE(start(agent, "t1", "write it").contains("interrupt"));
}

TEST(AgentConfigTest, JsKeyStyleSpellsThePayloadInCamelCase) {
  Json agent = mail_agent();
  agent["key_style"] = "js";
  auto built = parse(Json{{"mail", agent}})[0].build(make_memory_saver());
  Json paused = start(built, "t1", "mail eve");
  ASSERT_TRUE(paused.contains("interrupt"));
  EXPECT_TRUE(paused["interrupt"].contains("actionRequests")) << paused.dump();
}

TEST(AgentConfigTest, DescriptionPrefixIsUsedForTheDefaultDescription) {
  Json agent = mail_agent();
  agent["description_prefix"] = "Check this";
  agent["interrupt_on"]["send_email"] = true;
  auto built = parse(Json{{"mail", agent}})[0].build(make_memory_saver());
  Json paused = start(built, "t1", "mail eve");
  ASSERT_TRUE(paused.contains("interrupt"));
  const std::string description = paused["interrupt"]["action_requests"][0]["description"];
  EXPECT_TRUE(starts_with(description, "Check this\n\nTool: send_email")) << description;
}

TEST(AgentConfigTest, OneDeclarationServesManyThreads) {
  auto agent = parse(Json{{"mail", mail_agent()}})[0].build(make_memory_saver());
  EXPECT_TRUE(start(agent, "a", "mail eve").contains("interrupt"));
  EXPECT_FALSE(start(agent, "b", "read").contains("interrupt"));
  EXPECT_TRUE(start(agent, "c", "mail eve").contains("interrupt"));
}

TEST(AgentConfigTest, ScriptFileResolvesAgainstTheConfigFolder) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tollgate-config-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "scripts");
  std::ofstream(dir / "scripts" / "s.json")
      << R"({"conversations":[{"match":"","replies":["hi"]}]})";
  std::ofstream(dir / "tollgate.json")
      << R"({"agents":{"a":{"model":"scripted","script_file":"scripts/s.json"}}})";
  auto agents = load_agent_config(dir / "tollgate.json", test_options());
  std::filesystem::remove_all(dir);
  ASSERT_EQ(agents.size(), 1u);
  auto built = agents[0].build(make_memory_saver());
  EXPECT_EQ(message_text(start(built, "t", "hello")["messages"].back()), "hi");
}

// examples/config/tollgate.json over the demo tools: both agents load; the scripted mail agent
// sends to example.com without a pause and stops for mail leaving the company.
TEST(AgentConfigTest, TheShippedExampleConfigLoadsAndItsMailRuleGates) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tollgate-example-config-" + std::to_string(::getpid()));
  DemoEnvironment env(dir);
  AgentConfigOptions options = test_options();
  options.tools = env.tools();
  auto agents = load_agent_config(
      std::filesystem::path(TOLLGATE_SOURCE_DIR) / "examples" / "config" / "tollgate.json",
      options);
  ASSERT_EQ(agents.size(), 2u);
  EXPECT_EQ(agents[0].graph_id, "assistant");
  auto mail = agents[1].build(make_memory_saver());
  Json inside = start(mail, "a", "email bob@example.com");
  EXPECT_FALSE(inside.contains("interrupt")) << inside.dump();
  Json outside = start(mail, "b", "email eve");
  ASSERT_TRUE(outside.contains("interrupt")) << outside.dump();
  EXPECT_EQ(outside["interrupt"]["action_requests"][0]["description"],
            "send_email: mail to eve@evil.com leaves the company. Send it?");
  std::filesystem::remove_all(dir);
}

TEST(AgentConfigTest, AFileWithoutAgentsDeclaresNone) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("tollgate-config-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << R"({"port": 0})";
  auto agents = load_agent_config(file, test_options());
  std::filesystem::remove(file);
  EXPECT_TRUE(agents.empty());
}

TEST(AgentConfigTest, FileErrorsArePrefixedWithTheFileName) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("tollgate-config-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << R"({"agents": {"a": {"tools": ["nope"]}}})";
  try {
    load_agent_config(file, test_options());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(starts_with(e.what(), file.string() + ": agents.a.tools[0]: unknown tool 'nope'"))
        << e.what();
  }
  std::filesystem::remove(file);
}

TEST(AgentConfigTest, AFileThatIsNotJsonIsRefused) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("tollgate-config-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << "{agents: }";
  try {
    load_agent_config(file, test_options());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(starts_with(e.what(), file.string() + ": not valid JSON")) << e.what();
  }
  std::filesystem::remove(file);
}

TEST(AgentConfigTest, AFileWithANumberPastADoublesRangeIsRefused) {
  // nlohmann reports it as out_of_range, not as a parse error (found by the agent_config fuzz
  // target, which the exception ended).
  const auto file = std::filesystem::temp_directory_path() /
                    ("tollgate-config-range-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << R"({"agents": {}, "limit": 3333e33333333333})";
  try {
    load_agent_config(file, test_options());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(starts_with(e.what(), file.string() + ": not valid JSON")) << e.what();
  }
  std::filesystem::remove(file);
}

TEST(AgentConfigTest, AgentsMustBeAnObject) {
  EXPECT_EQ(error_of(Json::array()), "agents: must be an object of graph id -> agent");
}

TEST(AgentConfigTest, RefusesAnUnknownAgentKey) {
  EXPECT_TRUE(starts_with(error_with({{"tool", "x"}}), "agents.mail: unknown key 'tool'"));
}

TEST(AgentConfigTest, RefusesAnUnknownTool) {
  EXPECT_EQ(error_with({{"tools", {"send_email", "send_mail"}}}),
            "agents.mail.tools[1]: unknown tool 'send_mail' (available: send_email, execute_sql, "
            "lookup)");
}

TEST(AgentConfigTest, RefusesAToolListedTwice) {
  EXPECT_EQ(error_with({{"tools", {"send_email", "execute_sql", "send_email"}}}),
            "agents.mail.tools[2]: tool 'send_email' is listed twice");
}

TEST(AgentConfigTest, RefusesAReviewPolicyForAToolTheAgentLacks) {
  EXPECT_EQ(error_with({{"interrupt_on", {{"lookup", true}}}}),
            "agents.mail.interrupt_on.lookup: unknown tool 'lookup' (the agent's tools: "
            "execute_sql, send_email)");
}

TEST(AgentConfigTest, RefusesAnAutoApprovalForAToolTheAgentLacks) {
  EXPECT_EQ(error_with({{"interrupt_on", {{"send_emails", false}}}}),
            "agents.mail.interrupt_on.send_emails: unknown tool 'send_emails' (the agent's "
            "tools: execute_sql, send_email)");
}

TEST(AgentConfigTest, ADemoModelNeedsTheDemoProvider) {
  AgentConfigOptions options = test_options();
  options.model_options.providers.clear();
  try {
    parse_agent_declarations(Json{{"plain", {{"model", "demo"}}}}, ".", options);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(starts_with(e.what(),
                            "agents.plain.model: model 'demo': the offline demo model is not part "
                            "of the library"))
        << e.what();
  }
}

TEST(AgentConfigTest, APathRuleReadsAnAbsolutePathInsideTheSandbox) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tollgate-config-sandbox-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  AgentConfigOptions options = test_options();
  options.tools = {echo_tool("delete_file", "path")};
  options.sandbox = std::filesystem::canonical(dir);
  const auto reply = [](const std::filesystem::path& path) {
    return Json{{"tool_calls", {{{"name", "delete_file"}, {"args", {{"path", path.string()}}}}}}};
  };
  Json agent = {
      {"model", "scripted"},
      {"script",
       {{"conversations",
         {{{"match", "secret"}, {"replies", {reply(options.sandbox / "secrets" / "key"), "done"}}},
          {{"match", "notes"}, {"replies", {reply(options.sandbox / "notes.txt"), "done"}}}}}}},
      {"tools", {"delete_file"}},
      {"interrupt_on",
       {{"delete_file", {{"when", {{"arg", "path"}, {"path_glob", "secrets/**"}}}}}}}};
  auto built =
      parse_agent_declarations(Json{{"files", agent}}, dir, options)[0].build(make_memory_saver());
  EXPECT_TRUE(start(built, "a", "delete the secret").contains("interrupt"));
  EXPECT_FALSE(start(built, "b", "delete the notes").contains("interrupt"));
  std::filesystem::remove_all(dir);
}

TEST(AgentConfigTest, RefusesAnUnknownWhenOperator) {
  EXPECT_TRUE(starts_with(
      error_with(
          {{"interrupt_on", {{"send_email", {{"when", {{"arg", "to"}, {"startswith", "a"}}}}}}}}),
      "agents.mail.interrupt_on.send_email.when: unknown key 'startswith'"));
}

TEST(AgentConfigTest, RefusesAnInvalidRegularExpressionInAWhenRule) {
  EXPECT_TRUE(starts_with(
      error_with(
          {{"interrupt_on", {{"send_email", {{"when", {{"arg", "to"}, {"matches", "(("}}}}}}}}),
      "agents.mail.interrupt_on.send_email.when: 'matches' is not a valid regular expression"));
}

TEST(AgentConfigTest, RefusesAnUnknownDecisionNamingTheTool) {
  const std::string message =
      error_with({{"interrupt_on", {{"send_email", {{"allowed_decisions", {"aprove"}}}}}}});
  EXPECT_TRUE(starts_with(message,
                          "agents.mail.interrupt_on.send_email: Invalid `interrupt_on` "
                          "config for tool 'send_email'"))
      << message;
}

TEST(AgentConfigTest, RefusesADescriptionThatIsNeitherTextNorTemplate) {
  EXPECT_EQ(error_with({{"interrupt_on", {{"send_email", {{"description", 3}}}}}}),
            "agents.mail.interrupt_on.send_email.description: must be a string or "
            "{\"template\": string}");
}

TEST(AgentConfigTest, RefusesAnUnknownKeyStyle) {
  EXPECT_EQ(error_with({{"key_style", "camel"}}),
            "agents.mail.key_style: must be \"python\" or \"js\", got \"camel\"");
}

TEST(AgentConfigTest, RefusesAScriptedModelWithoutAScript) {
  EXPECT_EQ(error_of(Json{{"a", {{"model", "scripted"}}}}),
            "agents.a: a scripted model needs exactly one of \"script\" or \"script_file\"");
}

TEST(AgentConfigTest, RefusesAScriptForAModelThatIsNotScripted) {
  EXPECT_EQ(error_with({{"model", "demo"}}),
            "agents.mail.script: only used with \"model\": \"scripted\"");
}

TEST(AgentConfigTest, AScriptErrorNamesItsPathInsideTheAgent) {
  EXPECT_EQ(
      error_of(Json{
          {"a", {{"model", "scripted"}, {"script", {{"conversations", {{{"match", "x"}}}}}}}}}),
      "agents.a.script.conversations[0].replies: must be an array");
}

TEST(AgentConfigTest, AMissingScriptFileNamesTheAgentAndTheFile) {
  const std::string message =
      error_of(Json{{"a", {{"model", "scripted"}, {"script_file", "/nonexistent/s.json"}}}});
  EXPECT_EQ(message, "agents.a.script_file /nonexistent/s.json: cannot be read");
}

TEST(AgentConfigTest, AProviderWithoutItsKeyIsAStartupError) {
  const std::string message = error_with({{"model", "openai:gpt-4.1-mini"}, {"script", nullptr}});
  EXPECT_TRUE(starts_with(message, "agents.mail.model: openai:gpt-4.1-mini needs an API key"))
      << message;
}

TEST(AgentConfigTest, AnUnknownProviderIsAStartupError) {
  const std::string message = error_with({{"model", "nosuch:model"}, {"script", nullptr}});
  EXPECT_TRUE(starts_with(message, "agents.mail.model: unknown model provider 'nosuch'"))
      << message;
}

// A deep agent: a scripted model that writes below /secrets/, which an "interrupt" rule gates.
Json deep_agent() {
  return Json::parse(R"({
    "kind": "deep_agent",
    "model": "scripted",
    "script": {"conversations": [
      {"match": "secret", "replies": [
        {"tool_calls": [{"name": "write_file", "args": {"file_path": "/secrets/k.txt", "content": "x"}}]},
        "Stored."]},
      {"match": "note", "replies": [
        {"tool_calls": [{"name": "write_file", "args": {"file_path": "/notes.txt", "content": "y"}}]},
        "Noted."]}]},
    "tools": ["lookup"],
    "permissions": [{"operations": ["write"], "paths": ["/secrets/**"], "mode": "interrupt"}],
    "subagents": [{"name": "critic", "description": "Reviews drafts.", "model": "demo"}],
    "description": "Files and a critic."})");
}

TEST(AgentConfigTest, ADeepAgentKindIsBuiltByCreateDeepAgent) {
  auto agents = parse(Json{{"research", deep_agent()}});
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(agents[0].kind, AgentKind::kDeepAgent);
  EXPECT_EQ(agents[0].description, "Files and a critic.");
  EXPECT_EQ(agents[0].deep.name, "research");
  EXPECT_EQ(agents[0].model()->name(), "scripted");
  ASSERT_EQ(agents[0].deep.tools.size(), 1u);
  EXPECT_EQ(agents[0].deep.tools[0].name(), "lookup");
  ASSERT_EQ(agents[0].deep.subagents.size(), 1u);
  ASSERT_NE(agents[0].deep.subagents[0].model, nullptr);
  EXPECT_EQ(agents[0].deep.subagents[0].model->name(), "demo");
}

TEST(AgentConfigTest, ADeepAgentsPermissionRulePausesAWriteBelowIt) {
  auto agent = parse(Json{{"research", deep_agent()}})[0].build(make_memory_saver());
  Json paused = start(agent, "t1", "keep the secret");
  ASSERT_TRUE(paused.contains("interrupt")) << paused.dump();
  EXPECT_EQ(paused["interrupt"]["action_requests"][0]["name"], "write_file");
  EXPECT_EQ(paused["interrupt"]["action_requests"][0]["args"]["file_path"], "/secrets/k.txt");
}

TEST(AgentConfigTest, ADeepAgentsWriteOutsideTheRuleRunsAtOnce) {
  auto agent = parse(Json{{"research", deep_agent()}})[0].build(make_memory_saver());
  Json done = start(agent, "t1", "take a note");
  ASSERT_FALSE(done.contains("interrupt")) << done.dump();
  EXPECT_EQ(message_text(done["messages"].back()), "Noted.");
  EXPECT_TRUE(done["files"].contains("/notes.txt")) << done.dump();
}

TEST(AgentConfigTest, ADeepAgentsRelativeDirectoryRootIsTheConfigFilesFolders) {
  const auto base = std::filesystem::temp_directory_path() /
                    ("tollgate-deep-config-" + std::to_string(::getpid()));
  std::filesystem::remove_all(base);
  std::filesystem::create_directories(base);
  Json agent = deep_agent();
  agent["backend"] = {{"kind", "directory"}, {"root", "files"}};
  parse_agent_declarations(Json{{"research", agent}}, base, test_options());
  EXPECT_TRUE(std::filesystem::is_directory(base / "files"));
  std::filesystem::remove_all(base);
}

TEST(AgentConfigTest, ADeepAgentsReviewDescriptionIsATemplateAsInAnyAgent) {
  Json agent = deep_agent();
  agent["interrupt_on"] = {{"write_file", {{"description", "Write {file_path}?"}}}};
  auto built = parse(Json{{"research", agent}})[0].build(make_memory_saver());
  Json paused = start(built, "t1", "take a note");
  ASSERT_TRUE(paused.contains("interrupt")) << paused.dump();
  EXPECT_EQ(paused["interrupt"]["action_requests"][0]["description"], "Write /notes.txt?");
}

TEST(AgentConfigTest, ADeepAgentsEntryForAToolItLacksIsRefusedAtLoad) {
  Json agent = deep_agent();
  agent["interrupt_on"] = {{"send_emial", true}};
  const std::string message = error_of(Json{{"research", agent}});
  EXPECT_TRUE(starts_with(message, "agents.research: interrupt_on.send_emial: unknown tool"))
      << message;
}

TEST(AgentConfigTest, RefusesAnUnknownAgentKind) {
  EXPECT_EQ(error_with({{"kind", "deep"}}),
            "agents.mail.kind: must be \"agent\" or \"deep_agent\", got \"deep\"");
}

TEST(AgentConfigTest, RefusesADeepAgentKeyItDoesNotKnow) {
  Json agent = deep_agent();
  agent["subagent"] = Json::array();
  EXPECT_EQ(error_of(Json{{"research", agent}}), "agents.research.subagent: unknown key");
}

TEST(AgentConfigTest, ADeepAgentsUnknownToolNamesItsEntry) {
  Json agent = deep_agent();
  agent["tools"] = {"lookup", "nosuch"};
  EXPECT_EQ(error_of(Json{{"research", agent}}),
            "agents.research.tools[1]: unknown tool 'nosuch' (available: send_email, "
            "execute_sql, lookup)");
}

TEST(AgentConfigTest, ADeepSubagentsModelMustBeAModelString) {
  Json agent = deep_agent();
  agent["subagents"][0]["model"] = 7;
  EXPECT_EQ(error_of(Json{{"research", agent}}),
            "agents.research.subagents[0].model: must be a model string");
}

}  // namespace
}  // namespace tollgate

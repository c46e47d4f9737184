// create_agent's private state keys (jump_to, hitl_edited_tool_calls) route and record edits
// inside the graph but never show in the agent's output values or state.
#include <gtest/gtest.h>

#include "tollgate/agent.h"
#include "tollgate/memory_saver.h"
#include "tollgate/messages.h"

namespace tollgate {
namespace {

Tool echo_tool() {
  return Tool("echo", "Echoes its text.",
              Json{{"type", "object"},
                   {"properties", {{"text", {{"type", "string"}}}}},
                   {"required", {"text"}}},
              [](const Json& args, const ToolContext&) -> Json {
                return "echo: " + args["text"].get<std::string>();
              });
}

std::shared_ptr<CompiledGraph> reviewed_agent() {
  AgentOptions options;
  options.model = std::make_shared<ScriptedChatModel>(std::vector<Json>{
      Json{{"id", "ai-1"},
           {"content", ""},
           {"tool_calls", {{{"id", "c1"}, {"name", "echo"}, {"args", {{"text", "x"}}}}}}},
      Json("done")});
  options.tools = {echo_tool()};
  HumanInTheLoopOptions hitl;
  hitl.interrupt_on = parse_interrupt_on({{"echo", true}});
  options.middleware = {make_human_in_the_loop(std::move(hitl))};
  options.checkpointer = make_memory_saver();
  return create_agent(std::move(options));
}

Json keys_of(const State& state) {
  Json keys = Json::array();
  for (const auto& [key, value] : state.values()) keys.push_back(key);
  return keys;
}

RunConfig thread(const std::string& id) {
  RunConfig config;
  config.thread_id = id;
  return config;
}

Command edit_to(const std::string& text) {
  Command command;
  command.resume = Json{
      {"decisions",
       {{{"type", "edit"}, {"edited_action", {{"name", "echo"}, {"args", {{"text", text}}}}}}}}};
  return command;
}

TEST(AgentPrivateState, PausedValuesHoldOnlyTheMessages) {
  const auto agent = reviewed_agent();
  const RunResult paused =
      agent->invoke(Json{{"messages", {human_message("go", "h1")}}}, thread("t"));
  ASSERT_TRUE(paused.paused);
  EXPECT_EQ(keys_of(paused.values), Json::array({"messages"}));
}

TEST(AgentPrivateState, GetStateHidesTheEditsRecordAfterAnEdit) {
  const auto agent = reviewed_agent();
  agent->invoke(Json{{"messages", {human_message("go", "h1")}}}, thread("t"));
  const RunResult done = agent->invoke(edit_to("y"), thread("t"));
  // The edit still ran (the private record reached the tools node) ...
  const Json& messages = done.values["messages"];
  ASSERT_GE(messages.size(), 3u);
  EXPECT_NE(message_text(messages[2]).find("echo: y"), std::string::npos);
  // ... but neither the result nor the stored state shows the private keys.
  EXPECT_EQ(keys_of(done.values), Json::array({"messages"}));
  EXPECT_EQ(keys_of(agent->get_state(thread("t")).values), Json::array({"messages"}));
}

}  // namespace
}  // namespace tollgate

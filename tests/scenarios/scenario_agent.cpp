#include "scenarios/scenario_agent.h"

#include <map>
#include <stdexcept>

#include "tollgate/graph.h"
#include "tollgate/messages.h"

namespace tollgate::scenarios {
namespace {

struct Builder {
  const Json& spec;
  std::shared_ptr<ChatModel> model;
  std::shared_ptr<ExecutionLog> log;

  std::vector<std::shared_ptr<const AgentMiddleware>> middleware_for(const Json& agent) const {
    std::vector<std::shared_ptr<const AgentMiddleware>> middleware;
    if (agent.value("patch_tool_calls", false)) middleware.push_back(make_patch_tool_calls());
    if (agent.contains("interrupt_on")) {
      HumanInTheLoopOptions options;
      options.interrupt_on = parse_interrupt_on(agent["interrupt_on"]);
      if (agent.contains("description_prefix"))
        options.description_prefix = agent["description_prefix"];
      if (agent.value("key_style", "python") == "js") options.key_style = KeyStyle::kJs;
      middleware.push_back(make_human_in_the_loop(std::move(options)));
    }
    return middleware;
  }

  std::vector<Tool> tools_for(const Json& agent) const {
    std::vector<Tool> tools;
    const Json names = agent.value("tools", Json::array());
    for (const auto& name : names) {
      const std::string n = name.get<std::string>();
      tools.push_back(n == "task" ? task_tool() : scenario_tool(n, log));
    }
    return tools;
  }

  // deepagents' `task` tool: runs the subagent named by subagent_type as a subgraph of the
  // calling tool task; its final answer becomes the tool result.
  Tool task_tool() const {
    std::map<std::string, std::shared_ptr<const CompiledGraph>> subagents;
    const Json specs = spec.value("subagents", Json::object());
    for (const auto& [name, sub] : specs.items()) {
      AgentOptions options;
      options.model = model;
      options.tools = tools_for(sub);
      options.system_prompt = sub.value("system_prompt", "");
      options.middleware = middleware_for(sub);
      options.name = name;
      subagents[name] = create_agent(std::move(options));
    }
    const Json schema = {
        {"type", "object"},
        {"properties",
         {{"description", {{"type", "string"}}}, {"subagent_type", {{"type", "string"}}}}},
        {"required", {"description", "subagent_type"}}};
    return Tool("task", "Delegates a task to a subagent.", schema,
                [subagents](const Json& args, const ToolContext& ctx) -> Json {
                  const auto it = subagents.find(args.value("subagent_type", ""));
                  if (it == subagents.end()) throw std::runtime_error("unknown subagent");
                  const Json out = ctx.runtime->invoke_subgraph(
                      *it->second,
                      Json{{"messages", {human_message(args.value("description", ""))}}});
                  const Json& messages = out["messages"];
                  for (auto m = messages.rbegin(); m != messages.rend(); ++m) {
                    if (message_type(*m) == "ai" && !message_text(*m).empty())
                      return message_text(*m);
                  }
                  return "";
                });
  }
};

}  // namespace

std::shared_ptr<ScriptedChatModel> scripted_model(const Json& spec) {
  std::vector<Json> script;
  for (const auto& reply : spec.at("model_script")) script.push_back(reply);
  return std::make_shared<ScriptedChatModel>(std::move(script));
}

std::shared_ptr<CompiledGraph> build_scenario_agent(const Json& spec,
                                                    std::shared_ptr<ChatModel> model,
                                                    std::shared_ptr<Saver> saver,
                                                    std::shared_ptr<ExecutionLog> log) {
  const Builder builder{spec, model, std::move(log)};
  const Json& agent = spec.at("agent");
  AgentOptions options;
  options.model = std::move(model);
  options.tools = builder.tools_for(agent);
  options.system_prompt = agent.value("system_prompt", "");
  options.middleware = builder.middleware_for(agent);
  options.checkpointer = std::move(saver);
  return create_agent(std::move(options));
}

}  // namespace tollgate::scenarios

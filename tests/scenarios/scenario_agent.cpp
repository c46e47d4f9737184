#include "scenarios/scenario_agent.h"

#include <stdexcept>

#include "tollgate/deep_agent.h"
#include "tollgate/error.h"
#include "tollgate/graph.h"
#include "tollgate/messages.h"

namespace tollgate::scenarios {
namespace {

// The `when` functions a scenario may attach by name (the seed examples' Python predicates).
WhenFn when_function(const std::string& name) {
  if (name == "writes_outside_workspace") {
    return [](const ToolCallReview& call) {
      const Json& args = call.tool_call["args"];
      const std::string path = args.is_object() ? args.value("file_path", "") : "";
      return path.rfind("/workspace/", 0) != 0;
    };
  }
  throw std::invalid_argument("unknown scenario when function '" + name + "'");
}

InterruptOn interrupt_on_of(const Json& agent) {
  InterruptOn interrupt_on = parse_interrupt_on(agent.value("interrupt_on", Json::object()));
  const Json functions = agent.value("when_functions", Json::object());
  for (const auto& [tool, name] : functions.items()) {
    interrupt_on.at(tool).config.when = when_function(name.get<std::string>());
  }
  return interrupt_on;
}

struct Builder {
  const Json& spec;
  std::shared_ptr<ChatModel> model;
  std::shared_ptr<ExecutionLog> log;

  std::vector<std::shared_ptr<const AgentMiddleware>> middleware_for(const Json& agent) const {
    std::vector<std::shared_ptr<const AgentMiddleware>> middleware;
    if (agent.value("patch_tool_calls", false)) middleware.push_back(make_patch_tool_calls());
    if (agent.contains("interrupt_on")) {
      HumanInTheLoopOptions options;
      options.interrupt_on = interrupt_on_of(agent);
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
      tools.push_back(scenario_tool(name.get<std::string>(), log));
    }
    return tools;
  }

  std::shared_ptr<CompiledGraph> plain_agent(const Json& agent, std::string name) const {
    AgentOptions options;
    options.model = model;
    options.tools = tools_for(agent);
    options.system_prompt = agent.value("system_prompt", "");
    options.middleware = middleware_for(agent);
    options.name = std::move(name);
    return create_agent(std::move(options));
  }

  // The library's create_deep_agent from the spec (parse_deep_agent_options), with catalog
  // tools and scenario-named `when` predicates.
  std::shared_ptr<CompiledGraph> deep_agent(Json agent, std::shared_ptr<Saver> saver) const {
    const Json functions = agent.value("when_functions", Json::object());
    agent.erase("when_functions");
    DeepAgentResolvers resolvers;
    resolvers.tool = [this](const std::string& name) {
      try {
        return scenario_tool(name, log);
      } catch (const std::invalid_argument& e) {
        throw Error::InvalidArgument(e.what());
      }
    };
    resolvers.compiled_subagent = [this](const Json& sub, const std::string& name) {
      return std::shared_ptr<const CompiledGraph>(plain_agent(sub, name));
    };
    DeepAgentOptions options = parse_deep_agent_options(agent, resolvers);
    for (const auto& [tool, name] : functions.items()) {
      options.interrupt_on.at(tool).config.when = when_function(name.get<std::string>());
    }
    if (!agent.contains("general_purpose_subagent")) options.general_purpose_subagent = false;
    options.model = model;
    options.checkpointer = std::move(saver);
    return create_deep_agent(std::move(options));
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
  if (agent.value("kind", "agent") == "deep_agent") return builder.deep_agent(agent, saver);
  AgentOptions options;
  options.model = std::move(model);
  options.tools = builder.tools_for(agent);
  options.system_prompt = agent.value("system_prompt", "");
  options.middleware = builder.middleware_for(agent);
  options.checkpointer = std::move(saver);
  return create_agent(std::move(options));
}

}  // namespace tollgate::scenarios

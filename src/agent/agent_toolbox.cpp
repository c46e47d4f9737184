#include "agent/agent_toolbox.h"

#include <set>

#include "tollgate/error.h"
#include "tollgate/graph.h"

namespace tollgate {
namespace {

class VectorToolbox final : public AgentToolbox {
 public:
  explicit VectorToolbox(const std::vector<Tool>& tools) : tools_(tools) {}

  std::vector<std::string> names() const override {
    std::vector<std::string> names;
    names.reserve(tools_.size());
    for (const auto& tool : tools_) names.push_back(tool.name());
    return names;
  }

  std::vector<std::string> check_args(const std::string& tool, const Json& args) const override {
    std::vector<std::string> lines;
    if (const Tool* found = find_tool(tools_, tool)) {
      for (const auto& error : found->check_args(args)) lines.push_back(error.to_string());
    }
    return lines;
  }

 private:
  const std::vector<Tool>& tools_;
};

}  // namespace

std::unique_ptr<AgentToolbox> make_agent_toolbox(const std::vector<Tool>& tools) {
  std::set<std::string, std::less<>> names;
  for (const auto& tool : tools) {
    if (!names.insert(tool.name()).second) {
      throw Error::InvalidArgument("create_agent: tool '" + tool.name() +
                                   "' is defined more than once");
    }
  }
  return std::make_unique<VectorToolbox>(tools);
}

std::vector<ToolSpec> tool_specs_of(const std::vector<Tool>& tools) {
  std::vector<ToolSpec> specs;
  specs.reserve(tools.size());
  for (const auto& tool : tools)
    specs.push_back(ToolSpec{tool.name(), tool.description(), tool.args_schema()});
  return specs;
}

Json run_agent_tool(const std::vector<Tool>& tools, const Json& tool_call, Runtime* runtime,
                    Json* state_update, const Json* review_rules) {
  ToolContext context;
  context.state_update = state_update;
  context.runtime = runtime;
  context.run_context = runtime != nullptr ? &runtime->context() : nullptr;
  context.run_started_by = runtime != nullptr ? &runtime->started_by() : nullptr;
  context.run_decided_by = runtime != nullptr ? &runtime->decided_by() : nullptr;
  context.review_rules = review_rules;
  return run_tool_call(tool_call, tools, std::move(context));
}

}  // namespace tollgate

// create_deep_agent: assembles deepagents' stack on create_agent — tools (write_todos, the
// filesystem, task, the user's), the prompt, PatchToolCalls and HumanInTheLoop — and builds
// each subagent with the inheritance rules of the reference (HITL_SEMANTICS.md §6.1).
#include <algorithm>
#include <set>

#include "agent/deep_agent_texts.h"
#include "tollgate/deep_agent.h"
#include "tollgate/error.h"

namespace tollgate {
namespace {

using Middleware = std::shared_ptr<const AgentMiddleware>;

// The built-in tools followed by the user's; a user tool replaces the built-in of its name.
std::vector<Tool> merge_tools(std::vector<Tool> builtin, const std::vector<Tool>& user) {
  std::set<std::string> user_names;
  for (const auto& tool : user) user_names.insert(tool.name());
  std::vector<Tool> tools;
  for (auto& tool : builtin) {
    if (user_names.count(tool.name()) == 0) tools.push_back(std::move(tool));
  }
  tools.insert(tools.end(), user.begin(), user.end());
  return tools;
}

// Permission-derived review entries, overridden per tool by the user's.
InterruptOn merge_interrupt_on(const std::vector<FilesystemPermission>& permissions,
                               const InterruptOn& user) {
  InterruptOn merged = interrupt_on_from_permissions(permissions);
  for (const auto& [tool, policy] : user) merged[tool] = policy;
  return merged;
}

// An inherited policy keeps only the tools the inheriting agent has.
InterruptOn only_tools(const InterruptOn& policy, const std::vector<Tool>& tools) {
  InterruptOn kept;
  for (const auto& [name, entry] : policy) {
    if (find_tool(tools, name) != nullptr) kept[name] = entry;
  }
  return kept;
}

std::string join_prompts(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) {
    if (part.empty()) continue;
    if (!out.empty()) out += "\n\n";
    out += part;
  }
  return out;
}

struct Builder {
  const DeepAgentOptions& options;
  std::shared_ptr<const FilesystemBackend> backend;

  Middleware review(InterruptOn interrupt_on) const {
    HumanInTheLoopOptions hitl;
    hitl.interrupt_on = std::move(interrupt_on);
    hitl.description_prefix = options.description_prefix;
    hitl.key_style = options.key_style;
    return make_human_in_the_loop(std::move(hitl));
  }

  // The middleware of an agent of the stack: state keys, PatchToolCalls, the caller's, review.
  std::vector<Middleware> middleware(const std::vector<Middleware>& extra,
                                     InterruptOn interrupt_on) const {
    std::vector<Middleware> stack{make_deep_agent_state(), make_patch_tool_calls()};
    stack.insert(stack.end(), extra.begin(), extra.end());
    if (!interrupt_on.empty()) stack.push_back(review(std::move(interrupt_on)));
    return stack;
  }

  // The main agent's interrupt_on may name its own tools and those of the declarative
  // subagents that inherit it (no interrupt_on of their own); any other name gates nothing and
  // is refused, as create_agent refuses it, so that a typo or a subagent's own policy never
  // switches a review off unnoticed.
  void check_interrupt_on_names(const std::vector<Tool>& main_tools) const {
    std::vector<std::string> names;
    for (const auto& tool : main_tools) names.push_back(tool.name());
    for (const auto& spec : options.subagents) {
      if (spec.interrupt_on || !spec.tools) continue;
      for (const auto& tool : *spec.tools) names.push_back(tool.name());
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    if (!options.interrupt_on.empty()) review(options.interrupt_on)->check_tools(names);
  }

  std::shared_ptr<CompiledGraph> subagent(const SubAgent& spec) const {
    if (spec.name.empty()) throw Error::InvalidArgument("create_deep_agent: a subagent has no name");
    if (spec.description.empty()) {
      throw Error::InvalidArgument("create_deep_agent: subagent '" + spec.name +
                                   "' has no description");
    }
    const auto& permissions = spec.permissions ? *spec.permissions : options.permissions;
    std::vector<Tool> tools = merge_tools(make_filesystem_tools(backend, permissions),
                                          spec.tools ? *spec.tools : options.tools);
    const InterruptOn own =
        spec.interrupt_on ? *spec.interrupt_on : only_tools(options.interrupt_on, tools);
    AgentOptions agent;
    agent.model = spec.model ? spec.model : options.model;
    agent.system_prompt = spec.system_prompt;
    agent.middleware = middleware(spec.middleware, merge_interrupt_on(permissions, own));
    agent.tools = std::move(tools);
    agent.model_options = options.model_options;
    agent.name = spec.name;
    return create_agent(std::move(agent));
  }

  std::vector<CompiledSubAgent> subagents() const {
    std::vector<CompiledSubAgent> out;
    bool has_general_purpose = false;
    for (const auto& spec : options.subagents) {
      has_general_purpose = has_general_purpose || spec.name == deep_texts::kGeneralPurposeName;
      out.push_back({spec.name, spec.description, subagent(spec)});
    }
    for (const auto& compiled : options.compiled_subagents) {
      has_general_purpose = has_general_purpose || compiled.name == deep_texts::kGeneralPurposeName;
      out.push_back(compiled);
    }
    if (options.general_purpose_subagent && !has_general_purpose) {
      SubAgent general;
      general.name = std::string(deep_texts::kGeneralPurposeName);
      general.description = std::string(deep_texts::kGeneralPurposeDescription);
      general.system_prompt = std::string(deep_texts::kDefaultSubagentPrompt);
      out.insert(out.begin(), {general.name, general.description, subagent(general)});
    }
    return out;
  }
};

}  // namespace

std::shared_ptr<CompiledGraph> create_deep_agent(DeepAgentOptions options) {
  if (!options.model) throw Error::InvalidArgument("create_deep_agent: model is required");
  const Builder builder{options,
                        options.backend ? options.backend : make_state_backend()};

  std::vector<Tool> builtin{make_write_todos_tool()};
  for (auto& tool : make_filesystem_tools(builder.backend, options.permissions)) {
    builtin.push_back(std::move(tool));
  }
  const std::vector<CompiledSubAgent> subagents = builder.subagents();
  if (!subagents.empty()) builtin.push_back(make_task_tool(subagents));

  AgentOptions agent;
  agent.model = options.model;
  agent.tools = merge_tools(std::move(builtin), options.tools);
  builder.check_interrupt_on_names(agent.tools);
  agent.system_prompt =
      join_prompts({options.system_prompt, deep_texts::kBaseAgentPrompt,
                    deep_texts::kWriteTodosSystemPrompt, deep_texts::kFilesystemSystemPrompt,
                    subagents.empty() ? std::string_view() : deep_texts::kTaskSystemPrompt});
  agent.middleware = builder.middleware(
      options.middleware,
      merge_interrupt_on(options.permissions, only_tools(options.interrupt_on, agent.tools)));
  agent.checkpointer = options.checkpointer;
  agent.model_options = options.model_options;
  agent.name = options.name;
  return create_agent(std::move(agent));
}

}  // namespace tollgate

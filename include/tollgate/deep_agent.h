// create_deep_agent: deepagents' agent harness on create_agent — a planning tool
// (write_todos), the filesystem tools over a backend, a `task` tool that runs subagents as
// nested graphs, PatchToolCalls, and HumanInTheLoop whenever a tool or a filesystem permission
// asks for review.
//
//   auto agent = create_deep_agent({
//       .model = init_chat_model("anthropic:claude-sonnet-4-6"),
//       .tools = {send_email},
//       .interrupt_on = parse_interrupt_on(Json{{"send_email", true}}),
//       .subagents = {{.name = "file-manager", .description = "Manages file operations",
//                      .system_prompt = "You are a file management assistant.",
//                      .interrupt_on = parse_interrupt_on(Json{{"read_file", true}})}},
//       .permissions = {FilesystemPermission({"write"}, {"/secrets/**"}, "interrupt")},
//       .checkpointer = make_memory_saver()});
//
// A review raised inside a subagent pauses the parent run: the parent's interrupts carry it
// (the subagent's checkpoints live in the calling tool task's namespace), and the resume on
// the parent thread continues the subagent where it stopped — its earlier steps and the
// parent's other tool calls of that turn do not run again. Parallel `task` calls that each
// pause give one interrupt per subagent, in call order, answered by interrupt id.
//
// Inheritance (deepagents): a declarative subagent's own interrupt_on and permissions REPLACE
// the main agent's; without them it inherits the main agent's (entries for tools it lacks are
// dropped). The general-purpose subagent inherits the main agent's; compiled subagents inherit
// nothing.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tollgate/agent.h"
#include "tollgate/filesystem.h"
#include "tollgate/human_in_the_loop.h"

namespace tollgate {

// A subagent built by create_deep_agent on the main agent's model, backend and checkpointer.
struct SubAgent {
  std::string name;
  std::string description;    // shown to the main agent's model in the task tool
  std::string system_prompt;  // the subagent's whole system prompt
  std::optional<std::vector<Tool>> tools;  // nullopt: the main agent's tools
  std::shared_ptr<ChatModel> model;        // null: the main agent's model
  std::optional<InterruptOn> interrupt_on;                       // replaces; nullopt inherits
  std::optional<std::vector<FilesystemPermission>> permissions;  // replaces; nullopt inherits
  std::vector<std::shared_ptr<const AgentMiddleware>> middleware;
};

// Any compiled graph as a subagent (deepagents' CompiledSubAgent). Its input is
// {"messages": [the task description as a human message], "files": the caller's files}; its
// output must have "messages" (the last AI text becomes the task's ToolMessage).
struct CompiledSubAgent {
  std::string name;
  std::string description;
  std::shared_ptr<const CompiledGraph> runnable;
};

struct DeepAgentOptions {
  std::shared_ptr<ChatModel> model;  // required; shared with subagents that name none
  std::vector<Tool> tools;           // a tool named like a built-in one replaces it
  std::string system_prompt;         // put before the built-in prompt
  InterruptOn interrupt_on;          // overrides permission-derived entries per tool
  std::vector<SubAgent> subagents;
  std::vector<CompiledSubAgent> compiled_subagents;
  std::vector<FilesystemPermission> permissions;
  std::shared_ptr<const FilesystemBackend> backend;  // null: files in the graph state
  std::shared_ptr<Saver> checkpointer;
  std::vector<std::shared_ptr<const AgentMiddleware>> middleware;  // after PatchToolCalls
  bool general_purpose_subagent = true;  // added unless one named "general-purpose" exists
  std::string description_prefix = "Tool execution requires approval";
  KeyStyle key_style = KeyStyle::kPython;
  Json model_options = Json::object();
  std::string name = "deep_agent";
};

// Builds and compiles the deep agent. Throws Error(kInvalidArgument) for a missing model, a
// subagent without a name or description, two subagents of one name, a compiled subagent
// without a graph, and whatever create_agent refuses.
std::shared_ptr<CompiledGraph> create_deep_agent(DeepAgentOptions options);

// How parse_deep_agent_options finds what a JSON spec names.
struct DeepAgentResolvers {
  // The tool of a "tools" entry; throws Error(kInvalidArgument) for an unknown name.
  std::function<Tool(const std::string& name)> tool;
  // A subagent's "model" value (a provider string, ...); may be empty: then "model" is refused.
  std::function<std::shared_ptr<ChatModel>(const Json& model)> model;
  // A "compiled_subagents" entry's "agent" value as a graph; may be empty: then they are refused.
  std::function<std::shared_ptr<const CompiledGraph>(const Json& agent, const std::string& name)>
      compiled_subagent;
  // An "interrupt_on" value (of the agent or a subagent) at the JSON path `where`; may be empty:
  // then parse_interrupt_on reads it. Config files pass parse_declared_interrupt_on.
  std::function<InterruptOn(const Json& interrupt_on, const std::string& where)> interrupt_on;
};

// Reads a deep agent's options from JSON, with the keys of DeepAgentOptions in snake_case:
// tools, system_prompt, interrupt_on, permissions, subagents ([{name, description,
// system_prompt, tools, model, interrupt_on, permissions}]), compiled_subagents ([{name,
// description, agent}]), backend ({"kind": "state"} | {"kind": "directory", "root": DIR}),
// general_purpose_subagent, description_prefix, key_style ("python" | "js"), name. "kind" and
// "model" of the top level are the caller's (ignored here). The model and the checkpointer are
// left for the caller to set. Throws Error(kInvalidArgument) naming the field under `where`
// ("agents.deep.subagents[0].name: required").
DeepAgentOptions parse_deep_agent_options(const Json& spec, const DeepAgentResolvers& resolvers,
                                          const std::string& where = "agent");

// The building blocks, for an agent of your own:
// The `task` tool over `subagents` (name -> graph); `description` is the tool description
// with {available_agents} replaced by the subagent list (empty: deepagents' text).
Tool make_task_tool(std::vector<CompiledSubAgent> subagents, std::string description = {});
// write_todos: keeps the model's todo list in the state key "todos".
Tool make_write_todos_tool();
// Declares the deep agent's state keys on create_agent: "files" (merged per path, null
// deletes) and "todos". Hooks nothing.
std::shared_ptr<const AgentMiddleware> make_deep_agent_state();

}  // namespace tollgate

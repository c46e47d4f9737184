// Agents declared in a JSON config file — the `"agents"` object `tollgate serve --config FILE`
// reads (docs/config.md), loadable from C++ so a program of your own serves the same file:
//
//   {"agents": {
//      "mail": {
//        "model": "scripted", "script_file": "mail_script.json",      // or "openai:gpt-4.1-mini"
//        "system_prompt": "You help with email.",
//        "tools": ["send_email", "read_file"],
//        "interrupt_on": {
//          "send_email": {"allowed_decisions": ["approve", "edit", "reject"],
//                         "description": "Send mail to {to}?",
//                         "when": {"arg": "to", "not_matches": ".*@example\\.com$"}}},
//        "description_prefix": "Please review", "key_style": "python",
//        "description": "Writes email; mail outside example.com waits for a person."}}}
//
//   auto agents = load_agent_config("tollgate.json", {.tools = my_tools});
//   for (const auto& agent : agents)                        // e.g. into a server's GraphRegistry
//     graphs.add(agent.graph_id, [agent](auto saver) { return agent.build(saver); },
//                agent.description);
//
// An agent with "kind": "deep_agent" is built by create_deep_agent instead (planning, the
// filesystem tools, `task` subagents, FilesystemPermission rules); its keys are those of
// DeepAgentOptions in snake_case (docs/deep_agents.md), with model/script/script_file/description
// as above, and a "directory" backend's relative root taken from the config file's folder:
//
//   "research": {"kind": "deep_agent", "model": "anthropic:claude-sonnet-4-6",
//                "backend": {"kind": "directory", "root": "files"},
//                "permissions": [{"operations": ["write"], "paths": ["/secrets/**"],
//                                 "mode": "interrupt"}],
//                "subagents": [{"name": "critic", "description": "Reviews drafts."}]}
//
// Every mistake is refused when the file is loaded, with the file and the JSON path:
// "tollgate.json: agents.mail.interrupt_on.send_email.when: unknown key 'startswith' ...".
// Relative paths (script_file) resolve against the config file's folder.
//
// Thread-safety: loading is a pure function of its inputs; a loaded AgentDeclaration is
// immutable and build() may be called from any thread (the model it shares is thread-safe).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tollgate/agent.h"
#include "tollgate/chat_model.h"
#include "tollgate/deep_agent.h"
#include "tollgate/human_in_the_loop.h"
#include "tollgate/json.h"
#include "tollgate/tool.h"

namespace tollgate {

struct AgentConfigOptions {
  // The tools declarations may name (copied into each agent that names them).
  std::vector<Tool> tools;
  // The model of an agent that names none; "" means $TOLLGATE_MODEL, else "demo" (which
  // model_options.providers must then provide).
  std::string default_model;
  // Passed to init_chat_model for every agent (script and script_file come from the agent).
  ModelOptions model_options;
  // The folder the tools take relative paths from; path rules in `when` read absolute paths
  // inside it as relative (PolicyContext::sandbox).
  std::filesystem::path sandbox;
};

enum class AgentKind { kAgent, kDeepAgent };

// One declared agent, ready to compile. For kAgent, `options` holds the model (built once,
// shared by every run), tools, system prompt and middleware (PatchToolCalls, then
// HumanInTheLoop when the agent has an interrupt_on); for kDeepAgent, `deep` holds what
// create_deep_agent takes. Neither has a checkpointer.
struct AgentDeclaration {
  std::string graph_id;
  std::string description;  // shown in /assistants; "" when the file gives none
  AgentKind kind = AgentKind::kAgent;
  AgentOptions options;
  DeepAgentOptions deep;

  // The model of its runs (options.model or deep.model).
  const std::shared_ptr<ChatModel>& model() const;

  // Compiles the agent with `checkpointer` (may be null: no persistence).
  std::shared_ptr<CompiledGraph> build(std::shared_ptr<Saver> checkpointer) const;
};

// Parses the value of "agents" (an object of graph id -> declaration), sorted by graph id.
// `base_dir` resolves relative script_file paths. Throws Error(kInvalidArgument) whose
// message starts with the JSON path: "agents.<id>.<field>...: what is wrong".
std::vector<AgentDeclaration> parse_agent_declarations(const Json& agents,
                                                       const std::filesystem::path& base_dir,
                                                       const AgentConfigOptions& options);

// Reads `file` and parses its "agents" object; an empty vector when the file has none. Errors
// are prefixed with the file name ("tollgate.json: agents.mail.tools[1]: unknown tool 'x'").
std::vector<AgentDeclaration> load_agent_config(const std::filesystem::path& file,
                                                const AgentConfigOptions& options);

// Reads a JSON file that must hold an object. Throws Error(kInvalidArgument) "<file>: cannot be
// read" / "<file>: not valid JSON: ..." / "<file>: must hold a JSON object".
Json read_json_object_file(const std::filesystem::path& file);

// A review policy file (`tollgate chat --policy`, docs/chat.md):
//   {"description_prefix": "...", "interrupt_on": {<tool>: true | false | {config}}}
// or the bare interrupt_on map. The entries are those of a config file
// (parse_declared_interrupt_on), checked against `context` (tools, sandbox). Throws
// Error(kInvalidArgument) naming the field; load_policy_file prefixes "policy file <path>: ".
HumanInTheLoopOptions parse_policy(const Json& json, const PolicyContext& context = {});
HumanInTheLoopOptions load_policy_file(const std::filesystem::path& file,
                                       const PolicyContext& context = {});

}  // namespace tollgate

// Agents declared in a JSON config file: parsing and validation with JSON-path errors.
#include "tollgate/agent_config.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "tollgate/error.h"
#include "tollgate/middleware.h"

namespace tollgate {
namespace {

const char* const kAgentKeys[] = {
    "kind",  "model",        "script",             "script_file", "system_prompt",
    "tools", "interrupt_on", "description_prefix", "key_style",   "description"};

// Keys of a deep agent's entry that are the config file's, not DeepAgentOptions'.
const char* const kDeclarationOnlyKeys[] = {"script", "script_file", "description"};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string string_field(const Json& entry, const char* key, const std::string& at) {
  if (!entry.contains(key)) return "";
  if (!entry[key].is_string()) throw Error::InvalidArgument(at + "." + key + ": must be a string");
  return entry[key].get<std::string>();
}

const Tool& named_tool(const std::vector<Tool>& available, const std::string& name) {
  const Tool* tool = find_tool(available, name);
  if (tool != nullptr) return *tool;
  std::vector<std::string> known;
  for (const auto& t : available) known.push_back(t.name());
  throw Error::InvalidArgument("unknown tool '" + name +
                               "' (available: " + (known.empty() ? "none" : joined(known)) + ")");
}

// The agent's tools, in the order named; every name must be one of `available`.
std::vector<Tool> select_tools(const Json& names, const std::string& at,
                               const std::vector<Tool>& available) {
  if (!names.is_array()) throw Error::InvalidArgument(at + ": must be an array of tool names");
  std::vector<Tool> tools;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string item = at + "[" + std::to_string(i) + "]";
    if (!names[i].is_string()) throw Error::InvalidArgument(item + ": must be a tool name");
    const std::string name = names[i].get<std::string>();
    const Tool* tool = nullptr;
    try {
      tool = &named_tool(available, name);
    } catch (const Error& e) {
      throw Error::InvalidArgument(item + ": " + e.what());
    }
    if (!seen.insert(name).second)
      throw Error::InvalidArgument(item + ": tool '" + name + "' is listed twice");
    tools.push_back(*tool);
  }
  return tools;
}

std::shared_ptr<ChatModel> build_model(const Json& entry, const std::string& at,
                                       const std::filesystem::path& base_dir,
                                       const AgentConfigOptions& config) {
  const std::string spec =
      entry.contains("model") ? string_field(entry, "model", at) : config.default_model;
  const bool scripted = spec == "scripted" || spec.rfind("scripted:", 0) == 0;
  const bool has_script = entry.contains("script");
  const bool has_file = entry.contains("script_file");
  if (!scripted && (has_script || has_file)) {
    throw Error::InvalidArgument(at + "." + (has_script ? "script" : "script_file") +
                                 ": only used with \"model\": \"scripted\"");
  }
  ModelOptions options = config.model_options;
  if (scripted) {
    if (has_script == has_file)
      throw Error::InvalidArgument(at +
                                   ": a scripted model needs exactly one of \"script\" or "
                                   "\"script_file\"");
    if (has_script) {
      options.script = entry["script"];
      options.script_file.clear();
    } else {
      std::filesystem::path file = string_field(entry, "script_file", at);
      if (file.is_relative()) file = base_dir / file;
      options.script_file = file.lexically_normal().string();
    }
  }
  try {
    return init_chat_model(spec, options);
  } catch (const Error& e) {
    // Script errors already name their field ("script.conversations[0]..."/"script_file ...").
    const std::string text = e.what();
    const bool names_script = text.rfind("script", 0) == 0;
    throw Error::InvalidArgument(at + (names_script ? "." : ".model: ") + text);
  }
}

HumanInTheLoopOptions review_options(const Json& entry, const std::string& at,
                                     const std::vector<Tool>& tools,
                                     const AgentConfigOptions& config) {
  HumanInTheLoopOptions hitl;
  if (entry.contains("interrupt_on")) {
    PolicyContext context;
    context.tools.emplace();
    for (const auto& tool : tools) context.tools->push_back(tool.name());
    context.sandbox = config.sandbox;
    hitl.interrupt_on =
        parse_declared_interrupt_on(entry["interrupt_on"], at + ".interrupt_on", context);
  }
  if (entry.contains("description_prefix"))
    hitl.description_prefix = string_field(entry, "description_prefix", at);
  if (entry.contains("key_style")) {
    const std::string style = string_field(entry, "key_style", at);
    if (style == "python") {
      hitl.key_style = KeyStyle::kPython;
    } else if (style == "js") {
      hitl.key_style = KeyStyle::kJs;
    } else {
      throw Error::InvalidArgument(at + ".key_style: must be \"python\" or \"js\", got \"" + style +
                                   "\"");
    }
  }
  return hitl;
}

// A "kind": "deep_agent" entry: DeepAgentOptions from its keys, tools from the config's, the
// top-level model as for any agent, a directory backend's relative root from `base_dir`.
AgentDeclaration parse_deep_agent(const std::string& graph_id, const Json& entry,
                                  const std::string& at, const std::filesystem::path& base_dir,
                                  const AgentConfigOptions& config) {
  Json spec = entry;
  for (const char* key : kDeclarationOnlyKeys) spec.erase(key);
  if (spec.contains("backend") && spec["backend"].is_object() &&
      spec["backend"].value("kind", Json()) == "directory" && spec["backend"].contains("root") &&
      spec["backend"]["root"].is_string()) {
    std::filesystem::path root = spec["backend"]["root"].get<std::string>();
    if (root.is_relative()) spec["backend"]["root"] = (base_dir / root).lexically_normal().string();
  }
  DeepAgentResolvers resolvers;
  resolvers.tool = [&config](const std::string& name) { return named_tool(config.tools, name); };
  resolvers.model = [&config](const Json& model) -> std::shared_ptr<ChatModel> {
    if (!model.is_string()) throw Error::InvalidArgument("must be a model string");
    return init_chat_model(model.get<std::string>(), config.model_options);
  };
  resolvers.interrupt_on = [&config](const Json& interrupt_on, const std::string& where) {
    PolicyContext context;
    context.sandbox = config.sandbox;
    return parse_declared_interrupt_on(interrupt_on, where, context);
  };
  AgentDeclaration agent;
  agent.graph_id = graph_id;
  agent.kind = AgentKind::kDeepAgent;
  agent.description = string_field(entry, "description", at);
  agent.deep = parse_deep_agent_options(spec, resolvers, at);
  if (!entry.contains("name")) agent.deep.name = graph_id;
  agent.deep.model = build_model(entry, at, base_dir, config);
  // What create_deep_agent refuses (an interrupt_on entry that gates nothing, two subagents of
  // one name) is a mistake of the file: found now, not at the first run.
  try {
    agent.build(nullptr);
  } catch (const Error& e) {
    throw Error::InvalidArgument(at + ": " + e.what());
  }
  return agent;
}

AgentDeclaration parse_agent(const std::string& graph_id, const Json& entry,
                             const std::filesystem::path& base_dir,
                             const AgentConfigOptions& config) {
  const std::string at = "agents." + graph_id;
  if (graph_id.empty()) throw Error::InvalidArgument("agents: a graph id must not be empty");
  if (!entry.is_object()) throw Error::InvalidArgument(at + ": must be an object");
  const std::string kind = entry.contains("kind") ? string_field(entry, "kind", at) : "agent";
  if (kind == "deep_agent") return parse_deep_agent(graph_id, entry, at, base_dir, config);
  if (kind != "agent")
    throw Error::InvalidArgument(at + ".kind: must be \"agent\" or \"deep_agent\", got \"" +
                                 kind + "\"");
  for (const auto& [key, value] : entry.items()) {
    (void)value;
    if (std::find(std::begin(kAgentKeys), std::end(kAgentKeys), key) == std::end(kAgentKeys)) {
      throw Error::InvalidArgument(at + ": unknown key '" + key +
                                   "' (expected kind, model, script, script_file, "
                                   "system_prompt, tools, interrupt_on, description_prefix, "
                                   "key_style, description)");
    }
  }
  AgentDeclaration agent;
  agent.graph_id = graph_id;
  agent.description = string_field(entry, "description", at);
  agent.options.name = graph_id;
  agent.options.system_prompt = string_field(entry, "system_prompt", at);
  if (entry.contains("tools"))
    agent.options.tools = select_tools(entry["tools"], at + ".tools", config.tools);
  HumanInTheLoopOptions hitl = review_options(entry, at, agent.options.tools, config);
  agent.options.model = build_model(entry, at, base_dir, config);
  agent.options.middleware.push_back(make_patch_tool_calls());
  if (!hitl.interrupt_on.empty())
    agent.options.middleware.push_back(make_human_in_the_loop(std::move(hitl)));
  return agent;
}

}  // namespace

const std::shared_ptr<ChatModel>& AgentDeclaration::model() const {
  return kind == AgentKind::kDeepAgent ? deep.model : options.model;
}

std::shared_ptr<CompiledGraph> AgentDeclaration::build(std::shared_ptr<Saver> checkpointer) const {
  if (kind == AgentKind::kDeepAgent) {
    DeepAgentOptions copy = deep;
    copy.checkpointer = std::move(checkpointer);
    return create_deep_agent(std::move(copy));
  }
  AgentOptions copy = options;
  copy.checkpointer = std::move(checkpointer);
  return create_agent(std::move(copy));
}

std::vector<AgentDeclaration> parse_agent_declarations(const Json& agents,
                                                       const std::filesystem::path& base_dir,
                                                       const AgentConfigOptions& options) {
  if (!agents.is_object())
    throw Error::InvalidArgument("agents: must be an object of graph id -> agent");
  std::vector<AgentDeclaration> result;
  for (const auto& [graph_id, entry] : agents.items())
    result.push_back(parse_agent(graph_id, entry, base_dir, options));
  return result;
}

Json read_json_object_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error::InvalidArgument(file.string() + ": cannot be read");
  Json json;
  try {
    json = Json::parse(in);
  } catch (const Json::exception& e) {  // a syntax error, or a number past a double's range
    throw Error::InvalidArgument(file.string() + ": not valid JSON: " + e.what());
  }
  if (!json.is_object()) throw Error::InvalidArgument(file.string() + ": must hold a JSON object");
  return json;
}

std::vector<AgentDeclaration> load_agent_config(const std::filesystem::path& file,
                                                const AgentConfigOptions& options) {
  const Json json = read_json_object_file(file);
  if (!json.contains("agents")) return {};
  try {
    return parse_agent_declarations(json["agents"], file.parent_path(), options);
  } catch (const Error& e) {
    throw Error::InvalidArgument(file.string() + ": " + e.what());
  }
}

HumanInTheLoopOptions parse_policy(const Json& json, const PolicyContext& context) {
  if (!json.is_object()) throw Error::InvalidArgument("policy: must be a JSON object");
  HumanInTheLoopOptions options;
  const Json* map = &json;
  if (json.contains("interrupt_on")) {
    for (const auto& [key, value] : json.items()) {
      (void)value;
      if (key != "interrupt_on" && key != "description_prefix")
        throw Error::InvalidArgument("policy: unknown key '" + key +
                                     "' (expected interrupt_on, description_prefix)");
    }
    map = &json["interrupt_on"];
    if (json.contains("description_prefix"))
      options.description_prefix = string_field(json, "description_prefix", "policy");
  }
  options.interrupt_on = parse_declared_interrupt_on(*map, "interrupt_on", context);
  return options;
}

HumanInTheLoopOptions load_policy_file(const std::filesystem::path& file,
                                       const PolicyContext& context) {
  const std::string name = "policy file " + file.string();
  std::ifstream in(file);
  if (!in) throw Error::InvalidArgument(name + ": cannot be read");
  Json json;
  try {
    json = Json::parse(in);
  } catch (const Json::exception& e) {  // a syntax error, or a number past a double's range
    throw Error::InvalidArgument(name + ": not valid JSON: " + e.what());
  }
  try {
    return parse_policy(json, context);
  } catch (const Error& e) {
    throw Error::InvalidArgument(name + ": " + e.what());
  }
}

}  // namespace tollgate

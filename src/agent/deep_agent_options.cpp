// parse_deep_agent_options: a deep agent declared in JSON (the config file, scenario files).
#include <set>

#include "tollgate/deep_agent.h"
#include "tollgate/error.h"

namespace tollgate {
namespace {

Error field_error(const std::string& where, const std::string& problem) {
  return Error::InvalidArgument(where + ": " + problem);
}

void check_keys(const Json& object, const std::string& where, std::set<std::string> allowed) {
  if (!object.is_object()) throw field_error(where, "expected an object");
  for (const auto& [key, value] : object.items()) {
    if (allowed.count(key) == 0) throw field_error(where + "." + key, "unknown key");
  }
}

std::string text(const Json& object, const char* key, const std::string& where, bool required) {
  const auto it = object.find(key);
  if (it == object.end()) {
    if (required) throw field_error(where + "." + key, "required");
    return "";
  }
  if (!it->is_string()) throw field_error(where + "." + key, "expected a string");
  return it->get<std::string>();
}

// Re-throws an Error of a nested parser with the field's path in front.
template <typename Fn>
auto at_field(const std::string& where, Fn&& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    if (std::string(e.what()).rfind(where, 0) == 0) throw;
    throw field_error(where, e.what());
  }
}

std::vector<Tool> tools_of(const Json& list, const std::string& where,
                           const DeepAgentResolvers& resolvers) {
  if (!list.is_array()) throw field_error(where, "expected a list of tool names");
  std::vector<Tool> tools;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!list[i].is_string()) throw field_error(at, "expected a tool name");
    tools.push_back(at_field(at, [&] { return resolvers.tool(list[i].get<std::string>()); }));
  }
  return tools;
}

InterruptOn interrupt_on_of(const Json& value, const std::string& where,
                            const DeepAgentResolvers& resolvers) {
  if (resolvers.interrupt_on) return resolvers.interrupt_on(value, where);
  return at_field(where, [&] { return parse_interrupt_on(value); });
}

std::vector<FilesystemPermission> permissions_of(const Json& value, const std::string& where) {
  return at_field(where, [&] { return parse_filesystem_permissions(value); });
}

SubAgent subagent_of(const Json& entry, const std::string& where,
                     const DeepAgentResolvers& resolvers) {
  check_keys(entry, where,
             {"name", "description", "system_prompt", "tools", "model", "interrupt_on",
              "permissions"});
  SubAgent sub;
  sub.name = text(entry, "name", where, true);
  sub.description = text(entry, "description", where, true);
  sub.system_prompt = text(entry, "system_prompt", where, false);
  if (entry.contains("tools")) sub.tools = tools_of(entry["tools"], where + ".tools", resolvers);
  if (entry.contains("model")) {
    if (!resolvers.model) throw field_error(where + ".model", "not supported here");
    sub.model = at_field(where + ".model", [&] { return resolvers.model(entry["model"]); });
  }
  if (entry.contains("interrupt_on")) {
    sub.interrupt_on = interrupt_on_of(entry["interrupt_on"], where + ".interrupt_on", resolvers);
  }
  if (entry.contains("permissions")) {
    sub.permissions = permissions_of(entry["permissions"], where + ".permissions");
  }
  return sub;
}

std::shared_ptr<const FilesystemBackend> backend_of(const Json& value, const std::string& where) {
  check_keys(value, where, {"kind", "root"});
  const std::string kind = text(value, "kind", where, true);
  if (kind == "state") return make_state_backend();
  if (kind == "directory") {
    const std::string root = text(value, "root", where, true);
    return at_field(where + ".root", [&] { return make_directory_backend(root); });
  }
  throw field_error(where + ".kind", "unknown backend '" + kind + "' (expected 'state' or 'directory')");
}

template <typename Each>
void each_entry(const Json& spec, const char* key, const std::string& where, Each&& each) {
  if (!spec.contains(key)) return;
  const Json& list = spec[key];
  if (!list.is_array()) throw field_error(where + "." + key, "expected a list");
  for (std::size_t i = 0; i < list.size(); ++i) {
    each(list[i], where + "." + key + "[" + std::to_string(i) + "]");
  }
}

}  // namespace

DeepAgentOptions parse_deep_agent_options(const Json& spec, const DeepAgentResolvers& resolvers,
                                          const std::string& where) {
  check_keys(spec, where,
             {"kind", "model", "tools", "system_prompt", "interrupt_on", "permissions", "subagents",
              "compiled_subagents", "backend", "general_purpose_subagent", "description_prefix",
              "key_style", "name"});
  DeepAgentOptions options;
  if (spec.contains("tools")) options.tools = tools_of(spec["tools"], where + ".tools", resolvers);
  options.system_prompt = text(spec, "system_prompt", where, false);
  if (spec.contains("interrupt_on")) {
    options.interrupt_on = interrupt_on_of(spec["interrupt_on"], where + ".interrupt_on", resolvers);
  }
  if (spec.contains("permissions")) {
    options.permissions = permissions_of(spec["permissions"], where + ".permissions");
  }
  each_entry(spec, "subagents", where, [&](const Json& entry, const std::string& at) {
    options.subagents.push_back(subagent_of(entry, at, resolvers));
  });
  each_entry(spec, "compiled_subagents", where, [&](const Json& entry, const std::string& at) {
    check_keys(entry, at, {"name", "description", "agent"});
    if (!resolvers.compiled_subagent) throw field_error(at, "compiled subagents are not supported here");
    if (!entry.contains("agent")) throw field_error(at + ".agent", "required");
    CompiledSubAgent sub;
    sub.name = text(entry, "name", at, true);
    sub.description = text(entry, "description", at, true);
    sub.runnable = at_field(at + ".agent",
                            [&] { return resolvers.compiled_subagent(entry["agent"], sub.name); });
    options.compiled_subagents.push_back(std::move(sub));
  });
  if (spec.contains("backend")) options.backend = backend_of(spec["backend"], where + ".backend");
  if (spec.contains("general_purpose_subagent")) {
    if (!spec["general_purpose_subagent"].is_boolean()) {
      throw field_error(where + ".general_purpose_subagent", "expected true or false");
    }
    options.general_purpose_subagent = spec["general_purpose_subagent"].get<bool>();
  }
  if (spec.contains("description_prefix")) {
    options.description_prefix = text(spec, "description_prefix", where, true);
  }
  if (spec.contains("key_style")) {
    const std::string style = text(spec, "key_style", where, true);
    if (style != "python" && style != "js") {
      throw field_error(where + ".key_style", "expected 'python' or 'js'");
    }
    options.key_style = style == "js" ? KeyStyle::kJs : KeyStyle::kPython;
  }
  if (spec.contains("name")) options.name = text(spec, "name", where, true);
  return options;
}

}  // namespace tollgate

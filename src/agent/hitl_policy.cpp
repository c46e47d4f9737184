// Review policy: parsing interrupt_on (JSON or C++), failing closed on bad configs, and
// deciding per tool call whether a person must review it.
#include <algorithm>
#include <regex>

#include "agent/hitl_texts.h"
#include "agent/python_format.h"
#include "tollgate/error.h"
#include "tollgate/human_in_the_loop.h"

namespace tollgate {
namespace {

constexpr DecisionType kAllDecisions[] = {DecisionType::kApprove, DecisionType::kEdit,
                                          DecisionType::kReject, DecisionType::kRespond};

const Json* find_either(const Json& object, const char* snake, const char* camel) {
  auto it = object.find(snake);
  if (it != object.end()) return &*it;
  it = object.find(camel);
  return it != object.end() ? &*it : nullptr;
}

std::string arg_text(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// {"template": "Delete {path}?"}: {tool} is the tool name, {x} the argument x.
DescriptionFn template_description(const std::string& tool, std::string text) {
  return [tool, text = std::move(text)](const ToolCallReview& call) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
      const std::size_t close = text[i] == '{' ? text.find('}', i + 1) : std::string::npos;
      if (close == std::string::npos) {
        out += text[i++];
        continue;
      }
      const std::string key = text.substr(i + 1, close - i - 1);
      const Json& args = call.tool_call.contains("args") ? call.tool_call["args"] : null_json();
      if (key == "tool") {
        out += call.tool_call.value("name", tool);
      } else if (args.is_object() && args.contains(key)) {
        out += arg_text(args[key]);
      } else {
        out += text.substr(i, close - i + 1);
      }
      i = close + 1;
    }
    return out;
  };
}

// {"arg": "path", "starts_with": "/etc"} and friends.
WhenFn declarative_when(const std::string& tool, const Json& rule) {
  auto fail = [&tool](const std::string& what) {
    return Error::InvalidArgument("interrupt_on." + tool + ".when: " + what);
  };
  if (!rule.is_object())
    throw fail("must be an object like {\"arg\": \"path\", \"starts_with\": \"/etc\"}");
  const auto arg_it = rule.find("arg");
  if (arg_it == rule.end() || !arg_it->is_string()) throw fail("'arg' must be a string");
  const std::string arg = arg_it->get<std::string>();
  std::string op;
  Json operand;
  for (const auto& [key, value] : rule.items()) {
    if (key == "arg") continue;
    if (key != "starts_with" && key != "equals" && key != "contains" && key != "matches") {
      throw fail("unknown key '" + key + "' (expected starts_with, equals, contains or matches)");
    }
    if (!op.empty()) throw fail("more than one condition ('" + op + "' and '" + key + "')");
    op = key;
    operand = value;
  }
  if (op.empty()) throw fail("missing a condition (starts_with, equals, contains or matches)");
  if (op != "equals" && !operand.is_string()) throw fail("'" + op + "' must be a string");
  std::optional<std::regex> pattern;
  if (op == "matches") {
    try {
      pattern.emplace(operand.get<std::string>(), std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw fail("'matches' is not a valid regular expression: " + std::string(e.what()));
    }
  }
  return [arg, op, operand, pattern](const ToolCallReview& call) {
    const auto args = call.tool_call.find("args");
    if (args == call.tool_call.end() || !args->is_object()) return false;
    const auto value = args->find(arg);
    if (value == args->end()) return false;
    if (op == "equals") return *value == operand;
    if (!value->is_string()) return false;
    const std::string& text = value->get_ref<const std::string&>();
    const std::string& needle = operand.get_ref<const std::string&>();
    if (op == "starts_with") return text.rfind(needle, 0) == 0;
    if (op == "contains") return text.find(needle) != std::string::npos;
    return std::regex_search(text, *pattern);
  };
}

InterruptOnConfig parse_config(const std::string& tool, const Json& object) {
  InterruptOnConfig config;
  for (const auto& [key, value] : object.items()) config.source_keys.push_back(key);
  if (const Json* allowed = find_either(object, "allowed_decisions", "allowedDecisions")) {
    config.source_allowed_decisions = *allowed;
    if (allowed->is_array()) {
      for (const auto& item : *allowed) {
        config.allowed_decisions.push_back(item.is_string() ? item.get<std::string>()
                                                            : item.dump());
      }
    }
  }
  if (const auto it = object.find("description"); it != object.end()) {
    if (it->is_string()) {
      config.description = it->get<std::string>();
    } else if (it->is_object() && it->contains("template") && (*it)["template"].is_string()) {
      config.description_fn = template_description(tool, (*it)["template"].get<std::string>());
    } else {
      throw Error::InvalidArgument("interrupt_on." + tool +
                                   ".description: must be a string or {\"template\": string}");
    }
  }
  if (const auto it = object.find("when"); it != object.end()) {
    config.when = declarative_when(tool, *it);
  }
  if (const Json* schema = find_either(object, "args_schema", "argsSchema")) {
    if (!schema->is_object()) {
      throw Error::InvalidArgument("interrupt_on." + tool + ".args_schema: must be an object");
    }
    config.args_schema = *schema;
  }
  return config;
}

// Fail closed: the allowed decisions, or Error(kInvalidArgument) with Python's text.
std::vector<DecisionType> resolve_allowed(const std::string& tool,
                                          const InterruptOnConfig& config) {
  std::vector<DecisionType> allowed;
  bool valid = !config.allowed_decisions.empty();
  for (const auto& name : config.allowed_decisions) {
    const auto type = parse_decision_type(name);
    if (!type) {
      valid = false;
      break;
    }
    if (std::find(allowed.begin(), allowed.end(), *type) == allowed.end()) allowed.push_back(*type);
  }
  if (valid) return allowed;

  std::vector<std::string> keys = config.source_keys;
  if (keys.empty()) {  // a config built in C++: name the fields that are set
    if (!config.allowed_decisions.empty()) keys.emplace_back("allowed_decisions");
    if (config.args_schema) keys.emplace_back("args_schema");
    if (config.description || config.description_fn) keys.emplace_back("description");
    if (config.when) keys.emplace_back("when");
  }
  std::sort(keys.begin(), keys.end());
  Json shown = config.source_allowed_decisions;
  if (shown.is_null() && !config.allowed_decisions.empty()) shown = config.allowed_decisions;
  throw Error::InvalidArgument(hitl_texts::format_text(
      hitl_texts::kInvalidConfig,
      {{"tool", tool}, {"keys", python_repr(Json(keys))}, {"allowed", python_repr(shown)}}));
}

}  // namespace

const char* decision_type_name(DecisionType type) {
  switch (type) {
    case DecisionType::kApprove:
      return "approve";
    case DecisionType::kEdit:
      return "edit";
    case DecisionType::kReject:
      return "reject";
    case DecisionType::kRespond:
      return "respond";
  }
  return "?";
}

std::optional<DecisionType> parse_decision_type(const std::string& name) {
  for (const DecisionType type : kAllDecisions) {
    if (name == decision_type_name(type)) return type;
  }
  return std::nullopt;
}

InterruptOn parse_interrupt_on(const Json& json) {
  if (!json.is_object()) {
    throw Error::InvalidArgument("interrupt_on: must be an object mapping tool names to policies");
  }
  InterruptOn result;
  for (const auto& [tool, value] : json.items()) {
    if (value.is_boolean()) {
      result[tool] =
          value.get<bool>() ? ToolReviewPolicy::review_all() : ToolReviewPolicy::auto_approve();
    } else if (value.is_object()) {
      result[tool] = ToolReviewPolicy::with(parse_config(tool, value));
    } else {
      throw Error::InvalidArgument("interrupt_on." + tool +
                                   ": must be true, false or an object with allowed_decisions");
    }
  }
  return result;
}

HitlPolicy::HitlPolicy(HumanInTheLoopOptions options) : options_(std::move(options)) {
  for (const auto& [tool, policy] : options_.interrupt_on) {
    switch (policy.kind) {
      case ToolReviewPolicy::Kind::kNone:
        break;
      case ToolReviewPolicy::Kind::kAll:
        resolved_[tool] = Resolved{{std::begin(kAllDecisions), std::end(kAllDecisions)}, nullptr};
        break;
      case ToolReviewPolicy::Kind::kConfig:
        resolved_[tool] = Resolved{resolve_allowed(tool, policy.config), &policy.config};
        break;
    }
  }
}

bool HitlPolicy::gates_tool(const std::string& tool_name) const {
  return resolved_.find(tool_name) != resolved_.end();
}

std::optional<std::vector<DecisionType>> HitlPolicy::review_for(const ToolCallReview& call) const {
  const auto name = call.tool_call.find("name");
  if (name == call.tool_call.end() || !name->is_string()) return std::nullopt;
  const auto it = resolved_.find(name->get_ref<const std::string&>());
  if (it == resolved_.end()) return std::nullopt;
  if (it->second.config != nullptr && it->second.config->when && !it->second.config->when(call)) {
    return std::nullopt;
  }
  return it->second.allowed;
}

std::string HitlPolicy::describe(const ToolCallReview& call) const {
  const std::string name = call.tool_call.value("name", "");
  const auto it = resolved_.find(name);
  if (it != resolved_.end() && it->second.config != nullptr) {
    const InterruptOnConfig& config = *it->second.config;
    if (config.description_fn) return config.description_fn(call);
    if (config.description) return *config.description;
  }
  const Json& args = call.tool_call.contains("args") ? call.tool_call["args"] : null_json();
  return hitl_texts::format_text(
      hitl_texts::kDefaultDescription,
      {{"prefix", options_.description_prefix}, {"tool", name}, {"args", args.dump(2)}});
}

}  // namespace tollgate

// Review policy: parsing interrupt_on (the C++ API's JSON and the declared form of config and
// policy files), failing closed on bad configs and unknown tools, and deciding per tool call
// whether a person must review it.
#include <algorithm>

#include "agent/hitl_texts.h"
#include "agent/python_format.h"
#include "core/duration.h"
#include "tollgate/error.h"
#include "tollgate/human_in_the_loop.h"
#include "tollgate/when_rules.h"

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

// "90s", "15m", "2h", "1d": a positive whole number and one unit.
std::chrono::milliseconds parse_timeout(const Json& value, const std::string& field) {
  const std::string shown = value.is_string() ? "'" + value.get<std::string>() + "'" : value.dump();
  const std::string refusal = field + ": " + shown +
                              " is not a duration like \"90s\", \"15m\", \"2h\" or \"1d\" (a "
                              "positive whole number of seconds, minutes, hours or days)";
  if (!value.is_string()) throw Error::InvalidArgument(refusal);
  const auto duration = core::parse_duration(value.get_ref<const std::string&>());
  if (!duration) throw Error::InvalidArgument(refusal);
  return *duration;
}

// {"type": "reject" | "respond", "message": "..."}; the type is checked when the policy is
// built, so that approve gets its own refusal.
OnTimeout parse_on_timeout(const Json& value, const std::string& field) {
  if (!value.is_object())
    throw Error::InvalidArgument(field + ": must be an object {\"type\", \"message\"}");
  OnTimeout on_timeout;
  for (const auto& [key, item] : value.items()) {
    if (key == "type") {
      const auto type = item.is_string() ? parse_decision_type(item.get<std::string>())
                                         : std::nullopt;
      if (!type) {
        throw Error::InvalidArgument(field + ".type: " + item.dump() +
                                     " is not \"reject\" or \"respond\"");
      }
      on_timeout.type = *type;
    } else if (key == "message") {
      if (!item.is_string()) throw Error::InvalidArgument(field + ".message: must be a string");
      on_timeout.message = item.get<std::string>();
    } else {
      throw Error::InvalidArgument(field + ": unknown key '" + key + "' (expected type, message)");
    }
  }
  return on_timeout;
}

InterruptOnConfig parse_config(const std::string& tool, const Json& object,
                               const std::string& field, const PolicyContext& context) {
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
      throw Error::InvalidArgument(field +
                                   ".description: must be a string or {\"template\": string}");
    }
  }
  if (const auto it = object.find("when"); it != object.end()) {
    config.when = parse_when_rule(*it, field + ".when", context);
  }
  if (const Json* schema = find_either(object, "args_schema", "argsSchema")) {
    if (!schema->is_object()) {
      throw Error::InvalidArgument(field + ".args_schema: must be an object");
    }
    config.args_schema = *schema;
  }
  if (const auto it = object.find("reviewers"); it != object.end()) {
    if (!it->is_array()) throw Error::InvalidArgument(field + ".reviewers: must be a list");
    for (std::size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) {
        throw Error::InvalidArgument(field + ".reviewers[" + std::to_string(i) +
                                     "]: must be a string");
      }
      config.reviewers.push_back((*it)[i].get<std::string>());
    }
  }
  if (const Json* self = find_either(object, "self_approval", "selfApproval")) {
    if (!self->is_boolean()) throw Error::InvalidArgument(field + ".self_approval: must be true or false");
    config.self_approval = self->get<bool>();
  }
  if (const Json* required = find_either(object, "approvals_required", "approvalsRequired")) {
    if (!required->is_number_integer() || required->get<std::int64_t>() < 1 ||
        required->get<std::int64_t>() > 100) {
      throw Error::InvalidArgument(field + ".approvals_required: must be an integer from 1 to 100");
    }
    config.approvals_required = required->get<int>();
  }
  if (const auto it = object.find("timeout"); it != object.end()) {
    config.timeout = parse_timeout(*it, field + ".timeout");
  }
  if (const Json* on_timeout = find_either(object, "on_timeout", "onTimeout")) {
    if (!object.contains("timeout")) {
      throw Error::InvalidArgument(field + ".on_timeout: set without a timeout (add \"timeout\", "
                                   "e.g. \"15m\")");
    }
    config.on_timeout = parse_on_timeout(*on_timeout, field + ".on_timeout");
  }
  return config;
}

// A review deadline: a positive timeout, answered by reject or respond (never approve or
// edit: an unattended gate must not open), by a decision the tool allows. Fails closed.
void check_timeout_rules(const std::string& field, const InterruptOnConfig& config,
                         const std::vector<DecisionType>& allowed) {
  if (!config.timeout) return;
  if (config.timeout->count() <= 0) {
    throw Error::InvalidArgument(field + ".timeout: must be positive");
  }
  const DecisionType type = config.on_timeout.type;
  if (type == DecisionType::kApprove || type == DecisionType::kEdit) {
    throw Error::InvalidArgument(field + ".on_timeout.type: '" + decision_type_name(type) +
                                 "' on timeout is refused: an unattended gate must not open (use "
                                 "reject or respond)");
  }
  if (std::find(allowed.begin(), allowed.end(), type) == allowed.end()) {
    throw Error::InvalidArgument(field + ".on_timeout.type: '" + decision_type_name(type) +
                                 "' is not in the tool's allowed_decisions");
  }
}

// The reviewer rules of a policy (enforced by the server): well-formed entries, at least one
// approval, and no "edit" when several approvals are required. Fails closed.
void check_reviewer_rules(const std::string& field, const InterruptOnConfig& config,
                          const std::vector<DecisionType>& allowed) {
  for (std::size_t i = 0; i < config.reviewers.size(); ++i) {
    const std::string& rule = config.reviewers[i];
    const bool valid = rule == "owner" || (rule.rfind("role:", 0) == 0 && rule.size() > 5) ||
                       (rule.rfind("user:", 0) == 0 && rule.size() > 5);
    if (!valid) {
      throw Error::InvalidArgument(field + ".reviewers[" + std::to_string(i) + "]: '" + rule +
                                   "' is not \"owner\", \"role:<role>\" or \"user:<id>\"");
    }
  }
  if (config.approvals_required < 1) {
    throw Error::InvalidArgument(field + ".approvals_required: must be at least 1");
  }
  if (config.approvals_required > 1 &&
      std::find(allowed.begin(), allowed.end(), DecisionType::kEdit) != allowed.end()) {
    throw Error::InvalidArgument(
        field + ": approvals_required " + std::to_string(config.approvals_required) +
        " with 'edit' allowed: an edited call would run on one reviewer's word (remove 'edit' "
        "from allowed_decisions)");
  }
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

// Fails closed on a typo: a policy for a tool the agent lacks would never review anything.
void check_known_tool(const std::string& field, const std::string& tool,
                      const std::vector<std::string>& known) {
  if (std::find(known.begin(), known.end(), tool) != known.end()) return;
  std::vector<std::string> sorted = known;
  std::sort(sorted.begin(), sorted.end());
  std::string listed;
  for (const auto& name : sorted) listed += (listed.empty() ? "" : ", ") + name;
  throw Error::InvalidArgument(field + ": unknown tool '" + tool +
                               "' (the agent's tools: " + (listed.empty() ? "none" : listed) + ")");
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

InterruptOn parse_interrupt_on(const Json& json, const PolicyContext& context) {
  if (!json.is_object()) {
    throw Error::InvalidArgument("interrupt_on: must be an object mapping tool names to policies");
  }
  InterruptOn result;
  for (const auto& [tool, value] : json.items()) {
    const std::string field = "interrupt_on." + tool;
    if (context.tools) check_known_tool(field, tool, *context.tools);
    if (value.is_boolean()) {
      result[tool] =
          value.get<bool>() ? ToolReviewPolicy::review_all() : ToolReviewPolicy::auto_approve();
    } else if (value.is_object()) {
      result[tool] = ToolReviewPolicy::with(parse_config(tool, value, field, context));
    } else {
      throw Error::InvalidArgument(field +
                                   ": must be true, false or an object with allowed_decisions");
    }
  }
  return result;
}

InterruptOn parse_declared_interrupt_on(const Json& map, const std::string& path,
                                        const PolicyContext& context) {
  if (!map.is_object()) throw Error::InvalidArgument(path + ": must be an object");
  static const char* const kKeys[] = {"allowed_decisions",  "allowedDecisions", "description",
                                      "when",               "args_schema",      "argsSchema",
                                      "reviewers",          "self_approval",    "selfApproval",
                                      "approvals_required", "approvalsRequired", "timeout",
                                      "on_timeout",         "onTimeout"};
  InterruptOn result;
  for (const auto& [tool, entry] : map.items()) {
    const std::string field = path + "." + tool;
    if (context.tools) check_known_tool(field, tool, *context.tools);
    if (entry.is_boolean()) {
      result[tool] =
          entry.get<bool>() ? ToolReviewPolicy::review_all() : ToolReviewPolicy::auto_approve();
      continue;
    }
    if (!entry.is_object())
      throw Error::InvalidArgument(field + ": must be true, false or an object");
    for (const auto& [key, value] : entry.items()) {
      (void)value;
      if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
        throw Error::InvalidArgument(
            field + ": unknown key '" + key +
            "' (expected allowed_decisions, description, when, args_schema, reviewers, "
            "self_approval, approvals_required, timeout, on_timeout)");
      }
    }
    Json config = entry;
    if (const auto it = entry.find("description"); it != entry.end()) {
      const bool template_object = it->is_object() && it->size() == 1 && it->contains("template");
      if (!it->is_string() && !template_object)
        throw Error::InvalidArgument(field + ".description: must be a string or " +
                                     "{\"template\": string}");
      if (it->is_string() && it->get_ref<const std::string&>().find('{') != std::string::npos)
        config["description"] = {{"template", *it}};
    }
    // An omitted allowed_decisions means every decision; an empty or unknown one is refused
    // below (fails closed).
    if (!config.contains("allowed_decisions") && !config.contains("allowedDecisions"))
      config["allowed_decisions"] = Json::array({"approve", "edit", "reject", "respond"});
    ToolReviewPolicy policy = ToolReviewPolicy::with(parse_config(tool, config, field, context));
    std::vector<DecisionType> allowed;
    try {
      allowed = resolve_allowed(tool, policy.config);
    } catch (const Error& e) {
      throw Error::InvalidArgument(field + ": " + e.what());
    }
    check_reviewer_rules(field, policy.config, allowed);
    check_timeout_rules(field, policy.config, allowed);
    result[tool] = std::move(policy);
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
      case ToolReviewPolicy::Kind::kConfig: {
        std::vector<DecisionType> allowed = resolve_allowed(tool, policy.config);
        check_reviewer_rules("interrupt_on." + tool, policy.config, allowed);
        check_timeout_rules("interrupt_on." + tool, policy.config, allowed);
        resolved_[tool] = Resolved{std::move(allowed), &policy.config};
        break;
      }
    }
  }
}

void HitlPolicy::check_tools(const std::vector<std::string>& tool_names) const {
  for (const auto& [tool, policy] : options_.interrupt_on) {
    (void)policy;
    check_known_tool("interrupt_on." + tool, tool, tool_names);
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

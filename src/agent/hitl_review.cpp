// Review requests and decisions (HITL_SEMANTICS.md §1.4–§1.7, Python-latest semantics):
// order preserved, approved and auto-approved calls never dropped, one batched request per
// model turn, the whole response validated before any of it takes effect.
#include "agent/hitl_review.h"

#include <algorithm>
#include <optional>

#include "agent/hitl_texts.h"
#include "agent/python_format.h"
#include "tollgate/error.h"
#include "tollgate/iso_time.h"
#include "tollgate/review_timeout.h"

namespace tollgate::hitl {
namespace {

using hitl_texts::format_text;

const char* key(KeyStyle style, const char* snake, const char* camel) {
  return style == KeyStyle::kPython ? snake : camel;
}

const Json* find_either(const Json& object, const char* snake, const char* camel) {
  auto it = object.find(snake);
  if (it != object.end()) return &*it;
  it = object.find(camel);
  return it != object.end() ? &*it : nullptr;
}

// JavaScript's typeof, which the reference's "must be a string, got X" text uses.
std::string js_type_name(const Json* value) {
  if (value == nullptr) return "undefined";
  if (value->is_null()) return "null";
  if (value->is_number()) return "number";
  if (value->is_boolean()) return "boolean";
  if (value->is_string()) return "string";
  return "object";
}

Json allowed_names(const std::vector<DecisionType>& allowed) {
  Json names = Json::array();
  for (const DecisionType type : allowed) names.push_back(decision_type_name(type));
  return names;
}

const Json& tool_calls_of(const Json& ai_message) {
  const auto it = ai_message.find("tool_calls");
  if (it == ai_message.end() || !it->is_array()) {
    static const Json kEmpty = Json::array();
    return kEmpty;
  }
  return *it;
}

Json tool_message(const Json& tool_call, std::string content, const char* status) {
  return json_object("type", "tool", "content", std::move(content), "name",
                     tool_call.value("name", ""), "tool_call_id", tool_call.value("id", ""),
                     "status", status);
}

std::string id_text(const Json& tool_call) {
  const auto it = tool_call.find("id");
  if (it == tool_call.end() || it->is_null()) return "None";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

void check_keys(const Json& decision, DecisionType type, const std::string& tool) {
  std::vector<std::string> keys = {"type"};
  if (type == DecisionType::kEdit) {
    keys.emplace_back("edited_action");
    keys.emplace_back("editedAction");
  } else if (type == DecisionType::kReject || type == DecisionType::kRespond) {
    keys.emplace_back("message");
  }
  for (const auto& [name, value] : decision.items()) {
    if (std::find(keys.begin(), keys.end(), name) != keys.end()) continue;
    std::string listed;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == "editedAction") continue;  // the same key in the other style
      if (!listed.empty()) listed += ", ";
      listed += "'" + keys[i] + "'";
    }
    throw Error::Unprocessable(format_text(
        hitl_texts::kUnexpectedDecisionKey,
        {{"key", name}, {"tool", tool}, {"type", decision_type_name(type)}, {"keys", listed}}));
  }
}

// The edit's target call, after checking its shape, target tool, policy and arguments.
Json checked_edit(const HitlPolicy& policy, const Json& decision, const Json& tool_call,
                  const ToolCatalog& catalog, const State* state, Runtime* runtime) {
  const std::string tool = tool_call.value("name", "");
  const Json* edited = find_either(decision, "edited_action", "editedAction");
  if (edited == nullptr || !edited->is_object()) {
    throw Error::Unprocessable(format_text(hitl_texts::kEditedActionNotObject, {{"tool", tool}}));
  }
  const auto name = edited->find("name");
  if (name == edited->end() || !name->is_string()) {
    throw Error::Unprocessable(format_text(hitl_texts::kEditedNameNotString, {{"tool", tool}}));
  }
  const auto args = edited->find("args");
  if (args == edited->end() || !args->is_object()) {
    throw Error::Unprocessable(format_text(hitl_texts::kEditedArgsNotObject, {{"tool", tool}}));
  }
  const std::string target = name->get<std::string>();
  if (std::find(catalog.names.begin(), catalog.names.end(), target) == catalog.names.end()) {
    std::vector<std::string> names = catalog.names;
    std::sort(names.begin(), names.end());
    std::string listed;
    for (const auto& n : names) listed += (listed.empty() ? "" : ", ") + n;
    throw Error::Unprocessable(
        format_text(hitl_texts::kEditedToUnknownTool,
                    {{"id", id_text(tool_call)}, {"target", target}, {"tools", listed}}));
  }
  Json executed = tool_call;
  executed["name"] = target;
  executed["args"] = *args;
  if (target != tool) {
    // An edit must not smuggle a call past the target tool's own review (langchain#40166).
    if (policy.review_for(ToolCallReview{executed, state, runtime})) {
      throw Error::Unprocessable(format_text(hitl_texts::kEditedToReviewedTool,
                                             {{"id", id_text(tool_call)}, {"target", target}}));
    }
  }
  if (catalog.validate_args) {
    const std::vector<std::string> errors = catalog.validate_args(target, *args);
    if (!errors.empty()) {
      std::string joined;
      for (const auto& e : errors) joined += (joined.empty() ? "" : "; ") + e;
      throw Error::Unprocessable(
          format_text(hitl_texts::kEditedArgsInvalid,
                      {{"tool", tool}, {"target", target}, {"errors", joined}}));
    }
  }
  return Json{{"name", target}, {"args", *args}};
}

CheckedDecision check_decision(const HitlPolicy& policy, const Json& decision,
                               const Json& tool_call, const std::vector<DecisionType>& allowed,
                               const ToolCatalog& catalog, const State* state, Runtime* runtime) {
  CheckedDecision checked = check_decision_fields(decision, tool_call.value("name", ""), allowed);
  if (checked.type == DecisionType::kEdit) {
    checked.edited = checked_edit(policy, decision, tool_call, catalog, state, runtime);
  }
  return checked;
}

}  // namespace

CheckedDecision check_decision_fields(const Json& decision, const std::string& tool,
                                      const std::vector<DecisionType>& allowed) {
  std::optional<DecisionType> type;
  std::string type_text = "None";
  if (decision.is_object()) {
    const auto it = decision.find("type");
    if (it != decision.end()) {
      type_text = it->is_string() ? it->get<std::string>() : it->dump();
      if (it->is_string()) type = parse_decision_type(type_text);
    }
  }
  if (!type || std::find(allowed.begin(), allowed.end(), *type) == allowed.end()) {
    throw Error::Unprocessable(
        format_text(hitl_texts::kDecisionNotAllowed, {{"decision", decision.dump()},
                                                      {"type", type_text},
                                                      {"tool", tool},
                                                      {"allowed", allowed_names(allowed).dump()}}));
  }
  check_keys(decision, *type, tool);

  CheckedDecision checked{*type, Json(), "", false};
  if (*type == DecisionType::kReject || *type == DecisionType::kRespond) {
    const auto it = decision.find("message");
    const Json* message = it == decision.end() ? nullptr : &*it;
    const bool optional = *type == DecisionType::kReject;
    if (optional && (message == nullptr || message->is_null())) return checked;
    if (message == nullptr || !message->is_string()) {
      throw Error::Unprocessable(format_text(hitl_texts::kMessageNotString,
                                             {{"tool", tool}, {"type", js_type_name(message)}}));
    }
    checked.message = message->get<std::string>();
    checked.has_message = true;
  }
  return checked;
}

const Json* last_ai_message(const Json& messages) {
  if (!messages.is_array()) return nullptr;
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    if (it->is_object() && it->value("type", "") == "ai") return &*it;
  }
  return nullptr;
}

Json reviewer_rules_json(const InterruptOnConfig& declared, KeyStyle style) {
  Json rules = Json::object();
  if (!declared.reviewers.empty()) rules["reviewers"] = declared.reviewers;
  if (!declared.self_approval) rules[key(style, "self_approval", "selfApproval")] = false;
  if (declared.approvals_required != 1) {
    rules[key(style, "approvals_required", "approvalsRequired")] = declared.approvals_required;
  }
  return rules;
}

ReviewBatch build_review_batch(const HitlPolicy& policy, const Json& ai_message, const State* state,
                               Runtime* runtime) {
  const KeyStyle style = policy.options().key_style;
  ReviewBatch batch;
  Json actions = Json::array();
  Json configs = Json::array();
  const Json& calls = tool_calls_of(ai_message);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const ToolCallReview call{calls[i], state, runtime};
    auto allowed = policy.review_for(call);
    if (!allowed) continue;
    const std::string name = calls[i].value("name", "");
    const auto args = calls[i].find("args");
    actions.push_back(json_object("name", name, "args",
                                  args != calls[i].end() ? *args : Json::object(), "description",
                                  policy.describe(call)));
    Json config = json_object(key(style, "action_name", "actionName"), name,
                              key(style, "allowed_decisions", "allowedDecisions"),
                              allowed_names(*allowed));
    const auto policy_it = policy.options().interrupt_on.find(name);
    if (policy_it != policy.options().interrupt_on.end()) {
      const InterruptOnConfig& declared = policy_it->second.config;
      if (declared.args_schema) config[key(style, "args_schema", "argsSchema")] = *declared.args_schema;
      // The reviewer rules the server enforces; written only when they differ from the
      // defaults, so that a default review shows exactly the reference payload.
      config.update(reviewer_rules_json(declared, style));
      // A timed review: when it expires and what the server answers then (review_timeout.h).
      if (declared.timeout) {
        const Clock& clock =
            policy.options().clock != nullptr ? *policy.options().clock : system_clock();
        config[key(style, "expires_at", "expiresAt")] =
            iso_utc_millis(now_millis(clock) + declared.timeout->count());
        config[key(style, "on_timeout", "onTimeout")] = Json{
            {"type", decision_type_name(declared.on_timeout.type)},
            {"message", declared.on_timeout.message.empty()
                            ? std::string(kReviewTimeoutMessage)
                            : declared.on_timeout.message}};
      }
    }
    configs.push_back(std::move(config));
    batch.indices.push_back(i);
    batch.allowed.push_back(std::move(*allowed));
  }
  if (!batch.empty()) {
    batch.request = json_object(key(style, "action_requests", "actionRequests"), std::move(actions),
                                key(style, "review_configs", "reviewConfigs"), std::move(configs));
  }
  return batch;
}

ReviewOutcome apply_decisions(const HitlPolicy& policy, const ReviewBatch& batch,
                              const Json& ai_message, const Json& response,
                              const ToolCatalog& catalog, const State* state, Runtime* runtime) {
  // 1. Check everything; nothing takes effect unless every decision is valid.
  if (!response.is_object() || !response.contains("decisions") ||
      !response["decisions"].is_array()) {
    throw Error::Unprocessable(std::string(hitl_texts::kDecisionsNotArray));
  }
  for (const auto& [name, value] : response.items()) {
    if (name != "decisions") {
      throw Error::Unprocessable(format_text(hitl_texts::kUnexpectedResponseKey, {{"key", name}}));
    }
  }
  const Json& decisions = response["decisions"];
  if (decisions.size() != batch.indices.size()) {
    throw Error::Unprocessable(format_text(
        hitl_texts::kCountMismatch,
        {{"n", std::to_string(decisions.size())}, {"m", std::to_string(batch.indices.size())}}));
  }
  const Json& calls = tool_calls_of(ai_message);
  std::vector<CheckedDecision> checked;
  checked.reserve(decisions.size());
  for (std::size_t i = 0; i < decisions.size(); ++i) {
    checked.push_back(check_decision(policy, decisions[i], calls.at(batch.indices[i]),
                                     batch.allowed[i], catalog, state, runtime));
  }

  // 2. Apply, in tool-call order. Approved calls need nothing: the agent's router sends every
  // call without a ToolMessage to the tools node.
  ReviewOutcome outcome;
  for (std::size_t i = 0; i < checked.size(); ++i) {
    const Json& call = calls.at(batch.indices[i]);
    const CheckedDecision& d = checked[i];
    switch (d.type) {
      case DecisionType::kApprove:
        break;
      case DecisionType::kEdit:
        outcome.edited[call.value("id", "")] = d.edited;
        break;
      case DecisionType::kReject: {
        const std::string tool = call.value("name", "");
        std::string content = d.has_message && !d.message.empty()
                                  ? format_text(hitl_texts::kRejectWithMessage,
                                                {{"tool", tool}, {"message", d.message}})
                                  : format_text(hitl_texts::kRejectNoMessage,
                                                {{"tool", tool}, {"id", id_text(call)}});
        outcome.tool_messages.push_back(tool_message(call, std::move(content), "error"));
        break;
      }
      case DecisionType::kRespond:
        outcome.tool_messages.push_back(tool_message(call, d.message, "success"));
        break;
    }
  }
  return outcome;
}

const Json* recorded_edit(const Json& tool_call, const Json& edited) {
  const auto id = tool_call.find("id");
  if (id == tool_call.end() || !id->is_string() || !edited.is_object()) return nullptr;
  const auto it = edited.find(id->get_ref<const std::string&>());
  return it == edited.end() ? nullptr : &*it;
}

Json executed_call(const Json& tool_call, const Json& edited) {
  const Json* edit = recorded_edit(tool_call, edited);
  if (edit == nullptr) return tool_call;
  Json executed = tool_call;
  executed["name"] = (*edit)["name"];
  executed["args"] = (*edit)["args"];
  return executed;
}

Json annotate_edited_result(Json tool_message, const Json& executed, const std::string& notice) {
  if (notice.empty()) return tool_message;
  std::string text =
      notice + format_text(hitl_texts::kEditExecutedInstead,
                           {{"tool", executed.value("name", "")},
                            {"args", python_json_dumps(executed.value("args", Json::object()))}});
  Json& content = tool_message["content"];
  if (content.is_null()) content = "";
  if (content.is_string()) {
    const std::string& current = content.get_ref<const std::string&>();
    if (current.rfind(text, 0) == 0) return tool_message;  // already annotated
    content = current.empty()
                  ? text
                  : text + std::string(hitl_texts::kEditToolResponseHeader) + "\n" + current;
  } else if (content.is_array()) {
    if (!content.empty()) {
      const Json& first = content.front();
      const bool annotated = (first.is_string() && first.get<std::string>().rfind(text, 0) == 0) ||
                             (first.is_object() && first.value("text", "").rfind(text, 0) == 0);
      if (annotated) return tool_message;
      text += hitl_texts::kEditToolResponseHeader;
    }
    const bool all_strings = std::all_of(content.begin(), content.end(),
                                         [](const Json& block) { return block.is_string(); });
    Json block = all_strings ? Json(text) : Json{{"type", "text"}, {"text", text}};
    content.insert(content.begin(), std::move(block));
  }
  return tool_message;
}

namespace {

const Json& list_of(const Json& request, const char* snake, const char* camel) {
  static const Json kEmpty = Json::array();
  const Json* list = request.is_object() ? find_either(request, snake, camel) : nullptr;
  return list != nullptr && list->is_array() ? *list : kEmpty;
}

// "name {args}": the tool name and its canonical (key-sorted) arguments.
std::string action_text(const Json& action) {
  if (!action.is_object()) return action.dump();
  return action.value("name", "?") + " " + action.value("args", Json::object()).dump();
}

// The first difference between the shown and the rebuilt review, or "" when they match.
std::string review_difference(const Json& shown, const Json& rebuilt) {
  const Json& shown_actions = list_of(shown, "action_requests", "actionRequests");
  const Json& rebuilt_actions = list_of(rebuilt, "action_requests", "actionRequests");
  if (shown_actions.size() != rebuilt_actions.size()) {
    return std::to_string(shown_actions.size()) + " action(s) were shown, " +
           std::to_string(rebuilt_actions.size()) + " would run now";
  }
  for (std::size_t i = 0; i < shown_actions.size(); ++i) {
    const std::string was = action_text(shown_actions[i]);
    const std::string now = action_text(rebuilt_actions[i]);
    if (was != now) {
      return "action " + std::to_string(i) + " was shown as " + was + ", it would run as " + now;
    }
  }
  // The deadline is the pause's, not the rebuild's; and the server may add what it knows
  // (approvals, created_at) to what it shows.
  auto comparable = [](const Json& configs) {
    Json out = configs;
    for (Json& config : out) {
      if (!config.is_object()) continue;
      for (const char* k : {"expires_at", "expiresAt", "approvals", "created_at", "createdAt"})
        config.erase(k);
    }
    return out;
  };
  const Json shown_configs = comparable(list_of(shown, "review_configs", "reviewConfigs"));
  const Json rebuilt_configs = comparable(list_of(rebuilt, "review_configs", "reviewConfigs"));
  if (shown_configs != rebuilt_configs) {
    return "the review configs were shown as " + shown_configs.dump() + ", they are now " +
           rebuilt_configs.dump();
  }
  return "";
}

}  // namespace

void check_same_review(const Json& shown, const Json& rebuilt) {
  const std::string difference = review_difference(shown, rebuilt);
  if (difference.empty()) return;
  throw Error::Conflict(format_text(hitl_texts::kReviewChanged, {{"difference", difference}}));
}

}  // namespace tollgate::hitl

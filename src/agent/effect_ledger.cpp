// The effect ledger around one tool call (effect_ledger.h).
#include "agent/effect_ledger.h"

#include "agent/hitl_review.h"
#include "agent/hitl_texts.h"
#include "agent/tool_fault_seam.h"
#include "tollgate/effect_intents.h"
#include "tollgate/error.h"
#include "tollgate/graph.h"
#include "tollgate/messages.h"

namespace tollgate::effect_ledger {
namespace {

using hitl_texts::format_text;

Json actor_json(const RunActor& actor) {
  if (actor.empty()) return Json();
  return json_object("id", actor.id, "name", actor.name, "roles", actor.roles);
}

// What is stored before the tool runs: enough to tell a reviewer and an auditor which call it
// was and on whose decision it ran.
Json intent_of(const LedgerCall& call, const ToolContext& context) {
  Runtime& runtime = *context.runtime;
  return Json{{"thread_id", runtime.thread_id()},
              {"checkpoint_ns", runtime.checkpoint_ns()},
              {"task_id", runtime.task_id()},
              {"tool_call_id", call.call_id},
              {"name", call.name},
              {"digest", call.digest},
              {"idempotency_key", context.idempotency_key},
              {"decided_by", actor_json(context.decided_by())},
              {"started_by", actor_json(context.started_by())}};
}

Json decided(const LedgerCall& call, const Json& answer) {
  const std::vector<DecisionType> allowed = {DecisionType::kApprove, DecisionType::kReject,
                                             DecisionType::kRespond};
  if (!answer.is_object() || !answer.contains("decisions") || !answer["decisions"].is_array() ||
      answer["decisions"].empty()) {
    throw Error::Unprocessable(std::string(hitl_texts::kDecisionsNotArray));
  }
  for (const auto& [key, value] : answer.items()) {
    if (key != "decisions") {
      throw Error::Unprocessable(format_text(hitl_texts::kUnexpectedResponseKey, {{"key", key}}));
    }
  }
  const Json& decisions = answer["decisions"];
  if (decisions.size() != 1) {
    throw Error::Unprocessable(
        format_text(hitl_texts::kEffectDecisionsNotOne,
                    {{"tool", call.name}, {"n", std::to_string(decisions.size())}}));
  }
  const hitl::CheckedDecision checked =
      hitl::check_decision_fields(decisions[0], call.name, allowed);
  switch (checked.type) {
    case DecisionType::kReject: {
      const std::string text =
          checked.has_message
              ? format_text(hitl_texts::kEffectUncertainRejectedWithMessage,
                            {{"tool", call.name}, {"id", call.call_id}, {"message", checked.message}})
              : format_text(hitl_texts::kEffectUncertainRejected,
                            {{"tool", call.name}, {"id", call.call_id}});
      return tool_message(text, call.call_id, call.name, "error");
    }
    case DecisionType::kRespond:
      return tool_message(checked.message, call.call_id, call.name, "success");
    default:
      return Json();  // approve: run it again
  }
}

}  // namespace

Json effect_uncertain_request(const LedgerCall& call, const Json* review_rules) {
  const std::string description = format_text(
      hitl_texts::kEffectUncertainDescription, {{"tool", call.name}, {"args", call.args.dump(2)}});
  Json action = json_object("name", call.name, "args", call.args, "description", description);
  Json config = json_object("action_name", call.name, "allowed_decisions",
                            Json::array({"approve", "reject", "respond"}), "reason",
                            kEffectUncertain);
  if (review_rules != nullptr && review_rules->is_object()) config.update(*review_rules);
  return json_object("action_requests", Json::array({std::move(action)}), "review_configs",
                     Json::array({std::move(config)}));
}

Json run_recorded(const LedgerCall& call, const ToolContext& context,
                  const std::function<Json()>& execute) {
  Runtime& runtime = *context.runtime;
  if (recorded_intent(runtime, call.call_id) != nullptr) {
    Json answer = runtime.interrupt(effect_uncertain_request(call, context.review_rules));
    Json settled = decided(call, answer);
    if (!settled.is_null()) return settled;
  }
  tool_faults::crash_if_planned_before(call.name);
  record_intent(runtime, call.call_id, intent_of(call, context));
  try {
    return execute();
  } catch (...) {  // only a pause escapes execute(): the call did not finish, nor did it crash
    forget_intent(runtime, call.call_id);
    throw;
  }
}

}  // namespace tollgate::effect_ledger

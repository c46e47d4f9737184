// The human-in-the-loop middleware's core as plain functions, usable without a graph:
// build the one review request of a model turn, check a reviewer's response completely, and
// turn the decisions into state changes. Everything here is pure (no I/O, no interrupts).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tollgate/human_in_the_loop.h"
#include "tollgate/json.h"

namespace tollgate::hitl {

// The reviewed calls of one model turn.
struct ReviewBatch {
  Json request;                                    // HITLRequest, in the configured key style
  std::vector<std::size_t> indices;                // positions in the AI message's tool_calls
  std::vector<std::vector<DecisionType>> allowed;  // per action request
  bool empty() const { return indices.empty(); }
};

// The last AI message of `messages` (searching backwards), or nullptr.
const Json* last_ai_message(const Json& messages);

// The reviewer rules of `declared` as a review config writes them (reviewers, self_approval,
// approvals_required), each only when it differs from the default; {} for a default review.
Json reviewer_rules_json(const InterruptOnConfig& declared, KeyStyle style);

// Builds the review request for `ai_message`'s tool calls in tool-call order. `state` and
// `runtime` are handed to description functions and `when` predicates.
ReviewBatch build_review_batch(const HitlPolicy& policy, const Json& ai_message, const State* state,
                               Runtime* runtime);

// What the decision checks need to know about the agent's tools.
struct ToolCatalog {
  std::vector<std::string> names;  // every tool the agent can run
  // Validates arguments against a tool's JSON schema: one "field: problem" line per error,
  // empty when valid. May be empty (no schema checks).
  std::function<std::vector<std::string>(const std::string& tool, const Json& args)> validate_args;
};

// The effect of a valid response.
struct ReviewOutcome {
  Json tool_messages = Json::array();  // for rejected / responded calls, in tool-call order
  Json edited = Json::object();        // tool_call_id -> {"name","args"} to execute instead
};

// A decision that passed every check.
struct CheckedDecision {
  DecisionType type;
  Json edited;          // edit: {"name","args"}
  std::string message;  // reject / respond
  bool has_message = false;
};

// Checks one decision on a call of `tool` — its type among `allowed`, its keys, the message of
// a reject or respond — but not an edit's target (apply_decisions does that with the policy).
// Throws Error(kUnprocessable) with the reference text.
CheckedDecision check_decision_fields(const Json& decision, const std::string& tool,
                                      const std::vector<DecisionType>& allowed);

// Checks the whole response before anything happens, then applies it. Every refusal throws
// Error(kUnprocessable) with the reference text, so the run stays paused and answerable.
ReviewOutcome apply_decisions(const HitlPolicy& policy, const ReviewBatch& batch,
                              const Json& ai_message, const Json& response,
                              const ToolCatalog& catalog, const State* state, Runtime* runtime);

// Throws Error(kConflict) naming the first difference unless `rebuilt` (the review request
// built again on resume) shows the same actions — the same tool names and arguments, in order —
// and the same review configs as `shown` (the request stored when the run paused). Decisions
// are applied only to what the reviewer was shown.
void check_same_review(const Json& shown, const Json& rebuilt);

// The reviewer's edit of `tool_call` recorded in `edited` (the hitl_edited_tool_calls state
// key), or null when there is none. Points into `edited`.
const Json* recorded_edit(const Json& tool_call, const Json& edited);

// The tool call that actually runs for `tool_call`: the reviewer's edit if one is recorded
// in `edited`, else the call itself.
Json executed_call(const Json& tool_call, const Json& edited);

// Prepends the edit notice ("<notice> Executed instead: <name> with arguments <json>.") to a
// ToolMessage's content; idempotent. An empty notice leaves the message unchanged.
Json annotate_edited_result(Json tool_message, const Json& executed, const std::string& notice);

}  // namespace tollgate::hitl

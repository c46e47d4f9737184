// Human-in-the-loop review of tool calls: which calls a person must decide on, and how.
//
// `interrupt_on` maps a tool name to its review policy:
//   true   -> every call is reviewed; all four decisions allowed (approve, edit, reject, respond)
//   false  -> never reviewed (auto-approved); so is every tool not named
//   config -> reviewed with `allowed_decisions` (non-empty, known types — anything else is
//             refused when the policy is built: a typo must never switch the gate off),
//             optional `description` (text or function), `when` predicate (review only the
//             calls it returns true for), `args_schema` (informational, for the reviewer's UI).
//
// All reviewed calls of one model turn go into ONE interrupt whose value is a HITLRequest
//   {action_requests:[{name,args,description}], review_configs:[{action_name,allowed_decisions}]}
// and the resume is a HITLResponse {decisions:[...]}, one per action request, in order.
// Semantics follow LangChain Python (latest); see src/agent/hitl_texts.h for every text.
//
// Thread-safety: a built HitlPolicy is immutable; its functions (description, when) must be
// thread-safe and deterministic, because they run again when a paused run resumes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tollgate/json.h"

namespace tollgate {

class Runtime;
class State;

enum class DecisionType { kApprove, kEdit, kReject, kRespond };
const char* decision_type_name(DecisionType type);
std::optional<DecisionType> parse_decision_type(const std::string& name);

// How HITL payloads spell their keys: Python (action_requests, edited_action, ...) or JS
// (actionRequests, editedAction, ...). Input accepts both; output uses the configured one.
enum class KeyStyle { kPython, kJs };

// What a `description` function and a `when` predicate see of a tool call under review.
struct ToolCallReview {
  const Json& tool_call;  // {"id","name","args"}
  const State* state;     // the agent state; null outside a graph
  Runtime* runtime;       // the running node's runtime; null outside a graph
};
using DescriptionFn = std::function<std::string(const ToolCallReview&)>;
using WhenFn = std::function<bool(const ToolCallReview&)>;

struct InterruptOnConfig {
  // Decision type names; validated when the policy is built. Strings (not DecisionType) so a
  // config read from a file keeps its mistakes until they can be reported with the tool name.
  std::vector<std::string> allowed_decisions;
  std::optional<std::string> description;  // used verbatim
  DescriptionFn description_fn;            // takes precedence over `description`
  WhenFn when;                             // absent: every call is reviewed
  std::optional<Json> args_schema;
  // The keys the config was written with (for error messages); filled by the JSON parser.
  std::vector<std::string> source_keys;
  // The raw allowed_decisions value as written (for error messages); null when missing.
  Json source_allowed_decisions;
};

// One entry of interrupt_on: true, false, or a config.
struct ToolReviewPolicy {
  static ToolReviewPolicy review_all() { return {Kind::kAll, {}}; }
  static ToolReviewPolicy auto_approve() { return {Kind::kNone, {}}; }
  static ToolReviewPolicy with(InterruptOnConfig config) {
    return {Kind::kConfig, std::move(config)};
  }

  enum class Kind { kAll, kNone, kConfig } kind = Kind::kAll;
  InterruptOnConfig config;
};
using InterruptOn = std::map<std::string, ToolReviewPolicy>;

// Parses interrupt_on from JSON: {"tool": true | false | {config}}. A config accepts both key
// styles (allowed_decisions/allowedDecisions, args_schema/argsSchema), a string description,
// a template description {"template": "Delete {path}?"} ({name} = an argument, {tool} = the
// tool name), and a declarative `when` rule {"arg": "path", "starts_with" | "equals" |
// "contains" | "matches": value}. Throws Error(kInvalidArgument) naming the field.
InterruptOn parse_interrupt_on(const Json& json);

struct HumanInTheLoopOptions {
  InterruptOn interrupt_on;
  std::string description_prefix = "Tool execution requires approval";
  KeyStyle key_style = KeyStyle::kPython;
  // Prepended to the result of a call a reviewer edited; nullopt disables the notice.
  std::optional<std::string> edit_notice = std::string(
      "Note: a human reviewer replaced this tool call before it ran. The call recorded in your "
      "message is the one you produced, not the one that executed. This was intentional and "
      "authorized. Do not re-issue your original call.");
};

// The resolved, validated review policy. Building it fails closed: a config with missing,
// empty or unknown allowed_decisions throws Error(kInvalidArgument).
class HitlPolicy {
 public:
  explicit HitlPolicy(HumanInTheLoopOptions options);
  HitlPolicy(const HitlPolicy&) = delete;  // holds pointers into its own options
  HitlPolicy& operator=(const HitlPolicy&) = delete;

  // The allowed decisions for a call, or nullopt when it is auto-approved (tool not gated, or
  // its `when` predicate returned false).
  std::optional<std::vector<DecisionType>> review_for(const ToolCallReview& call) const;
  // True when the tool has a review policy at all (before any `when` predicate).
  bool gates_tool(const std::string& tool_name) const;
  std::string describe(const ToolCallReview& call) const;
  const HumanInTheLoopOptions& options() const { return options_; }

 private:
  struct Resolved {
    std::vector<DecisionType> allowed;
    const InterruptOnConfig* config = nullptr;  // points into options_
  };
  HumanInTheLoopOptions options_;
  std::map<std::string, Resolved, std::less<>> resolved_;
};

}  // namespace tollgate

// Human-in-the-loop review of tool calls: which calls a person must decide on, and how.
//
// `interrupt_on` maps a tool name to its review policy:
//   true   -> every call is reviewed; all four decisions allowed (approve, edit, reject, respond)
//   false  -> never reviewed (auto-approved); so is every tool not named
//   config -> reviewed with `allowed_decisions` (non-empty, known types — anything else is
//             refused when the policy is built: a typo must never switch the gate off),
//             optional `description` (text or function), `when` predicate (review only the
//             calls it returns true for), `args_schema` (informational, for the reviewer's UI).
// A tool name the agent does not have is refused too: by create_agent, by
// make_human_in_the_loop(options, tools), and by the JSON parsers when PolicyContext::tools is set.
// From JSON, `when` is a declarative rule (include/tollgate/when_rules.h, docs/config.md).
//
// All reviewed calls of one model turn go into ONE interrupt whose value is a HITLRequest
//   {action_requests:[{name,args,description}], review_configs:[{action_name,allowed_decisions}]}
// and the resume is a HITLResponse {decisions:[...]}, one per action request, in order.
// Semantics follow LangChain Python (latest); see src/agent/hitl_texts.h for every text.
//
// Thread-safety: a built HitlPolicy is immutable; its functions (description, when) must be
// thread-safe and deterministic, because they run again when a paused run resumes.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tollgate/clock.h"
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

// What the server answers a review with when its deadline passed (InterruptOnConfig::timeout):
// reject (the default) or respond; approve and edit are refused when the policy is built (an
// unattended gate must not open), and so is a type the tool's allowed_decisions lack.
struct OnTimeout {
  DecisionType type = DecisionType::kReject;
  // The rejection reason the model reads, or the tool result of a respond. Empty:
  // kReviewTimeoutMessage (review_timeout.h).
  std::string message;
};

struct InterruptOnConfig {
  // Decision type names; validated when the policy is built. Strings (not DecisionType) so a
  // config read from a file keeps its mistakes until they can be reported with the tool name.
  std::vector<std::string> allowed_decisions;
  std::optional<std::string> description;  // used verbatim
  DescriptionFn description_fn;            // takes precedence over `description`
  WhenFn when;                             // absent: every call is reviewed
  std::optional<Json> args_schema;
  // Who may decide, enforced by the server from the interrupt: "owner" (the thread's owner),
  // "role:<role>", "user:<id>". Empty: the default ["owner", "role:reviewer", "role:admin"].
  std::vector<std::string> reviewers;
  // false: the thread's owner may not approve or edit its own action (it may still reject).
  bool self_approval = true;
  // How many distinct allowed reviewers must approve before the call runs (at least 1). More
  // than 1 together with "edit" is refused when the policy is built: an edited call would run
  // on one reviewer's word.
  int approvals_required = 1;
  // How long a review of this tool may wait (positive). When it passes, the server answers the
  // review with `on_timeout` as identity "system:timeout". The paused review shows when
  // (review_configs[i].expires_at, ISO 8601 UTC, and .on_timeout {type, message}). Unset: the
  // review waits until someone decides.
  std::optional<std::chrono::milliseconds> timeout;
  OnTimeout on_timeout;
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

// What a policy read from JSON is checked against: the tools it guards and their folder.
struct PolicyContext {
  // The agent's tool names. When set, an interrupt_on entry for any other tool is refused with
  // its JSON path and the known names; nullopt leaves that check to create_agent.
  std::optional<std::vector<std::string>> tools;
  // The folder the tools take relative paths from (e.g. the demo sandbox). Path rules
  // (path_glob, path_under) read an absolute path inside it as relative to it; empty: every
  // absolute path is outside, so a path rule on one holds (the call is reviewed).
  std::filesystem::path sandbox;
};

// Parses interrupt_on from JSON: {"tool": true | false | {config}}. A config accepts both key
// styles (allowed_decisions/allowedDecisions, args_schema/argsSchema), a string description
// (verbatim), a template description {"template": "Delete {path}?"} ({name} = an argument,
// {tool} = the tool name), and a `when` rule (when_rules.h). A config without
// allowed_decisions is refused when the policy is built (LangChain's rule). Throws
// Error(kInvalidArgument) naming the field: "interrupt_on.<tool>.when: ...".
InterruptOn parse_interrupt_on(const Json& json, const PolicyContext& context = {});

// The interrupt_on of config and policy files (docs/config.md): like parse_interrupt_on, but
// unknown keys are refused, an omitted allowed_decisions means all four, and a string
// description with {name} placeholders is a template. Every entry is resolved at once (fails
// closed). Errors start with `path`: path "agents.mail.interrupt_on" ->
// "agents.mail.interrupt_on.send_email.when: unknown key 'startswith' (expected ...)".
InterruptOn parse_declared_interrupt_on(const Json& map, const std::string& path,
                                        const PolicyContext& context = {});

struct HumanInTheLoopOptions {
  InterruptOn interrupt_on;
  std::string description_prefix = "Tool execution requires approval";
  KeyStyle key_style = KeyStyle::kPython;
  // Where `expires_at` of a timed review is read from; null: the system clock. Must outlive
  // the middleware.
  const Clock* clock = nullptr;
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
  // Throws Error(kInvalidArgument) "interrupt_on.<tool>: unknown tool '<tool>' (the agent's
  // tools: ...)" when interrupt_on names a tool that is not in `tool_names` (fails closed).
  void check_tools(const std::vector<std::string>& tool_names) const;
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

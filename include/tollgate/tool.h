// Tools: what an agent's model may call. A Tool is a name, a description, a JSON Schema of its
// arguments and a C++ function. run_tool_call() executes one tool call of an AI message and
// always answers with a ToolMessage dict the model can read — unknown tool, invalid
// arguments and a failing tool become error ToolMessages (status "error") rather than a
// failed run, so the model can correct itself (HITL_SEMANTICS.md §2.4).
//
//   Tool send_email("send_email", "Sends an email.",
//                   Json::parse(R"({"type":"object","properties":{"to":{"type":"string"}},
//                                   "required":["to"]})"),
//                   [](const Json& args, const ToolContext&) -> Json {
//                     return "Email sent to " + args["to"].get<std::string>();
//                   });
//   Json tool_message = run_tool_call(ai_message["tool_calls"][0], {send_email}, {});
//
// A tool may pause the run for a human with tollgate::interrupt(): the internal exception that
// carries the pause is not a std::exception and passes through run_tool_call untouched.
//
// Inside a graph with a checkpointer, run_tool_call keeps the effect ledger (docs/effects.md):
// before a tool that is not `idempotent` runs, an intent is stored; a later attempt of the step
// that finds the intent without the call's result (the process stopped in between) does not
// run the tool blindly but pauses with an "effect_uncertain" review of the call. Every call
// gets a stable ToolContext::idempotency_key to hand to the system it changes.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tollgate/json.h"
#include "tollgate/json_schema.h"
#include "tollgate/run_actor.h"

namespace tollgate {

class Runtime;

// What a tool sees of the call it runs for. Borrowed pointers, valid during the call only.
struct ToolContext {
  std::string tool_call_id;
  // Stable for this call in this thread: the SHA-256 hex of the thread id, the call's id and
  // the digest of its name and arguments (tool_call_digest). Every attempt of the same call
  // gets the same key, so a target system that keeps it unique (an HTTP Idempotency-Key, a
  // UNIQUE column) performs the effect once. Filled by run_tool_call.
  std::string idempotency_key;
  Runtime* runtime = nullptr;         // the running graph task; null outside a graph
  const Json* run_context = nullptr;  // the run's context (RunConfig::context); may be null
  // Where a tool puts state writes besides its ToolMessage (e.g. {"files": {...}} for the
  // in-state filesystem): keys merged into the agent's state with the message. Null when the
  // caller takes no state writes (run_tool_call outside an agent).
  Json* state_update = nullptr;
  const RunActor* run_started_by = nullptr;  // RunConfig::started_by; may be null
  const RunActor* run_decided_by = nullptr;  // RunConfig::decided_by; may be null
  // The reviewer rules of the review that gates this call (reviewers, self_approval,
  // approvals_required, as its review config writes them; null or {} for the defaults). A
  // review the runtime opens about the call itself (effect_uncertain, docs/effects.md) asks the
  // same reviewers. May be null.
  const Json* review_rules = nullptr;

  const Json& context() const { return run_context != nullptr ? *run_context : null_json(); }
  // Who started the run, and who decided the review it resumes with; empty when unknown.
  const RunActor& started_by() const {
    return run_started_by != nullptr ? *run_started_by : no_actor();
  }
  const RunActor& decided_by() const {
    return run_decided_by != nullptr ? *run_decided_by : no_actor();
  }
};

// A tool's result: a string becomes the ToolMessage content; a ToolMessage dict
// ({"type":"tool","content":...}) is used as it is (tool_call_id, name and status filled in
// when missing); any other JSON value is serialised compactly as the content.
// Throwing a std::exception makes an error ToolMessage with its what().
using ToolFunction = std::function<Json(const Json& args, const ToolContext& context)>;

struct ToolOptions {
  // Running the call again with the same idempotency key has no further effect (the tool or
  // its target dedupes by the key, or it only reads). After a crash such a call is re-run
  // automatically; any other call whose intent was stored pauses for a reviewer instead.
  bool idempotent = false;
};

// Immutable once built; copies share the compiled schema. invoke() may run concurrently from
// several threads when the function allows it (parallel tool calls do this).
class Tool {
 public:
  // Throws Error(kInvalidArgument) for an empty name, an empty function, or an argument
  // schema that does not compile (the message names the tool).
  Tool(std::string name, std::string description, Json args_schema, ToolFunction function,
       ToolOptions options = {});

  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const Json& args_schema() const { return schema_.source(); }
  const JsonSchema& schema() const { return schema_; }
  bool idempotent() const { return options_.idempotent; }

  // The violations of `args` against the argument schema; empty when valid. Arguments are
  // always an object, whatever the schema says.
  std::vector<SchemaError> check_args(const Json& args) const;

  // Calls the function as it is: no validation, no exception handling (run_tool_call does
  // both).
  Json invoke(const Json& args, const ToolContext& context) const;

 private:
  std::string name_;
  std::string description_;
  JsonSchema schema_;
  ToolFunction function_;
  ToolOptions options_;
};

// The digest of a tool call: SHA-256 hex of {"args": args, "name": name} as compact JSON with
// sorted keys (the digest review records keep of an action).
std::string tool_call_digest(const std::string& name, const Json& args);
// ToolContext::idempotency_key of call `tool_call_id` with `digest` in thread `thread_id`.
std::string idempotency_key(const std::string& thread_id, const std::string& tool_call_id,
                            const std::string& digest);

// The tool named `name`, or nullptr.
const Tool* find_tool(const std::vector<Tool>& tools, std::string_view name);

// Runs `tool_call` ({"id","name","args"[,"type"]}; args may also be JSON text) with the tool
// of that name and returns a ToolMessage dict {"type":"tool","content","tool_call_id","name",
// "status","id",...}. The arguments are validated against the tool's schema before every
// execution. Error answers (status "error"), in LangChain's words:
//   unknown tool     "Error: <name> is not a valid tool, try one of [<a>, <b>]."
//   invalid args     "Error invoking tool '<name>' with kwargs <args as JSON> with error:\n
//                     <field>: <problem>\n ... Please fix the error and try again."
//   std::exception   "Error: <what()>\n Please fix your mistakes."
// `context.tool_call_id` and `context.idempotency_key` are set for the call. Inside a graph
// task (context.runtime set) a tool that is not idempotent runs under the effect ledger (see
// above and docs/effects.md); its effect_uncertain review is an interrupt like any other. Throws Error(kInvalidArgument) only
// for a malformed tool call (no string name, or no id to answer to). Anything the tool throws
// that is not a std::exception (a graph interrupt) propagates unchanged.
Json run_tool_call(const Json& tool_call, const std::vector<Tool>& tools, ToolContext context);

}  // namespace tollgate

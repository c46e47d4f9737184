// Agent middleware: code that runs around the model ⇄ tools loop of create_agent.
//
// A middleware overrides any of these (LangChain's AgentMiddleware, HITL_SEMANTICS.md §2):
//   before_agent / after_agent   once per run, at its start / end (graph nodes
//                                "<name>.before_agent", "<name>.after_agent")
//   before_model / after_model   around every model call (nodes "<name>.before_model",
//                                "<name>.after_model"; after_* hooks run in REVERSE order)
//   wrap_model_call              around the model call itself, inside the "model" node
//   wrap_tool_call               around each tool execution, inside the "tools" node
// (first middleware = outermost wrapper). A hook returns a state update and may jump to the
// model, the tools or the end when it declares so in can_jump_to().
//
// Thread-safety: one middleware instance serves every run of the agents it belongs to, possibly
// concurrently, so hooks are const and must not keep per-run state in the object — per-run state
// lives in the graph state (declare its keys in extend_state).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tollgate/chat_model.h"
#include "tollgate/graph.h"
#include "tollgate/human_in_the_loop.h"
#include "tollgate/json.h"
#include "tollgate/tool.h"

namespace tollgate {

enum class JumpTo { kModel, kTools, kEnd };
const char* jump_to_name(JumpTo jump);  // "model", "tools", "end"

// The agent's tools, as middleware sees them.
class AgentToolbox {
 public:
  virtual ~AgentToolbox() = default;
  virtual std::vector<std::string> names() const = 0;
  // "field: problem" lines for `args` against the tool's argument schema; empty when valid
  // (or when the tool is unknown — callers check names() first).
  virtual std::vector<std::string> check_args(const std::string& tool, const Json& args) const = 0;
};

// What a hook sees. Valid only during the call.
struct HookContext {
  const State& state;  // the agent state at the start of this step
  Runtime& runtime;
  const AgentToolbox& tools;
};

struct HookResult {
  Json update = Json::object();  // state writes (e.g. {"messages": [...]})
  std::optional<JumpTo> jump_to;
};

struct ModelCallRequest {
  // The conversation, without the system prompt: the thread's history, shared, not copied. A
  // wrapper that changes it assigns a new list (a JSON array converts).
  ChatMessages messages;
  std::string system_prompt;      // sent first as a system message when not empty
  std::vector<ToolSpec> tools;
  Json options = Json::object();
  const State* state = nullptr;
  Runtime* runtime = nullptr;
};
// Calls the model (or the next wrapper); returns the AI message dict.
using ModelCallHandler = std::function<Json(const ModelCallRequest&)>;

struct ToolCallRequest {
  Json tool_call;                // {"id","name","args","type":"tool_call"} — what will run
  const State* state = nullptr;  // the whole agent state
  Runtime* runtime = nullptr;
  const AgentToolbox* tools = nullptr;
  Json* state_update = nullptr;  // the tool's state writes besides its message (ToolContext)
  // The reviewer rules of the call's review where they differ from the defaults (set by the
  // HumanInTheLoop middleware; null when none): ToolContext::review_rules.
  Json review_rules;
};
// Runs the tool (or the next wrapper); returns the ToolMessage dict.
using ToolCallHandler = std::function<Json(const ToolCallRequest&)>;

class AgentMiddleware {
 public:
  enum Hook : unsigned {
    kBeforeAgent = 1u << 0,
    kBeforeModel = 1u << 1,
    kAfterModel = 1u << 2,
    kAfterAgent = 1u << 3,
    kWrapModelCall = 1u << 4,
    kWrapToolCall = 1u << 5,
  };

  virtual ~AgentMiddleware() = default;

  // Unique within one agent; names the hook nodes.
  virtual std::string name() const = 0;
  // The hooks this middleware implements (a mask of Hook); others are never called.
  virtual unsigned hooks() const = 0;
  // Where `hook` may jump (its HookResult::jump_to must be one of these).
  virtual std::vector<JumpTo> can_jump_to(Hook /*hook*/) const { return {}; }
  // Declares the private state keys this middleware reads and writes.
  virtual void extend_state(StateSchema& /*schema*/) const {}
  // Called by create_agent with the names of the agent's tools. Throws Error(kInvalidArgument)
  // when the middleware refers to a tool the agent does not have (HumanInTheLoop: interrupt_on).
  virtual void check_tools(const std::vector<std::string>& /*tool_names*/) const {}

  virtual std::optional<HookResult> before_agent(const HookContext& /*ctx*/) const { return {}; }
  virtual std::optional<HookResult> before_model(const HookContext& /*ctx*/) const { return {}; }
  virtual std::optional<HookResult> after_model(const HookContext& /*ctx*/) const { return {}; }
  virtual std::optional<HookResult> after_agent(const HookContext& /*ctx*/) const { return {}; }

  virtual Json wrap_model_call(const ModelCallRequest& request,
                               const ModelCallHandler& next) const {
    return next(request);
  }
  virtual Json wrap_tool_call(const ToolCallRequest& request, const ToolCallHandler& next) const {
    return next(request);
  }
};

// The human-in-the-loop middleware (after_model + wrap_tool_call): pauses the run once per
// model turn with one HITLRequest for every call its policy gates, validates the reviewer's
// decisions completely before anything happens (Error(kUnprocessable) otherwise, the run stays
// paused), answers rejected / responded calls with ToolMessages, and executes edits with a
// notice for the model. Throws Error(kInvalidArgument) for a bad policy (fails closed); with
// `tools`, also for an interrupt_on entry naming none of them (create_agent checks that anyway).
std::shared_ptr<const AgentMiddleware> make_human_in_the_loop(HumanInTheLoopOptions options);
std::shared_ptr<const AgentMiddleware> make_human_in_the_loop(HumanInTheLoopOptions options,
                                                              const std::vector<Tool>& tools);

// PatchToolCalls (before_agent): at the start of each run, answers every tool call of the history
// that has no ToolMessage with a "was cancelled" ToolMessage (or "could not be executed" for
// invalid tool calls), so the conversation sent to the model is always well-formed.
std::shared_ptr<const AgentMiddleware> make_patch_tool_calls();

}  // namespace tollgate

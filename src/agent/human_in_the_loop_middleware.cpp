// The human-in-the-loop middleware: the review core (hitl_review.h) wired into the agent loop
// as an after_model hook (one interrupt per model turn) and a tool-call wrapper (edits).
#include <algorithm>

#include "agent/hitl_review.h"
#include "agent/hitl_texts.h"
#include "agent/open_tool_turn.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"
#include "tollgate/middleware.h"
#include "tollgate/resumed_interrupt.h"

namespace tollgate {
namespace {

constexpr const char* kEditedKey = "hitl_edited_tool_calls";

class HumanInTheLoopMiddleware final : public AgentMiddleware {
 public:
  explicit HumanInTheLoopMiddleware(HumanInTheLoopOptions options) : policy_(std::move(options)) {}

  std::string name() const override { return "HumanInTheLoopMiddleware"; }
  unsigned hooks() const override { return kAfterModel | kWrapToolCall; }
  void extend_state(StateSchema& schema) const override {
    schema.last_value(kEditedKey, Json::object()).make_private(kEditedKey);
  }
  void check_tools(const std::vector<std::string>& tool_names) const override {
    policy_.check_tools(tool_names);
  }

  std::optional<HookResult> after_model(const HookContext& ctx) const override {
    // The model's turn; on a resume, the turn with the reviewed calls, which the resume's update
    // may have followed with AI messages of its own (a resolved card kept in the history).
    const Json* shown = resumed_interrupt_value(ctx.runtime);
    const Json& history = ctx.state["messages"];
    const Json* ai = shown != nullptr ? agent::open_tool_turn(history) : hitl::last_ai_message(history);
    hitl::ReviewBatch batch;
    if (ai != nullptr) batch = hitl::build_review_batch(policy_, *ai, &ctx.state, &ctx.runtime);
    // A decision answers the review stored when the run paused: this rebuilt one must match it
    // (also when it would now review nothing), else the decision is refused, not applied.
    if (shown != nullptr) hitl::check_same_review(*shown, batch.request);
    if (batch.empty()) {
      // An earlier turn's edits must not apply to this turn's calls.
      const Json& edited = ctx.state[kEditedKey];
      if (edited.is_object() && !edited.empty())
        return HookResult{{{kEditedKey, Json::object()}}, {}};
      return std::nullopt;
    }
    const std::optional<Json> answer = ctx.runtime.interrupt_or_pause(std::move(batch.request));
    if (!answer) return std::nullopt;  // the run pauses here; the hook's result is discarded
    const Json& response = *answer;

    hitl::ToolCatalog catalog;
    catalog.names = ctx.tools.names();
    catalog.validate_args = [&ctx](const std::string& tool, const Json& args) {
      return ctx.tools.check_args(tool, args);
    };
    hitl::ReviewOutcome outcome =
        hitl::apply_decisions(policy_, batch, *ai, response, catalog, &ctx.state, &ctx.runtime);
    Json messages = Json::array();
    for (auto& message : outcome.tool_messages)
      messages.push_back(normalize_message(std::move(message)));
    HookResult result;
    result.update = json_object(kEditedKey, std::move(outcome.edited));
    if (!messages.empty()) result.update["messages"] = std::move(messages);
    return result;
  }

  Json wrap_tool_call(const ToolCallRequest& request, const ToolCallHandler& next) const override {
    // A call whose review has its own reviewer rules carries them to the tool's context: a
    // review opened about the call later (effect_uncertain) asks the same reviewers.
    const auto declared = policy_.options().interrupt_on.find(request.tool_call.value("name", ""));
    if (declared != policy_.options().interrupt_on.end()) {
      Json rules = hitl::reviewer_rules_json(declared->second.config, policy_.options().key_style);
      if (!rules.empty() && rules != request.review_rules) {
        ToolCallRequest ruled = request;
        ruled.review_rules = std::move(rules);
        return wrap_tool_call(ruled, next);
      }
    }
    const Json& edited = request.state != nullptr ? (*request.state)[kEditedKey] : null_json();
    // Most calls were approved as they are: no copy of the call is made for them.
    if (hitl::recorded_edit(request.tool_call, edited) == nullptr) return next(request);
    Json executed = hitl::executed_call(request.tool_call, edited);
    if (executed == request.tool_call) return next(request);
    // Checked when the decision was made; checked again because state can be edited directly.
    if (request.tools != nullptr) {
      std::vector<std::string> names = request.tools->names();
      const std::string target = executed.value("name", "");
      if (std::find(names.begin(), names.end(), target) == names.end()) {
        std::sort(names.begin(), names.end());
        std::string listed;
        for (const auto& n : names) listed += (listed.empty() ? "" : ", ") + n;
        throw Error::InvalidArgument(hitl_texts::format_text(
            hitl_texts::kEditedToUnknownTool,
            {{"id", request.tool_call.value("id", "")}, {"target", target}, {"tools", listed}}));
      }
    }
    ToolCallRequest replaced = request;
    replaced.tool_call = executed;
    Json result = next(replaced);
    const auto& notice = policy_.options().edit_notice;
    return notice ? hitl::annotate_edited_result(std::move(result), executed, *notice) : result;
  }

 private:
  HitlPolicy policy_;
};

}  // namespace

std::shared_ptr<const AgentMiddleware> make_human_in_the_loop(HumanInTheLoopOptions options) {
  return std::make_shared<const HumanInTheLoopMiddleware>(std::move(options));
}

std::shared_ptr<const AgentMiddleware> make_human_in_the_loop(HumanInTheLoopOptions options,
                                                              const std::vector<Tool>& tools) {
  auto middleware = make_human_in_the_loop(std::move(options));
  std::vector<std::string> names;
  for (const auto& tool : tools) names.push_back(tool.name());
  middleware->check_tools(names);
  return middleware;
}

}  // namespace tollgate

// Every text the human-in-the-loop middleware and PatchToolCalls show to a person or a model,
// in one table. Defaults are LangChain Python's latest strings (HITL_SEMANTICS.md §1.6–§1.9,
// §6.3); texts with no Python counterpart reuse the JS wording where one exists. Placeholders
// are {name} and are filled by format_text().
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace tollgate::hitl_texts {

// ------------------------------------------------------------------ policy (construction)
inline constexpr std::string_view kInvalidConfig =
    "Invalid `interrupt_on` config for tool '{tool}': `allowed_decisions` must be a non-empty "
    "list of decision types (e.g. ['approve', 'reject']). Got config with keys {keys} and "
    "allowed_decisions={allowed}.";

// ------------------------------------------------------------- request (default description)
// "<prefix>\n\nTool: <name>\nArgs: <args>": args rendered as 2-space indented JSON (the JS
// rendering; Python's dict repr means nothing to a JSON client). Keys are sorted.
inline constexpr std::string_view kDefaultDescription = "{prefix}\n\nTool: {tool}\nArgs: {args}";

// ---------------------------------------------------------- response validation (refusals)
inline constexpr std::string_view kDecisionsNotArray =
    "Invalid HITLResponse: decisions must be a non-empty array";
inline constexpr std::string_view kUnexpectedResponseKey =
    "Invalid HITLResponse: unexpected key '{key}' (only 'decisions' is allowed)";
inline constexpr std::string_view kCountMismatch =
    "Number of human decisions ({n}) does not match number of hanging tool calls ({m}).";
inline constexpr std::string_view kDecisionNotAllowed =
    "Unexpected human decision: {decision}. Decision type '{type}' is not allowed for tool "
    "'{tool}'. Expected one of {allowed} based on the tool's configuration.";
inline constexpr std::string_view kUnexpectedDecisionKey =
    "Unexpected key '{key}' in human decision for tool '{tool}': a '{type}' decision has only "
    "{keys}.";
inline constexpr std::string_view kEditedActionNotObject =
    "Invalid edited action for tool \"{tool}\": edited_action must be an object";
inline constexpr std::string_view kEditedNameNotString =
    "Invalid edited action for tool \"{tool}\": name must be a string";
inline constexpr std::string_view kEditedArgsNotObject =
    "Invalid edited action for tool \"{tool}\": args must be an object";
inline constexpr std::string_view kEditedArgsInvalid =
    "Invalid edited action for tool \"{tool}\": args do not match the schema of tool "
    "'{target}': {errors}";
inline constexpr std::string_view kEditedToUnknownTool =
    "Reviewer edited tool call '{id}' to '{target}', which is not an available tool. Available "
    "tools: {tools}.";
inline constexpr std::string_view kEditedToReviewedTool =
    "Reviewer edited tool call '{id}' to '{target}', which requires its own review. Reject this "
    "call instead and let the model propose a '{target}' call.";
inline constexpr std::string_view kMessageNotString =
    "Tool call response for \"{tool}\" must be a string, got {type}";

// A resumed turn whose rebuilt review differs from the one stored when it paused (a changed
// policy, a `when` rule that decides otherwise now): the decision is not applied.
inline constexpr std::string_view kReviewChanged =
    "The decision answers a review that no longer matches the tool calls to run: {difference}. "
    "The decision was not applied; read the thread's state and decide again.";

// ------------------------------------------------------------- what the model sees next
inline constexpr std::string_view kRejectNoMessage =
    "User rejected the tool call for `{tool}` with id {id}. The tool was not executed. Do not "
    "retry this tool call unless the user explicitly requests it.";
inline constexpr std::string_view kRejectWithMessage =
    "User rejected the tool call for `{tool}` with reason: {message}";
// Appended to the configured edit notice (HumanInTheLoopOptions::edit_notice); {args} is
// Python json.dumps-style JSON ({"to": "bob"}).
inline constexpr std::string_view kEditExecutedInstead =
    " Executed instead: {tool} with arguments {args}.";
inline constexpr std::string_view kEditToolResponseHeader = "\n\nTool response:";

// ------------------------------------------------------ effect ledger (docs/effects.md)
// The review of a call whose intent was stored but whose result was not: the process stopped
// while it ran. {args} as in kDefaultDescription.
inline constexpr std::string_view kEffectUncertainDescription =
    "The call to `{tool}` started before the server stopped and may have run: its result was "
    "never recorded, so whether it took effect is unknown. Approve to run it again with the same "
    "idempotency key, reject to treat it as not done, or respond with its result.\n\nTool: "
    "{tool}\nArgs: {args}";
inline constexpr std::string_view kEffectUncertainRejected =
    "The call to `{tool}` with id {id} was cut off by a server restart and a reviewer decided it "
    "did not happen: treat it as not executed. Do not retry this tool call unless the user "
    "explicitly requests it.";
inline constexpr std::string_view kEffectUncertainRejectedWithMessage =
    "The call to `{tool}` with id {id} was cut off by a server restart and a reviewer decided it "
    "did not happen: treat it as not executed. Reason: {message}";
inline constexpr std::string_view kEffectDecisionsNotOne =
    "Invalid HITLResponse: the review of `{tool}` (effect_uncertain) takes exactly one decision, "
    "got {n}.";

// ------------------------------------------------------------------------ PatchToolCalls
inline constexpr std::string_view kPatchCancelled =
    "Tool call {tool} with id {id} was cancelled - another message came in before it could be "
    "completed.";
// A call whose intent was stored without a result (docs/effects.md): it may have run.
inline constexpr std::string_view kPatchMayHaveRun =
    "Tool call {tool} with id {id} started but its result was never recorded - the server "
    "stopped while it ran, and another message came in before anyone confirmed whether it took "
    "effect. It may or may not have run: do not assume either, and check before calling it again.";
inline constexpr std::string_view kPatchMalformed =
    "Tool call {tool} with id {id} could not be executed - arguments were malformed or "
    "truncated.";

// Replaces each "{key}" of `text` with its value (single pass; values are not re-scanned).
std::string format_text(std::string_view text,
                        std::initializer_list<std::pair<std::string_view, std::string>> values);

}  // namespace tollgate::hitl_texts

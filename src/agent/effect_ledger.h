// The effect ledger's part of a tool call (docs/effects.md): a call of a tool that is not
// idempotent, run inside a graph task, stores its intent before the tool runs; finding such an
// intent from an earlier attempt of the step (the process stopped before the call's result was
// saved) it pauses with an "effect_uncertain" review instead of running the tool again, and
// applies the reviewer's decision: approve runs it again (same idempotency key), reject tells
// the model it did not happen, respond makes the reviewer's text its result.
#pragma once

#include <functional>
#include <string>

#include "tollgate/json.h"
#include "tollgate/tool.h"

namespace tollgate::effect_ledger {

// The reason an effect_uncertain review carries in review_configs[i].reason.
inline constexpr const char* kEffectUncertain = "effect_uncertain";

struct LedgerCall {
  const std::string& name;
  const std::string& call_id;
  const Json& args;
  const std::string& digest;
};

// Runs `execute` (the tool, answering with its ToolMessage) under the ledger. context.runtime
// must be set. A refused decision throws Error(kUnprocessable): the run stays paused.
Json run_recorded(const LedgerCall& call, const ToolContext& context,
                  const std::function<Json()>& execute);

// The effect_uncertain review of `call` (a HITLRequest with one action), asking the reviewers
// `review_rules` name (ToolContext::review_rules; null: the defaults).
Json effect_uncertain_request(const LedgerCall& call, const Json* review_rules = nullptr);

}  // namespace tollgate::effect_ledger

// Effect intents: how a graph task records, before it causes an effect outside the graph, that
// the effect is about to happen — the storage under the effect ledger (docs/effects.md). The
// agent's tool calls use it (run_tool_call); a node with effects of its own may too.
//
// An intent is a pending write of the task on the step's checkpoint, on the reserved channel
// kIntentChannel ({key: intent}), stored with a fixed write index so a later write replaces it.
// A task with intents and no result is unfinished: the next attempt of the step runs it again
// and reads the intents back with recorded_intent().
#pragma once

#include <string>
#include <string_view>

#include "tollgate/json.h"

namespace tollgate {

class Runtime;

inline constexpr std::string_view kIntentChannel = "__intents__";

// Durably stores `intent` under `key` for the task `runtime` runs: written to the saver before
// it returns, whatever the run's durability (under exit durability the step's checkpoint is
// put first), replacing an intent of the same key. Does nothing without a saver or outside a
// graph task. Throws what the saver throws (Error(kUnavailable)). Thread-safe for the tasks of
// a parallel step.
void record_intent(Runtime& runtime, const std::string& key, Json intent);

// The effect of the intent under `key` did not happen in this attempt: the task pauses inside it
// (an interrupt in the tool). The intent is dropped when the pause is saved, so the resumed
// task runs the effect again instead of finding it uncertain.
void forget_intent(Runtime& runtime, const std::string& key);

// The intent a previous attempt of this step stored under `key` for this task, or nullptr:
// that attempt started the effect and ended (the process stopped) before the task's result was
// saved, so the effect may or may not have happened. Valid while the task runs.
const Json* recorded_intent(const Runtime& runtime, const std::string& key);

// The intent stored under `key` by a task the run's new input discarded unfinished, or nullptr:
// the thread had a step left unfinished (paused in the review of an uncertain effect, or cut off)
// and a new input started over instead of answering it, so that effect may have happened. For
// the tasks of that run in the same graph (namespace); valid while the task runs.
const Json* discarded_intent(const Runtime& runtime, const std::string& key);

}  // namespace tollgate

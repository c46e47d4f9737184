// Whether a stopped process left a run in the middle of a tool call whose effect is unknown: the
// thread's latest checkpoint holds a task with a stored intent and no result (docs/effects.md).
// Start-up recovery reads this before it settles the decisions those runs carried: their audit
// outcome is "effect_uncertain", not "lost", and it continues them into the review of that call.
#pragma once

#include "tollgate/checkpoint.h"

namespace tollgate::server {

// Whether `tuple` has a task with an effect intent and no saved result.
bool has_unfinished_intent(const CheckpointTuple& tuple);

}  // namespace tollgate::server

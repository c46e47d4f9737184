// Which runs a stopped process left in the middle of a tool call whose effect is unknown: the
// thread's latest checkpoint holds a task with a stored intent and no result (docs/effects.md).
// Start-up reads this before it settles the decisions those runs carried: their audit outcome
// is "effect_uncertain", not "lost", and recovery continues them into the review of that call.
#pragma once

#include <set>
#include <string>

#include "server/store.h"
#include "tollgate/checkpoint.h"

namespace tollgate::server {

// The ids of the runs stored as "running" whose thread's latest root checkpoint has such a task.
std::set<std::string> runs_cut_off_in_an_effect(ServerStore& store, Saver& checkpoints);

// Whether `tuple` has a task with an effect intent and no saved result.
bool has_unfinished_intent(const CheckpointTuple& tuple);

}  // namespace tollgate::server

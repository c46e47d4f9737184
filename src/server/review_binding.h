// Decisions bound to what they answer. A run that carries a decision (a Command with resume) is
// bound, when the request is accepted, to the thread's latest checkpoint and the interrupts
// pending there: a plain resume (what useStream's submit sends) becomes a resume map
// {interrupt_id: value} of the one interrupt pending then, and the run is refused (409,
// nothing changed) if its thread has moved on by the time it executes. So a second approval
// sent while the first is still running can never land on an action nobody was shown.
#pragma once

#include <string>

#include "server/run_request.h"
#include "tollgate/graph.h"

namespace tollgate::server {

// True when the request carries a decision (a Command with a non-null resume).
bool carries_decision(const RunRequest& request);

// True when the request's decision is an approval short of approvals_required, recorded when
// it was accepted (RunManager::collect_approvals): its run resumes nothing.
bool approval_only(const RunRequest& request);

// Binds a decision `request` carries to the state of its thread in `graph` now: sets
// request.binding and rewrites a plain resume into a map of the single pending interrupt.
// Throws Error(kConflict) when the request names a checkpoint that is not the thread's
// latest. Does nothing for a request without a decision.
void bind_decision(const CompiledGraph& graph, RunRequest& request);

// Throws Error(kConflict) unless the run bound by bind_decision starts from the checkpoint it
// was bound to (`start_checkpoint`: where the run is about to resume from).
void check_binding(const RunRequest& request, const std::string& start_checkpoint);

}  // namespace tollgate::server

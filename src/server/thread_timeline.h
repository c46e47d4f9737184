// The run timeline of a thread (GET /threads/{thread_id}/timeline): every run with the steps
// it took — model calls, tool calls, middleware and node steps, interrupts with each decision
// and who sent it — read only from what the server already stores: the runs, the thread's
// checkpoint history (each step's tasks and their saved writes, the checkpoint times) and the
// review audit log. What those do not hold is said, never guessed (the "unknown" list).
//
// Both functions are pure: they read their arguments and build JSON (docs/timeline.md shows
// the shape); callable from any thread.
#pragma once

#include <vector>

#include "server/audit_log.h"
#include "server/store.h"
#include "tollgate/graph.h"
#include "tollgate/json.h"

namespace tollgate::server {

struct TimelineSources {
  const ThreadRecord* thread = nullptr;
  std::vector<RunRecord> runs;             // the thread's runs, any order
  std::vector<StateSnapshot> checkpoints;  // the thread's root checkpoints, any order
  std::vector<AuditEntry> audit;           // the thread's audit entries, any order
  // A run's stored error event ({"error", "message"}), by run id; absent: none stored.
  std::vector<std::pair<std::string, Json>> run_errors;
};

// {"thread_id", "status", "runs": [{run_id, status, created_at, updated_at, started_by,
//  decided_by, resumed_run_id, started_from_checkpoint_id, steps: [...]}], "checkpoints": [...],
//  "state_updates": [...], "unknown": [...]}
Json thread_timeline(const TimelineSources& sources);

// The same timeline as OpenTelemetry (OTLP/JSON) spans: one trace for the thread (its id as the
// trace id), a span per run, a child span per step of the run.
Json timeline_to_otel(const Json& timeline);

}  // namespace tollgate::server

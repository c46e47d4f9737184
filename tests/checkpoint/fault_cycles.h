// The two cycles the storage fault tests run, and how they drive a thread to its end after a
// failed run:
//   agent  create_agent + HumanInTheLoop with a deterministic model: human message -> model
//          (one `lookup` call) -> review interrupt -> approve -> tool -> model answer;
//   graph  plan -> left and right in parallel -> review (interrupt) -> apply, on an append
//          channel "log".
// Both give every message and value a fixed text, so two runs of a cycle end on equal values
// once message ids (random for tool messages) are left out (comparable_values).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tollgate/error.h"
#include "tollgate/graph.h"

namespace tollgate::testing {

struct FaultCycle {
  std::string name;
  std::shared_ptr<CompiledGraph> (*build)(std::shared_ptr<Saver> saver);
  Json input;      // the first run's input
  Command answer;  // the reviewer's answer to the cycle's interrupt
};

FaultCycle agent_cycle();
FaultCycle graph_cycle();

// The thread the fault tests run a cycle on.
const RunConfig& fault_thread();

// What the unfaulted run of a cycle stored and ended on.
struct Reference {
  Json values;
  Json history;  // comparable_history, newest first
};
// The history stored so far must be the unfaulted run's first checkpoints (newest first, so a
// tail of the reference list).
::testing::AssertionResult is_reference_prefix(const Json& history, const Reference& reference);

// A checkpoint of a thread's history as the tests compare it: step, source, values (message
// ids left out) and the tasks it starts.
Json comparable_snapshot(const StateSnapshot& snapshot);
Json comparable_values(const State& values);
// The thread's history, newest first, in comparable form.
Json comparable_history(const CompiledGraph& graph, const RunConfig& config);

struct DriveResult {
  State values;               // of the run that ended the cycle
  std::vector<Error> errors;  // of the runs that failed
  int runs = 0;
};

// Runs the cycle on config's thread to its end: the input first; after a pause, the answer;
// after a failed run, what the thread's state calls for (the input again when nothing was
// stored, the answer when a task still waits for it, else a continue from the checkpoint).
// `after_failure` is called after each failed run. Stops after `max_runs` runs. A failure
// that is not a tollgate::Error is not caught.
DriveResult drive_to_end(const CompiledGraph& graph, const FaultCycle& cycle,
                         const RunConfig& config,
                         const std::function<void(const Error&)>& after_failure = {},
                         int max_runs = 8);

}  // namespace tollgate::testing

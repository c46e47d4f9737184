// What a run leaves its thread with: the one place that decides a thread's resting status
// (idle, interrupted or error) from how the run ended and what the thread's latest checkpoint
// says. Busy is not decided here: the store derives it from the thread's active runs.
#pragma once

#include <string>

#include "server/store.h"
#include "tollgate/graph.h"

namespace tollgate::server {

enum class RunEnding {
  kCompleted,  // the graph returned: done, or paused at an interrupt() or a static breakpoint
  kCancelled,  // stopped by a cancel (or the server stopping)
  kFailed,     // the graph or the server failed the run
  kCutOff,     // the process died while the run executed (found by start-up recovery)
};

// The thread after a run ended so, `latest` being its latest checkpoint:
//   completed: interrupted when the checkpoint has tasks left (interrupts or a breakpoint), else
//   idle; cancelled: interrupted only when an interrupt is pending, else idle — a cancel never
//   leaves a
//              pause with nothing to answer;
//   failed:    error, with `error`;
//   cut off:   interrupted when an interrupt is pending, idle when the graph had ended, else
//              (no checkpoint, or tasks cut short) error, with `error`.
// Stamped with `clock`'s time.
ThreadOutcome thread_outcome(const StateSnapshot& latest, RunEnding ending,
                             const std::string& error, const Clock& clock);

// thread_outcome of the thread's latest checkpoint in `graph`. Without a graph (not served
// here) the stored values are kept and the outcome is error (failed, cut off) or idle.
ThreadOutcome read_thread_outcome(const CompiledGraph* graph, const std::string& thread_id,
                                  RunEnding ending, const std::string& error, const Clock& clock);

}  // namespace tollgate::server

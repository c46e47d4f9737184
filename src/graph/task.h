// One task of a superstep: a node to run on a state, what it wrote, its interrupts, and where
// it stands in its lifecycle.
//
// A task is prepared when a step starts (by a trigger or a Send). Before it runs, what a
// previous attempt of the same step saved for it decides where it goes: its writes were
// saved (reattached: it does not run again), or it had paused (resuming: it runs again with
// its answers). Running ends in done, paused or failed; a done or paused task whose save
// fails is failed too. Every change of state goes through Task::advance(), which asserts that
// the change is one of these.
//
// Thread-safety: none; a task is touched by the loop's thread, or by the one thread that
// runs it while its step runs.
#pragma once

#include <cassert>
#include <cstdint>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "graph/graph_definition.h"
#include "tollgate/graph.h"

namespace tollgate::graph_internal {

enum class TaskKind : std::uint8_t {
  kPull,       // a node triggered by the channels it subscribes to
  kPush,       // a Send: the node run on the Send's argument
  kSynthetic,  // a stand-in carrying given writes (input, update_state): consumes no triggers
};

enum class TaskState : std::uint8_t {
  kPrepared,    // triggered in this step, not run yet
  kResuming,    // prepared; it paused in a previous attempt of this step
  kReattached,  // finished in a previous attempt of this step: its saved writes, not run again
  kRunning,     // its node is running
  kDone,        // ran to the end: its writes are ready
  kPaused,      // stopped at interrupt() (or inside a paused subgraph)
  kFailed,      // its node, or saving what it did, threw (see Task::error)
};

// The lifecycle above as a table: whether a task of `kind` may go from `from` to `to`.
constexpr bool is_legal_transition(TaskKind kind, TaskState from, TaskState to) {
  switch (from) {
    case TaskState::kPrepared:
      return to == TaskState::kResuming || to == TaskState::kReattached ||
             to == TaskState::kRunning ||
             // update_state's stand-in is done with the writes it was given
             (to == TaskState::kDone && kind == TaskKind::kSynthetic);
    case TaskState::kResuming:
      return to == TaskState::kRunning;
    case TaskState::kRunning:
      return to == TaskState::kDone || to == TaskState::kPaused || to == TaskState::kFailed;
    case TaskState::kDone:
    case TaskState::kPaused:
      return to == TaskState::kFailed;  // saving its writes or interrupts failed
    case TaskState::kReattached:
    case TaskState::kFailed:
      return false;
  }
  return false;
}

struct Task {
  int node = -1;
  TaskKind kind = TaskKind::kPull;
  std::size_t push_index = 0;  // kPush: the Send's position in the step's sends
  // Empty until PregelLoop::ensure_task_id(): without a saver nothing may need it, so it is
  // computed on first use; with a saver, when the task is prepared.
  std::string id;
  std::string ns;          // "<loop ns>|<node>:<id>": its interrupts' and subgraph's
  std::vector<int> fired;  // the trigger channels that made it run
  State input;
  std::vector<Write> writes;
  // The only task of its step with routers: they see the applied state, so its writes are
  // saved once the step is applied and routed, not when it finishes.
  bool route_at_apply = false;
  std::vector<Json> resume_values;      // answers to its interrupts so far, in order
  std::map<std::string, Json> answers;  // new answers for it, by interrupt id
  // The interrupts it paused on in a previous attempt ([{id, value}]), while it resumes; owned
  // by the loop's checkpointer (loaded with the checkpoint, unchanged during the step).
  const Json* saved_interrupts = nullptr;
  std::vector<Interrupt> interrupts;    // raised now (or, in snapshots, saved)
  // Its effect intents ({key: intent}): those a previous attempt recorded, then this attempt's
  // (record_intent, effect_intents.h). saved_intents: the previous attempt's, owned by the checkpointer.
  Json intents = Json::object();
  const Json* saved_intents = nullptr;
  bool intents_stored = false;  // this attempt stored intents (a pause saves them again)
  std::exception_ptr error;             // kFailed: what was thrown

  TaskState state() const { return state_; }
  void advance(TaskState next) {
    assert(is_legal_transition(kind, state_, next) && "illegal task state transition");
    state_ = next;
  }
  // Not run yet in this attempt (prepared or resuming).
  bool waits_to_run() const {
    return state_ == TaskState::kPrepared || state_ == TaskState::kResuming;
  }
  // Its writes are complete: it ran now, or a previous attempt saved them.
  bool has_writes() const { return state_ == TaskState::kDone || state_ == TaskState::kReattached; }

 private:
  TaskState state_ = TaskState::kPrepared;
};

}  // namespace tollgate::graph_internal

#include "server/thread_outcome.h"

#include "server/ids.h"
#include "server/wire_format.h"

namespace tollgate::server {
namespace {

bool interrupt_pending(const StateSnapshot& snapshot) {
  for (const TaskInfo& task : snapshot.tasks) {
    if (waits_on_interrupt(task)) return true;
  }
  return false;
}

ThreadOutcome with_status(ThreadOutcome outcome, ThreadStatus status, const std::string& error) {
  outcome.status = status;
  if (outcome.status == ThreadStatus::kError) outcome.error = error;
  return outcome;
}

}  // namespace

const Json& ThreadOutcome::value_of(std::string_view key) const {
  static const Json kNull;
  if (state) return (*state)[key];
  if (!values.is_object()) return kNull;
  auto it = values.find(std::string(key));
  return it == values.end() ? kNull : *it;
}

ThreadOutcome thread_outcome(const StateSnapshot& latest, RunEnding ending,
                             const std::string& error, const Clock& clock) {
  ThreadOutcome outcome;
  outcome.updated_at = now_millis(clock);
  const bool has_checkpoint = !latest.config.checkpoint_id.empty();
  if (has_checkpoint) {
    outcome.state = latest.values;
    outcome.interrupts = interrupts_by_task(latest);
    outcome.checkpoint_id = latest.config.checkpoint_id;
  }
  const bool pending = interrupt_pending(latest);
  switch (ending) {
    case RunEnding::kCompleted:
      return with_status(std::move(outcome),
                         latest.next.empty() ? ThreadStatus::kIdle : ThreadStatus::kInterrupted,
                         error);
    case RunEnding::kCancelled:
      if (!pending && has_checkpoint) outcome.interrupts = Json::object();
      return with_status(std::move(outcome),
                         pending ? ThreadStatus::kInterrupted : ThreadStatus::kIdle, error);
    case RunEnding::kFailed:
      return with_status(std::move(outcome), ThreadStatus::kError, error);
    case RunEnding::kCutOff:
      if (pending) return with_status(std::move(outcome), ThreadStatus::kInterrupted, error);
      // Idle only when the checkpoint holds nothing left to do: finished tasks whose writes
      // are not yet applied (the step was cut off before its next checkpoint) are left to do.
      return with_status(std::move(outcome),
                         has_checkpoint && latest.next.empty() && latest.tasks.empty()
                             ? ThreadStatus::kIdle
                             : ThreadStatus::kError,
                         error);
  }
  return outcome;
}

ThreadOutcome read_thread_outcome(const CompiledGraph* graph, const std::string& thread_id,
                                  RunEnding ending, const std::string& error, const Clock& clock) {
  if (graph == nullptr) {
    ThreadOutcome outcome;
    outcome.updated_at = now_millis(clock);
    const bool failed = ending == RunEnding::kFailed || ending == RunEnding::kCutOff;
    return with_status(std::move(outcome), failed ? ThreadStatus::kError : ThreadStatus::kIdle,
                       error);
  }
  RunConfig config;
  config.thread_id = thread_id;
  return thread_outcome(graph->get_state(config), ending, error, clock);
}

}  // namespace tollgate::server

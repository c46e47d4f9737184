// RunManager's start-up recovery: what a previous process left behind when it died (kill -9,
// a crash, power loss) is put right before the workers start.
#include <set>
#include <string>
#include <vector>

#include "server/audit_log.h"
#include "server/ids.h"
#include "server/log.h"
#include "server/review_store.h"
#include "server/run_manager.h"
#include "server/uncertain_effects.h"
#include "tollgate/error.h"

namespace tollgate::server {

namespace {

// How the thread's last finished run ended, for a thread recovery reconciles without one.
RunEnding last_ending(const std::vector<RunRecord>& runs_newest_first) {
  for (const RunRecord& run : runs_newest_first) {
    if (run.status == RunStatus::kSuccess) return RunEnding::kCompleted;
    if (run.status == RunStatus::kInterrupted) return RunEnding::kCancelled;
    if (run.status == RunStatus::kError) return RunEnding::kFailed;
  }
  return RunEnding::kCompleted;
}

// Whether the thread's step was cut off during a tool call whose intent was stored: such a step
// is continued into the call's review, whatever the graph (docs/effects.md).
bool cut_off_in_an_effect(const CompiledGraph* graph, const std::string& thread_id) {
  if (graph == nullptr || !graph->checkpointer()) return false;
  auto tuple = graph->checkpointer()->get_tuple(CheckpointConfig{thread_id, "", ""});
  return tuple && has_unfinished_intent(*tuple);
}

constexpr const char* kLostMessage = "the server stopped before the run carrying this decision ended";
constexpr const char* kUncertainMessage =
    "the server stopped while a tool call this decision let run was running; it may have run, and "
    "the thread waits for a review of that call";

}  // namespace

void RunManager::recover() {
  std::vector<CutOffRun> cut_off;
  for (RunRecord& run : store_.list_runs_with_status(RunStatus::kRunning)) {
    cut_off.push_back(plan_recovery(std::move(run)));
  }
  settle_cut_off_decisions(cut_off);
  for (CutOffRun& run : cut_off) carry_out(run);
  // Older versions stored busy in the thread; now it is derived from the thread's runs.
  for (const std::string& thread_id : store_.thread_ids_with_stored_status(ThreadStatus::kBusy)) {
    reconcile_thread(thread_id);
  }
  std::unique_lock lock(mutex_);
  for (RunRecord& run : store_.list_runs_with_status(RunStatus::kPending)) {
    RunRequest request = RunRequest::from_kwargs(run.kwargs, run.thread_id, run.assistant_id);
    auto active = enqueue_locked(run, std::move(request));
    active->not_before =
        run.created_at + static_cast<std::int64_t>(run.kwargs.value("after_seconds", 0.0) * 1000);
  }
}

RunManager::CutOffRun RunManager::plan_recovery(RunRecord run) {
  CutOffRun cut;
  cut.record = std::move(run);
  try {
    const std::string graph_id = graph_id_of(cut.record);
    const CompiledGraph* g = graph(graph_id);
    if (cut.record.attempts >= kMaxRunAttempts) {
      // Each time the process died with this run taken up: recovering it again could be what
      // kills the process next, so its checkpoint is left alone.
      cut.outcome.status = ThreadStatus::kError;
      cut.outcome.error = "Run " + cut.record.run_id + " was cut off " +
                          std::to_string(cut.record.attempts) +
                          " times by the server process ending while it executed or was "
                          "recovered; it is failed without reading its checkpoint. Start a new "
                          "run to retry.";
      cut.outcome.updated_at = now_millis(*clock_);
      return cut;
    }
    // Counted before the checkpoint is read, so that a recovery that kills the process is itself
    // an attempt; a run continued from here does not count another one.
    const std::int64_t now = now_millis(*clock_);
    if (auto attempts = store_.begin_attempt(cut.record.run_id, RunStatus::kRunning, now)) {
      cut.record.status = RunStatus::kRunning;
      cut.record.attempts = *attempts;
      cut.record.updated_at = now;
    }
    const std::string message = "The server stopped while run " + cut.record.run_id +
                                " was executing; its progress up to the last checkpoint is kept. "
                                "Start a new run to retry.";
    try {
      cut.outcome =
          read_thread_outcome(g, cut.record.thread_id, RunEnding::kCutOff, message, *clock_);
      cut.effect_uncertain = cut_off_in_an_effect(g, cut.record.thread_id);
      // A thread left with tasks cut short and no pause (its status reads error) is continued
      // into the review of an uncertain call, or run on when its graph says its steps re-run.
      const bool reruns = g != nullptr && rerunning_graphs_.count(graph_id) != 0 &&
                          !cut.outcome.checkpoint_id.empty();
      if (cut.outcome.status == ThreadStatus::kError && (cut.effect_uncertain || reruns)) {
        cut.action = CutOffRun::kContinue;
      }
    } catch (const std::exception& e) {
      cut.outcome.status = ThreadStatus::kError;
      cut.outcome.error = message + " (Its checkpoint could not be read: " + e.what() + ")";
      cut.outcome.updated_at = now_millis(*clock_);
    }
  } catch (const std::exception& e) {
    log_error("recovery of run " + cut.record.run_id + " failed: " + e.what());
    cut.action = CutOffRun::kLeave;
  }
  return cut;
}

void RunManager::settle_cut_off_decisions(const std::vector<CutOffRun>& cut_off) {
  if (audit_ == nullptr) return;
  std::set<std::string> uncertain;
  std::set<std::string> continued;
  for (const CutOffRun& cut : cut_off) {
    if (cut.effect_uncertain) {
      uncertain.insert(cut.record.run_id);
    } else if (cut.action == CutOffRun::kContinue) {
      continued.insert(cut.record.run_id);  // settled by the continued run, as it ends
    }
  }
  if (!shared()) {
    audit_->settle_lost(kLostMessage, uncertain, kUncertainMessage, continued);
    return;
  }
  // Other replicas' decisions are pending while their runs execute: only these runs' settle.
  std::set<std::string> cut;
  for (const CutOffRun& run : cut_off) cut.insert(run.record.run_id);
  audit_->settle_lost(kLostMessage, uncertain, kUncertainMessage, continued, &cut);
}

void RunManager::carry_out(CutOffRun& cut) {
  try {
    switch (cut.action) {
      case CutOffRun::kLeave:
        return;
      case CutOffRun::kContinue:
        continue_cut_off_step(cut.record);
        return;
      case CutOffRun::kFail:
        cut.record.status = RunStatus::kError;
        cut.record.updated_at = now_millis(*clock_);
        store_end(cut.record, true, std::move(cut.outcome));
        return;
    }
  } catch (const std::exception& e) {
    log_error("recovery of run " + cut.record.run_id + " failed: " + e.what());
  }
}

void RunManager::continue_cut_off_step(const RunRecord& run) {
  // The request as it was accepted: its command and binding tell, once the run ends, which
  // decision it applied (audit, review.decided); it runs with no input (execute()).
  RunRequest request = RunRequest::from_kwargs(run.kwargs, run.thread_id, run.assistant_id);
  request.input = Json();
  request.checkpoint_id.clear();
  request.after_seconds = 0;
  request.continues_cut_off_step = true;
  std::optional<std::int64_t> audit_id;
  if (audit_ != nullptr) audit_id = audit_->pending_decision_of(run.run_id);
  std::vector<LogEntry> earlier_events = store_.run_events(run.run_id);
  log_info("run " + run.run_id + " was cut off mid-step; it continues from its last checkpoint");
  std::unique_lock lock(mutex_);
  auto active = enqueue_locked(run, std::move(request));
  active->audit_id = audit_id;
  active->taken_up = true;  // its record is running and this replica's already
  // A client joining the run's stream reads what the earlier attempt sent, then the rest.
  for (LogEntry& entry : earlier_events) active->log->append(std::move(entry));
}

void RunManager::reconcile_thread(const std::string& thread_id) {
  try {
    auto thread = store_.get_thread(thread_id);
    if (!thread) return;
    std::vector<RunRecord> runs = store_.list_runs(thread_id);
    const RunEnding ending = last_ending(runs);
    auto named =
        thread->metadata.is_object() ? thread->metadata.find("graph_id") : thread->metadata.end();
    const std::string graph_id =
        named != thread->metadata.end() && named->is_string() ? named->get<std::string>() : "";
    const std::string error = thread->error.is_string() ? thread->error.get<std::string>()
                                                        : "The thread's last run failed.";
    ThreadOutcome outcome = read_thread_outcome(graph(graph_id), thread_id, ending, error, *clock_);
    record_reviews(thread_id, outcome);
    store_outcome(thread_id, outcome);
  } catch (const std::exception& e) {
    log_error("recovery of thread " + thread_id + " failed: " + e.what());
  }
}

}  // namespace tollgate::server

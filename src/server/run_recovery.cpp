// RunManager's start-up recovery: what a previous process left behind when it died (kill -9,
// a crash, power loss) is put right before the workers start.
#include <string>

#include "server/ids.h"
#include "server/log.h"
#include "server/run_manager.h"
#include "server/uncertain_effects.h"
#include "tollgate/error.h"

namespace tollgate::server {

namespace {

// How the thread's last finished run ended, for a thread recovery reconciles without one.
RunEnding last_ending(const std::vector<RunRecord>& runs_newest_first) {
  for (const RunRecord& run : runs_newest_first) {
    if (run.status == "success") return RunEnding::kCompleted;
    if (run.status == "interrupted") return RunEnding::kCancelled;
    if (run.status == "error") return RunEnding::kFailed;
  }
  return RunEnding::kCompleted;
}

// Whether the thread's step was cut off during a tool call whose intent was stored: such a step
// is continued (into the call's review) rather than failed. Steps without one are failed as
// before: re-running their nodes blindly is not recovery's call.
bool cut_off_in_an_effect(const CompiledGraph* graph, const std::string& thread_id) {
  if (graph == nullptr || !graph->checkpointer()) return false;
  auto tuple = graph->checkpointer()->get_tuple(CheckpointConfig{thread_id, "", ""});
  return tuple && has_unfinished_intent(*tuple);
}

}  // namespace

void RunManager::recover() {
  for (RunRecord& run : store_.list_runs_with_status("running")) recover_cut_off_run(run);
  // Older versions stored "busy" in the thread; now it is derived from the thread's runs.
  for (const std::string& thread_id : store_.thread_ids_with_stored_status("busy")) {
    reconcile_thread(thread_id);
  }
  std::unique_lock lock(mutex_);
  for (RunRecord& run : store_.list_runs_with_status("pending")) {
    RunRequest request = RunRequest::from_kwargs(run.kwargs, run.thread_id, run.assistant_id);
    auto active = enqueue_locked(run, std::move(request));
    active->not_before =
        run.created_at + static_cast<std::int64_t>(run.kwargs.value("after_seconds", 0.0) * 1000);
  }
}

void RunManager::recover_cut_off_run(RunRecord run) {
  try {
    const std::string graph_id = graph_id_of(run);
    ThreadOutcome outcome;
    if (run.attempts >= kMaxRunAttempts) {
      // Each time the process died with this run taken up: recovering it again could be what
      // kills the process next, so its checkpoint is left alone.
      outcome.status = "error";
      outcome.error = "Run " + run.run_id + " was cut off " + std::to_string(run.attempts) +
                      " times by the server process ending while it executed or was "
                      "recovered; it is failed without reading its checkpoint. Start a new run "
                      "to retry.";
      outcome.updated_at = now_millis();
    } else {
      // Counted before the checkpoint is read, so that a recovery that kills the process is
      // itself an attempt.
      if (auto counted = store_.begin_attempt(run.run_id, "running", now_millis())) run = *counted;
      const std::string message = "The server stopped while run " + run.run_id +
                                  " was executing; its progress up to the last checkpoint is "
                                  "kept. Start a new run to retry.";
      try {
        outcome = read_thread_outcome(graph(graph_id), run.thread_id, RunEnding::kCutOff, message);
        if (outcome.status == "error" && cut_off_in_an_effect(graph(graph_id), run.thread_id)) {
          continue_cut_off_step(run);
          return;
        }
      } catch (const std::exception& e) {
        outcome.status = "error";
        outcome.error = message + " (Its checkpoint could not be read: " + e.what() + ")";
        outcome.updated_at = now_millis();
      }
    }
    run.status = "error";
    run.updated_at = now_millis();
    store_end(run, true, &outcome);
  } catch (const std::exception& e) {
    log_error("recovery of run " + run.run_id + " failed: " + e.what());
  }
}

void RunManager::continue_cut_off_step(const RunRecord& run) {
  RunRequest request = RunRequest::from_kwargs(run.kwargs, run.thread_id, run.assistant_id);
  request.input = Json();
  request.command.reset();
  request.binding = Json();
  request.checkpoint_id.clear();
  request.after_seconds = 0;
  request.continues_cut_off_step = true;
  log_info("run " + run.run_id + " was cut off mid-step; it continues from its last checkpoint");
  std::unique_lock lock(mutex_);
  enqueue_locked(run, std::move(request));
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
    ThreadOutcome outcome = read_thread_outcome(graph(graph_id), thread_id, ending, error);
    record_reviews(thread_id, outcome);
    store_.set_thread_outcome(thread_id, outcome);
    notify_review_requested(thread_id, outcome);
  } catch (const std::exception& e) {
    log_error("recovery of thread " + thread_id + " failed: " + e.what());
  }
}

}  // namespace tollgate::server

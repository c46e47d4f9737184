// RunManager's execution of one run on a worker: the graph invocation, how its end is told
// (completed, cancelled, refused, failed, failed by storage) and the one write that stores it.
#include <functional>
#include <set>
#include <string_view>

#include "server/http_types.h"
#include "server/ids.h"
#include "server/log.h"
#include "server/review_binding.h"
#include "server/run_events.h"
#include "server/run_manager.h"
#include "server/wire_format.h"
#include "tollgate/checkpoint.h"
#include "tollgate/error.h"
#include "tollgate/review_timeout.h"

namespace tollgate::server {

namespace {

// What a run can change of its thread: the latest checkpoint, and the writes saved on it by
// tasks that finished (a step may keep a finished task's writes without a new checkpoint).
struct Progress {
  std::string checkpoint_id;  // "" when the thread has none
  std::string finished_tasks;
  bool operator==(const Progress&) const = default;
};

// Read from the latest checkpoint's row and pending writes, without its values or the state.
Progress progress_of(const CompiledGraph& graph, const std::string& thread_id) {
  const std::shared_ptr<Saver>& saver = graph.checkpointer();
  if (!saver) return {};
  GetOptions options;
  options.skip_values = true;
  const std::optional<CheckpointTuple> tuple =
      saver->get_tuple(CheckpointConfig{thread_id, "", ""}, options);
  if (!tuple) return {};
  Progress progress{tuple->config.checkpoint_id, ""};
  // The tasks of the next step that saved what they returned, as get_state's tasks with a
  // result (a Command's writes, of no task, are not a task's).
  std::set<std::string_view> finished;
  for (const PendingWrite& write : tuple->pending_writes) {
    if (write.task_id != kNullTaskId && marks_task_finished(write.channel)) {
      finished.insert(write.task_id);
    }
  }
  for (std::string_view task : finished) {
    progress.finished_tasks += task;
    progress.finished_tasks += ';';
  }
  return progress;
}

// Whether the thread is still where the run found it (false if it cannot be read).
bool unchanged(const CompiledGraph& graph, const std::string& thread_id, const Progress& base) {
  try {
    return progress_of(graph, thread_id) == base;
  } catch (const std::exception&) {
    return false;
  }
}

// Holds a thread's new v2 events back from its readers from hold() until release() (or the
// end of the scope): ThreadStreams::hold.
class HeldThreadEvents {
 public:
  HeldThreadEvents(ThreadStreams& streams, const std::string& thread_id)
      : streams_(streams), thread_id_(thread_id) {}
  ~HeldThreadEvents() { release(); }
  HeldThreadEvents(const HeldThreadEvents&) = delete;
  HeldThreadEvents& operator=(const HeldThreadEvents&) = delete;
  void hold() {
    if (held_) return;
    streams_.hold(thread_id_);
    held_ = true;
  }
  void release() {
    if (!held_) return;
    held_ = false;
    streams_.release(thread_id_);
  }

 private:
  ThreadStreams& streams_;
  const std::string& thread_id_;
  bool held_ = false;
};

// Stream events of a run that is ending: losing one must not keep the run from ending.
void quietly(const std::string& run_id, const std::function<void()>& record_events) {
  try {
    record_events();
  } catch (const std::exception& e) {
    log_warning("run " + run_id + ": a stream event was not recorded: " + e.what());
  }
}

// A run's result as /runs/wait answers it: its values, plus "__interrupt__" when it paused
// (LangGraph's invoke shape, the interrupts in the wire form), written from the state, the
// text of a value `known` holds copied.
std::string run_result_json(const RunResult& outcome, const ValueTexts* known) {
  if (outcome.interrupts.empty() && !outcome.paused) {
    return state_event_json(outcome.values, known);
  }
  return state_event_json_with(outcome.values, "__interrupt__",
                               event_json(interrupts_to_json(outcome.interrupts)), known);
}

RunConfig run_config(const RunRecord& record, const RunRequest& request, RunEvents& events,
                     const std::shared_ptr<std::atomic<bool>>& cancel) {
  RunConfig config;
  config.thread_id = record.thread_id;
  config.run_id = record.run_id;
  config.checkpoint_id = request.checkpoint_id;
  config.started_by = request.started_by.actor();
  config.decided_by = request.decided_by.actor();
  const Json& configurable = record.kwargs["config"]["configurable"];
  // A continued step runs on from the thread's latest checkpoint, never the one first named.
  if (config.checkpoint_id.empty() && !request.continues_cut_off_step &&
      configurable.contains("checkpoint_id") &&
      configurable["checkpoint_id"].is_string()) {
    config.checkpoint_id = configurable["checkpoint_id"].get<std::string>();
  }
  if (request.config.contains("recursion_limit") &&
      request.config["recursion_limit"].is_number_integer()) {
    config.recursion_limit = request.config["recursion_limit"].get<int>();
  }
  config.interrupt_before = request.interrupt_before;
  config.interrupt_after = request.interrupt_after;
  config.context = request.context.is_object() ? request.context : Json::object();
  config.metadata = record.metadata;
  config.metadata["run_id"] = record.run_id;
  config.metadata["thread_id"] = record.thread_id;
  config.stream_modes = events.graph_modes();
  config.stream_subgraphs = events.wants_subgraphs();
  config.checkpoint_values = events.wants_checkpoint_values();
  config.state_by_reference = true;     // RunEvents writes the state out itself
  config.messages_by_reference = true;  // and reads each token's chunk in place
  config.final_state = true;            // the thread's outcome is written from it
  events.refer_to_checkpoints(config.durability == Durability::kSync);
  config.on_event = [&events](const StreamEvent& event) { events.on_event(event); };
  config.cancel = cancel;
  return config;
}

// The result of a run that leaves the thread where it is: its latest values and the
// interrupts pending there.
RunResult paused_result(const CompiledGraph& graph, const std::string& thread_id) {
  RunConfig config;
  config.thread_id = thread_id;
  const StateSnapshot snapshot = graph.get_state(config);
  RunResult result;
  result.values = snapshot.values;
  for (const TaskInfo& task : snapshot.tasks) {
    result.interrupts.insert(result.interrupts.end(), task.interrupts.begin(),
                             task.interrupts.end());
  }
  result.paused = !snapshot.next.empty();
  return result;
}

}  // namespace

void RunManager::execute(const std::shared_ptr<ActiveRun>& run) {
  RunRecord& record = run->record;
  const RunRequest& request = run->request;
  const std::string graph_id = graph_id_of(record);
  const CompiledGraph* g = graph(graph_id);
  RunEvents events(store_, streams_, run->log, record, request, graph_id);
  events.carry_lists(carried_lists_.take(record.thread_id));
  // The run's last v2 events (its pause, its end) reach readers once its end is stored.
  HeldThreadEvents last_events(streams_, record.thread_id);

  std::string result = "{}";  // the result's JSON text (run_result_json, run_error_json)
  // The graph's result of a run that succeeded, written into `result` once the thread's state
  // is read: its lists' texts are then known (RunEvents::list_texts_of).
  std::optional<RunResult> succeeded;
  auto write_result = [&](const ValueTexts* known) {
    if (succeeded) result = run_result_json(*succeeded, known);
    succeeded.reset();
  };
  bool failed = false;        // the result is an error ...
  std::string error_message;  // ... with this message
  RunEnding ending = RunEnding::kCompleted;
  std::string failure;
  bool refused = false;
  bool gone = false;
  bool storage_failed = false;
  // Whether the run may have changed the thread's checkpoints: a run that failed before it
  // changed anything leaves the thread exactly as it was.
  bool changed = false;
  // Where this run starts from: the checkpoint a rollback returns to, and how a refusal is told
  // from a failure (a refused run leaves the thread exactly there).
  Progress base;
  bool base_read = false;  // base was read for the audit of the run's start
  std::optional<std::int64_t> audit_id;
  // Before the run shows as running, so that it does not widen the window between that and
  // the graph's first step. No other run of the thread executes meanwhile (running_threads_).
  try {
    if (audits_run_start(request) && g != nullptr) {
      base = progress_of(*g, record.thread_id);
      base_read = true;
    }
    audit_run_start(record, request, graph_id, base.checkpoint_id);
  } catch (const std::exception& e) {
    log_error("the start of run " + record.run_id + " could not be audited: " + e.what());
  }
  try {
    // A continued step's attempt was counted by the recovery that queued it, a claimed run's
    // by its claim (several replicas).
    bool taken_up = false;
    {
      std::lock_guard lock(mutex_);
      taken_up = run->taken_up && !request.continues_cut_off_step;
    }
    std::optional<int> attempts;
    if (request.continues_cut_off_step) {
      if (auto stored = store_.get_run(record.run_id)) attempts = stored->attempts;
    } else if (taken_up) {
      attempts = record.attempts;
    } else {
      attempts = store_.begin_attempt(record.run_id, RunStatus::kRunning, now_millis(*clock_));
    }
    if (!attempts) {
      gone = true;  // deleted with its thread (or its run) before it started
      throw Error(ErrorCode::kCancelled, "Run deleted");
    }
    record.status = RunStatus::kRunning;
    record.attempts = *attempts;
    // Another replica may have run this thread since this one last streamed it.
    if (shared()) streams_.catch_up(record.thread_id);
    events.started();
    if (g == nullptr) throw Error::NotFound("Graph " + graph_id + " is not served here");
    RunConfig config = run_config(record, request, events, run->cancel);
    {
      std::lock_guard lock(mutex_);
      auto rollback = rollback_to_.find(record.thread_id);
      if (rollback != rollback_to_.end()) {
        if (config.checkpoint_id.empty()) config.checkpoint_id = rollback->second;
        rollback_to_.erase(rollback);
      }
    }
    if (!base_read) base = progress_of(*g, record.thread_id);
    if (request.continues_cut_off_step) {
      audit_id = run->audit_id;  // the decision was bound and audited when it was accepted
    } else {
      audit_id = audit_decision(record, request, graph_id, base.checkpoint_id);
      check_binding(request,
                    config.checkpoint_id.empty() ? base.checkpoint_id : config.checkpoint_id);
    }

    RunResult outcome;
    if (approval_only(request)) {
      // An approval short of approvals_required, recorded when it was accepted: the thread
      // stays paused on the same interrupt, and the run answers with its state as it is.
      outcome = paused_result(*g, record.thread_id);
    } else {
      Input input = Json();
      if (request.continues_cut_off_step) {
        // No input: the step's finished tasks are kept, the rest run again.
      } else if (request.command) {
        input = Command::from_json(*request.command);
      } else {
        input = normalize_input(request.input);
      }
      changed = true;
      outcome = g->invoke(input, config);
    }
    last_events.hold();
    if (run->cancel->load()) {
      bool rollback = false;
      {
        std::lock_guard lock(mutex_);
        rollback = run->rollback;
        if (rollback && !shared()) rollback_to_[record.thread_id] = base.checkpoint_id;
      }
      // The thread's next run may execute on another replica.
      if (rollback && shared()) replicas_->set_rollback_point(record.thread_id, base.checkpoint_id);
      throw Error(ErrorCode::kCancelled, "Run cancelled");
    }
    events.finished(outcome);
    succeeded = std::move(outcome);
    record.status = RunStatus::kSuccess;
  } catch (const Error& e) {
    last_events.hold();
    if (changed && g != nullptr && unchanged(*g, record.thread_id, base)) changed = false;
    if (e.code() == ErrorCode::kCancelled || run->cancel->load()) {
      record.status = RunStatus::kInterrupted;
      ending = RunEnding::kCancelled;
      if (!gone && !handed_over(run)) quietly(record.run_id, [&] { events.cancelled(); });
    } else {
      const bool refusal = e.code() == ErrorCode::kConflict ||
                           e.code() == ErrorCode::kUnprocessable ||
                           e.code() == ErrorCode::kInvalidArgument;
      record.status = RunStatus::kError;
      record.updated_at = now_millis(*clock_);
      ending = RunEnding::kFailed;
      failure = e.what();
      if (refusal && !changed) {
        // Refused before anything was saved (a resume with nothing to resume, a decision the
        // HITL middleware rejects): the thread keeps its state and status; requests waiting
        // for the run answer with the error's status and message. Before they are answered a
        // refused resume is gone from the run list and the thread no longer reads busy, so
        // the client that got the 409/422 sees neither.
        refused = true;
        // A refused expiry is not tried again: its review waits for a person.
        reopen_reviews(record.run_id, request.decided_by.id == kTimeoutIdentity);
        store_end(record, !request.command || request.continues_cut_off_step, std::nullopt);
        {
          // The client may start the next run as soon as it has the 409/422: this one must no
          // longer hold the thread by then (the next run would be refused as busy).
          std::lock_guard lock(mutex_);
          run->refused = true;
        }
        run->log->set_rejection(http_status(e.code()), e.what());
      } else if (e.code() == ErrorCode::kUnavailable) {
        // Storage failed: the run fails, its client gets 503, the worker lives on. A run that
        // changed nothing leaves its thread as it was (a paused thread stays answerable).
        storage_failed = true;
        run->log->set_rejection(http_status(e.code()), e.what());
      }
      quietly(record.run_id, [&] { events.failed(run_error_name(e.code()), e.what()); });
      failed = true;
      error_message = e.what();
      result = run_error_json(run_error_name(e.code()), error_message);
    }
  } catch (const std::exception& e) {
    last_events.hold();
    if (changed && g != nullptr && unchanged(*g, record.thread_id, base)) changed = false;
    record.status = RunStatus::kError;
    ending = RunEnding::kFailed;
    failure = e.what();
    quietly(record.run_id, [&] { events.failed("Error", e.what()); });
    failed = true;
    error_message = e.what();
    result = run_error_json("Error", error_message);
  }

  if (handed_over(run)) {
    // Its record stays running and this replica's; once this replica's row is gone another
    // adopts it (run_manager_replicas.cpp), settles its decision and continues or fails it.
    log_info("run " + record.run_id + " is handed over to another replica (this one stops)");
    write_result(nullptr);
    last_events.release();
    std::lock_guard lock(mutex_);
    finish_locked(run, std::move(result));
    return;
  }
  settle_decision(audit_id, record, refused, error_message, approval_only(request));
  record.updated_at = now_millis(*clock_);
  bool rolled_back;
  {
    std::lock_guard lock(mutex_);
    rolled_back = run->rollback;
  }
  if (gone) {
    // Nothing of it is left to write.
  } else if (request.temporary) {
    try {
      if (g != nullptr && g->checkpointer()) g->checkpointer()->delete_thread(record.thread_id);
      store_.delete_thread(record.thread_id);
      streams_.forget(record.thread_id);
    } catch (const std::exception& e) {
      log_error("run " + record.run_id + ": its temporary thread was not deleted: " + e.what());
    }
  } else if (!refused) {
    // The thread's record is final before the run's result is published, so a client
    // answered by /runs/wait or /join reads the thread as it is now, never still busy.
    std::optional<ThreadOutcome> outcome;
    if (changed || !storage_failed) {
      try {
        // A run that returned hands over the state it ended on; any other is read back.
        outcome = succeeded && succeeded->state
                      ? thread_outcome(*succeeded->state, ending, failure, *clock_)
                      : read_thread_outcome(g, record.thread_id, ending, failure, *clock_);
        if (outcome->state) {
          const ValueTexts lists = events.list_texts_of(*outcome->state, outcome->checkpoint_id);
          outcome->state_text = state_event_json(*outcome->state, &lists);
          write_result(&lists);
        }
      } catch (const std::exception& e) {
        outcome = ThreadOutcome{};
        outcome->status = ThreadStatus::kError;
        outcome->error = std::string("The thread's state could not be read: ") + e.what();
        outcome->updated_at = now_millis(*clock_);
      }
    }
    write_result(nullptr);  // when the state was not read
    // Storage failed before the graph took the run's decision: its review is open again.
    EndNotices notices{decision_notices(record, request), run_end_notice(record, outcome, failure)};
    const bool stored =
        store_end(record, !rolled_back, std::move(outcome),
                  storage_failed && !changed && carries_decision(request), std::move(notices));
    if (!stored) {
      const std::string message =
          "The run's end could not be stored; it is written again once storage is back.";
      if (!run->log->rejection()) run->log->set_rejection(503, message);
      if (!failed) {
        failed = true;
        error_message = message;
        result = run_error_json("UnavailableError", message);
      }
    }
  }
  write_result(nullptr);  // a run gone, or on a temporary thread
  last_events.release();
  if (!gone && !request.temporary) carried_lists_.keep(record.thread_id, events.take_lists());
  std::lock_guard lock(mutex_);
  finish_locked(run, std::move(result));
}

}  // namespace tollgate::server

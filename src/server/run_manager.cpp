#include "server/run_manager.h"

#include <algorithm>
#include <chrono>

#include "core/thread_name.h"
#include "server/cluster.h"
#include "server/ids.h"
#include "server/log.h"
#include "server/notifications.h"
#include "server/review_binding.h"
#include "server/review_store.h"
#include "server/run_mirrors.h"
#include "server/wire_format.h"
#include "tollgate/error.h"

namespace tollgate::server {

namespace {

constexpr std::size_t kFinishedRunsKept = 512;
// The newest finished runs kept whatever their size: a run's answer is read from here right
// after it ends.
constexpr std::size_t kFinishedRunsAlwaysKept = 16;
constexpr std::int64_t kSettleRetryMillis = 1000;
std::string delete_busy_message(const std::string& thread_id) {
  return "Thread " + thread_id +
         " has a run pending or running; cancel it (or wait for it to end) before deleting the "
         "thread";
}

constexpr const char* kBusyMessage =
    "Thread is already running a task. Wait for it to finish or choose a different multitask "
    "strategy.";

}  // namespace

RunManager::RunManager(ServerStore& store, ThreadStreams& streams, GraphMap graphs,
                       std::size_t workers)
    : store_(store), streams_(streams), graphs_(std::move(graphs)), worker_count_(workers) {}

RunManager::~RunManager() {
  stop();
}

void RunManager::start() {
  if (shared()) {
    recover_shared();
  } else {
    recover();
  }
  std::size_t count = worker_count_ == 0 ? 1 : worker_count_;
  for (std::size_t i = 0; i < count; ++i) {
    workers_.emplace_back([this] {
      core::name_this_thread("tg-run");
      worker_loop();
    });
  }
  if (shared()) {
    flusher_ = std::thread([this] {
      core::name_this_thread("tg-run-flush");
      flush_loop();
    });
  }
}

void RunManager::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    for (auto& [id, run] : active_) {
      // With other replicas, a run executing here is handed over rather than ended: it stops,
      // and the replica that adopts it continues it from its last checkpoint.
      if (shared() && run->started) run->handed_over = true;
      run->cancel->store(true);
    }
  }
  wake_.notify_all();
  flush_wake_.notify_all();
  for (auto& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  workers_.clear();
  if (flusher_.joinable()) flusher_.join();
  if (shared()) {
    try {
      // Before the row goes: what the runs handed over streamed is stored before an adopter
      // numbers its own events after it.
      replicas_->flush_events();
    } catch (const Error& e) {
      log_warning(std::string("stream events not stored at stop: ") + e.what());
    }
  }
  stop_cluster();
}

const CompiledGraph* RunManager::graph(const std::string& graph_id) const {
  auto it = graphs_.find(graph_id);
  return it == graphs_.end() ? nullptr : it->second.get();
}

std::string RunManager::graph_id_of(const RunRecord& record) {
  // The graph its request was checked against, which submit() names in the run's metadata (as
  // in the configurable the graph reads): an assistant changed to another graph since does not
  // change what an accepted run executes, and the assistant need not be read again.
  auto it = record.metadata.find("graph_id");
  if (it != record.metadata.end() && it->is_string() &&
      !it->get_ref<const std::string&>().empty()) {
    return it->get<std::string>();
  }
  try {
    auto assistant = store_.get_assistant(record.assistant_id);
    if (assistant) return assistant->graph_id;
  } catch (const Error&) {
    // Unreadable now: the run fails as a run of no graph.
  }
  return "";
}

bool RunManager::thread_active_locked(const std::string& thread_id) const {
  for (const auto& [id, run] : active_) {
    if (run->record.thread_id == thread_id && !run->refused) return true;
  }
  return false;
}

bool RunManager::any_run_of_locked(const std::string& thread_id) const {
  for (const auto& [id, run] : active_) {
    if (run->record.thread_id == thread_id) return true;
  }
  return false;
}

bool RunManager::run_in_memory(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  return active_.count(run_id) != 0;
}

bool RunManager::thread_active(const std::string& thread_id) {
  if (shared()) return !replicas_->active_runs(thread_id).empty();
  std::lock_guard lock(mutex_);
  return thread_active_locked(thread_id);
}

RunRecord RunManager::submit(const RunRequest& request, std::vector<QueuedNotification> notices,
                             const ThreadRecord* head, const AssistantRecord* given) {
  std::optional<AssistantRecord> read_assistant;  // when the caller did not read it
  if (given == nullptr || given->assistant_id != request.assistant_id) {
    read_assistant = store_.get_assistant(request.assistant_id);
    if (!read_assistant) throw Error::NotFound("Assistant not found");
  }
  const AssistantRecord* assistant = read_assistant ? &*read_assistant : given;
  std::optional<ThreadRecord> read;  // the head, when the caller did not read it
  if (head == nullptr) read = store_.get_thread_head(request.thread_id);
  const ThreadRecord* thread = head != nullptr ? head : read ? &*read : nullptr;
  if (thread == nullptr) throw Error::NotFound("Thread with ID " + request.thread_id + " not found");
  RunRequest stored = request;
  stored.assistant_id = assistant->assistant_id;
  // A decision answers what is pending now (see review_binding.h); a run that would find its
  // thread elsewhere is refused when it executes.
  if (const CompiledGraph* g = graph(assistant->graph_id); g != nullptr) bind_decision(*g, stored);
  check_reviewers(stored, *thread, assistant->graph_id);

  // One submission of the thread at a time, to its run's insert (see the class comment).
  const KeyedLocks::Guard submitting = submission_locks_.lock(request.thread_id);
  if (shared()) {
    // The thread's runs on every replica; a reject is checked again as the run is inserted.
    std::vector<RunRecord> in_flight = replicas_->active_runs(request.thread_id);
    if (!in_flight.empty()) {
      if (request.multitask_strategy == "reject") throw Error::Conflict(kBusyMessage);
      if (request.multitask_strategy == "interrupt" || request.multitask_strategy == "rollback") {
        for (const RunRecord& run : in_flight) {
          cancel(run.run_id, request.multitask_strategy == "rollback");
        }
      }
    }
  }

  const std::int64_t now = now_millis(*clock_);
  RunRecord record;
  record.run_id = new_uuid7(*clock_);
  record.thread_id = request.thread_id;
  record.assistant_id = assistant->assistant_id;
  record.status = RunStatus::kPending;
  record.multitask_strategy = request.multitask_strategy;
  record.created_at = now;
  record.updated_at = now;
  record.not_before = now + static_cast<std::int64_t>(request.after_seconds * 1000);
  if (shared()) record.owner = cluster_replica_id();

  std::shared_ptr<ActiveRun> active;
  {
    std::unique_lock lock(mutex_);
    if (!shared()) {
      std::vector<std::shared_ptr<ActiveRun>> in_flight;
      for (const auto& [id, run] : active_) {
        if (run->record.thread_id == request.thread_id && !run->refused) in_flight.push_back(run);
      }
      if (!in_flight.empty()) {
        if (request.multitask_strategy == "reject") throw Error::Conflict(kBusyMessage);
        if (request.multitask_strategy == "interrupt" || request.multitask_strategy == "rollback") {
          for (auto& run : in_flight) {
            cancel_locked(run, request.multitask_strategy == "rollback", lock);
          }
        }
      }
    }
    // The thread reads busy from here on; the run is queued once it is stored.
    active = std::make_shared<ActiveRun>();
    active->record = record;
    active_[record.run_id] = active;
  }
  // Out of active_ again when it is not stored; nothing else knows its id yet.
  const auto withdraw = [&] {
    {
      std::lock_guard lock(mutex_);
      active_.erase(record.run_id);
    }
    ended_.notify_all();
  };

  Json metadata = assistant->metadata.is_object() ? assistant->metadata : Json::object();
  if (thread->metadata.is_object()) metadata.update(thread->metadata);
  if (request.metadata.is_object()) metadata.update(request.metadata);
  metadata["graph_id"] = assistant->graph_id;
  metadata["assistant_id"] = assistant->assistant_id;
  record.metadata = metadata;
  Json configurable = stored.config.value("configurable", Json::object());
  if (!configurable.is_object()) configurable = Json::object();
  configurable["run_id"] = record.run_id;
  configurable["thread_id"] = record.thread_id;
  configurable["graph_id"] = assistant->graph_id;
  configurable["assistant_id"] = assistant->assistant_id;

  // The run and the thread's busy status (derived from it) appear together; a thread deleted
  // meanwhile gets no run.
  const Json thread_metadata{{"graph_id", assistant->graph_id},
                             {"assistant_id", assistant->assistant_id}};
  ReplicaStore::Insert inserted = ReplicaStore::Insert::kThreadGone;
  bool claimed = false;
  try {
    // Approvals short of what an action needs are recorded; the decision that completes them
    // (and any other) claims the review: of two decisions for one action only one is accepted
    // (a conditional update).
    collect_approvals(stored);
    record.kwargs = stored.to_kwargs();
    record.kwargs["config"]["configurable"] = configurable;
    if (!approval_only(stored))
      claim_reviews(stored, record.run_id);  // puts back what it claimed when it throws
    claimed = true;
    if (shared() && request.multitask_strategy == "reject") {
      // Another replica may have started a run of the thread since it was read above.
      inserted =
          replicas_->insert_run_unless_busy(record, thread_metadata, notices_for_store(notices));
    } else if (store_.insert_run(record, thread_metadata, notices_for_store(notices))) {
      inserted = ReplicaStore::Insert::kInserted;
    }
  } catch (const std::exception&) {
    if (claimed) reopen_reviews(record.run_id);
    withdraw();
    throw;
  }
  if (inserted != ReplicaStore::Insert::kInserted) {
    reopen_reviews(record.run_id);
    withdraw();
    if (inserted == ReplicaStore::Insert::kThreadBusy) throw Error::Conflict(kBusyMessage);
    throw Error::NotFound("Thread with ID " + request.thread_id + " not found");
  }

  {
    std::lock_guard lock(mutex_);
    active->record = record;
    active->request = std::move(stored);
    active->not_before = record.not_before;
    queue_.push_back(record.run_id);
  }
  wake_.notify_one();  // one run: one idle worker (waking them all woke three for nothing)
  tell_after_store(notices);
  return record;
}

std::shared_ptr<RunManager::ActiveRun> RunManager::enqueue_locked(RunRecord record,
                                                                  RunRequest request) {
  auto active = std::make_shared<ActiveRun>();
  active->record = std::move(record);
  active->request = std::move(request);
  active_[active->record.run_id] = active;
  queue_.push_back(active->record.run_id);
  return active;
}

std::shared_ptr<EventLog> RunManager::events(const std::string& run_id) {
  {
    std::lock_guard lock(mutex_);
    auto it = active_.find(run_id);
    if (it != active_.end()) return it->second->log;
    auto done = finished_.find(run_id);
    if (done != finished_.end()) return done->second.log;
  }
  const std::optional<RunRecord> stored = store_.get_run(run_id);
  if (!stored) return nullptr;
  // Executing on another replica: followed until it ends.
  if (shared() && run_is_active(*stored)) return mirrors_->open(run_id);
  auto log = std::make_shared<EventLog>();
  for (LogEntry& entry : store_.run_events(run_id)) log->append(std::move(entry));
  log->close();
  return log;
}

std::shared_ptr<const std::string> RunManager::known_result(const std::string& run_id,
                                                            bool& store_needed) {
  std::lock_guard lock(mutex_);
  store_needed = false;
  if (active_.count(run_id)) return nullptr;
  auto done = finished_.find(run_id);
  if (done != finished_.end()) return done->second.result;
  store_needed = true;
  return nullptr;
}

std::shared_ptr<const std::string> RunManager::result(const std::string& run_id) {
  bool store_needed = false;
  std::shared_ptr<const std::string> known = known_result(run_id, store_needed);
  if (!store_needed) return known;
  return stored_result(run_id);
}

std::shared_ptr<const std::string> RunManager::result_once_ended(
    const std::string& run_id, std::chrono::milliseconds patience) {
  {
    std::unique_lock lock(mutex_);
    ended_.wait_for(lock, patience, [&] { return active_.count(run_id) == 0; });
    if (active_.count(run_id) == 0) {
      auto done = finished_.find(run_id);
      if (done != finished_.end()) return done->second.result;
    }
  }
  return stored_result(run_id);
}

std::shared_ptr<const std::string> RunManager::stored_result(const std::string& run_id) {
  auto run = store_.get_run(run_id);
  if (!run) return std::make_shared<const std::string>("null");
  if (shared() && run_is_active(*run)) return nullptr;  // executing on another replica
  auto thread = store_.get_thread(run->thread_id);
  if (run->status == RunStatus::kError) {
    std::string message =
        thread && thread->error.is_string() ? thread->error.get<std::string>() : "The run failed.";
    return std::make_shared<const std::string>(run_error_json("Error", message));
  }
  Json values = thread && thread->values.is_object() ? thread->values : Json::object();
  if (thread && thread->status == ThreadStatus::kInterrupted && thread->interrupts.is_object()) {
    Json all = Json::array();
    for (auto& [task, list] : thread->interrupts.items()) {
      for (const Json& i : list) all.push_back(i);
    }
    values["__interrupt__"] = all;
  }
  return std::make_shared<const std::string>(event_json(values));
}

bool RunManager::cancel(const std::string& run_id, bool rollback) {
  {
    std::unique_lock lock(mutex_);
    auto it = active_.find(run_id);
    if (it != active_.end()) {
      auto run = it->second;
      cancel_locked(run, rollback, lock);
      return true;
    }
  }
  // Another replica's run: its owner cancels it when told (or at its next poll).
  return shared() && replicas_->request_cancel(run_id, rollback).has_value();
}

void RunManager::delete_thread(const std::string& thread_id, Saver* checkpoints) {
  if (shared()) {
    // The thread's row goes first, in one transaction with the check that nothing runs: a run
    // submitted on any replica afterwards finds no thread.
    if (!replicas_->delete_idle_thread(thread_id))
      throw Error::Conflict(delete_busy_message(thread_id));
    if (checkpoints != nullptr) checkpoints->delete_thread(thread_id);
    streams_.forget(thread_id);
    return;
  }
  const KeyedLocks::Guard submitting = submission_locks_.lock(thread_id);
  std::unique_lock lock(mutex_);
  for (;;) {
    if (thread_active_locked(thread_id)) throw Error::Conflict(delete_busy_message(thread_id));
    if (!any_run_of_locked(thread_id)) break;
    // A refused run ends at once; it must not write after the thread is gone.
    ended_.wait(lock);
  }
  // Under the lock: no run of the thread can be submitted until everything is gone.
  if (checkpoints != nullptr) checkpoints->delete_thread(thread_id);
  store_.delete_thread(thread_id);
  streams_.forget(thread_id);
}

bool RunManager::prune_checkpoints(const std::string& thread_id, Saver& checkpoints) {
  if (shared()) {
    // The thread's row stays locked meanwhile: no replica starts or inserts a run of it.
    return replicas_->with_idle_thread(
        thread_id, [&] { checkpoints.prune({thread_id}, PruneStrategy::kKeepLatest); });
  }
  // Under the locks: no run of the thread can be submitted while its checkpoints change.
  const KeyedLocks::Guard submitting = submission_locks_.lock(thread_id);
  std::lock_guard lock(mutex_);
  if (thread_active_locked(thread_id)) return false;
  checkpoints.prune({thread_id}, PruneStrategy::kKeepLatest);
  return true;
}

bool RunManager::cancel_locked(const std::shared_ptr<ActiveRun>& run, bool rollback,
                               std::unique_lock<std::mutex>& lock) {
  (void)lock;
  run->cancel->store(true);
  run->rollback = run->rollback || rollback;
  // Its decision is void: not applied yet, or rolled back with the run's progress.
  if (!run->started || rollback) reopen_reviews(run->record.run_id);
  if (run->started) return true;  // the worker finishes it
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (*it == run->record.run_id) {
      queue_.erase(it);
      break;
    }
  }
  // It never ran: its thread stays as it was.
  run->record.status = RunStatus::kInterrupted;
  run->record.updated_at = now_millis(*clock_);
  store_end(run->record, !rollback, std::nullopt);
  finish_locked(run, "{}");
  return true;
}

void RunManager::finish_locked(const std::shared_ptr<ActiveRun>& run, std::string result) {
  run->log->close();
  active_.erase(run->record.run_id);
  Finished& finished = finished_[run->record.run_id];
  if (finished.log == nullptr) {
    finished_order_.push_back(run->record.run_id);
  } else {
    finished_bytes_ -= finished.bytes;
  }
  const std::size_t bytes = run->log->data_bytes() + result.size();
  finished = Finished{run->log, std::make_shared<const std::string>(std::move(result)), bytes};
  finished_bytes_ += finished.bytes;
  // The oldest go first, by count and by bytes (a run on a long thread holds its state in each
  // of its values events); joins and answers of a run that went read it from the store.
  while (finished_order_.size() > kFinishedRunsKept ||
         (finished_bytes_ > finished_bytes_kept_ &&
          finished_order_.size() > kFinishedRunsAlwaysKept)) {
    auto oldest = finished_.find(finished_order_.front());
    if (oldest != finished_.end()) {
      finished_bytes_ -= oldest->second.bytes;
      finished_.erase(oldest);
    }
    finished_order_.pop_front();
  }
  ended_.notify_all();
}

bool RunManager::store_end(const RunRecord& record, bool keep_run,
                           std::optional<ThreadOutcome> annotated, bool reopen,
                           EndNotices notices) {
  // The review records come first, so that the thread record shows when each review began.
  if (annotated) {
    // One read of the checkpoint's records serves both, made once this pause's records are
    // added: those a decision claimed (decided, expired), which the claims' question is about,
    // are as they were.
    const std::vector<ReviewRecord> at_checkpoint = record_reviews(record.thread_id, *annotated);
    reopen = reopen || claims_still_pending(record.run_id, *annotated, at_checkpoint);
  }
  const ThreadOutcome* thread = annotated ? &*annotated : nullptr;
  std::vector<QueuedNotification> told = std::move(notices.decided);
  if (thread != nullptr) {
    for (QueuedNotification& n :
         review_requested_notices(record.thread_id, record.assistant_id, *thread))
      told.push_back(std::move(n));
  }
  if (notices.ended) told.push_back(std::move(*notices.ended));
  try {
    // Before the run's end: once the thread no longer reads busy its pause can be answered.
    if (reopen) reopen_claims(record.run_id);
    write_end(record, keep_run, thread, told);
    return true;
  } catch (const Error& e) {
    log_error("run " + record.run_id + ": its end could not be stored (" + e.what() +
              "); retrying");
    UnsettledEnd end{record, keep_run, std::nullopt, reopen, std::move(told)};
    if (thread != nullptr) end.thread = *thread;
    std::lock_guard lock(unsettled_mutex_);
    unsettled_.push_back(std::move(end));
    return false;
  }
}

void RunManager::write_end(const RunRecord& record, bool keep_run, const ThreadOutcome* thread,
                           std::vector<QueuedNotification>& notices) {
  store_.end_run(record, keep_run, thread, notices_for_store(notices));
  tell_after_store(notices);
}

std::vector<QueuedNotification>* RunManager::notices_for_store(
    std::vector<QueuedNotification>& notices) const {
  const bool with_facts = notifications_ != nullptr && notifications_->stored_with_facts();
  return with_facts && !notices.empty() ? &notices : nullptr;
}

void RunManager::tell_after_store(std::vector<QueuedNotification>& notices) {
  if (notifications_ == nullptr || notices.empty()) return;
  if (notifications_->stored_with_facts()) {
    notifications_->told(notices);
  } else {
    notifications_->tell(std::move(notices));
  }
}

void RunManager::retry_unsettled(std::unique_lock<std::mutex>& lock) {
  std::vector<UnsettledEnd> pending;
  {
    std::lock_guard guard(unsettled_mutex_);
    if (unsettled_.empty()) return;
    const std::int64_t now = now_millis(*clock_);
    if (now < next_settle_retry_) return;
    next_settle_retry_ = now + kSettleRetryMillis;
    pending.swap(unsettled_);
  }
  lock.unlock();
  std::vector<UnsettledEnd> failed;
  for (UnsettledEnd& end : pending) {
    try {
      if (end.reopen_reviews) reopen_claims(end.record.run_id);
      write_end(end.record, end.keep_run, end.thread ? &*end.thread : nullptr, end.notices);
    } catch (const Error&) {
      failed.push_back(std::move(end));
    }
  }
  if (!failed.empty()) {
    std::lock_guard guard(unsettled_mutex_);
    // Ends stored later than these (of the same run) win: keep the failed ones first.
    failed.insert(failed.end(), std::make_move_iterator(unsettled_.begin()),
                  std::make_move_iterator(unsettled_.end()));
    unsettled_.swap(failed);
  }
  lock.lock();
}

void RunManager::worker_loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    retry_unsettled(lock);
    if (stopping_) break;
    std::shared_ptr<ActiveRun> next;
    std::int64_t now = now_millis(*clock_);
    std::int64_t earliest = 0;
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      auto& run = active_.at(*it);
      if (running_threads_.count(run->record.thread_id)) continue;
      // Runs of one thread go in order: a delayed run holds back the ones behind it.
      bool earlier_waiting = false;
      for (auto before = queue_.begin(); before != it; ++before) {
        if (active_.at(*before)->record.thread_id == run->record.thread_id) earlier_waiting = true;
      }
      if (earlier_waiting) continue;
      const std::int64_t due = std::max(run->not_before, run->next_try);
      if (due > now) {
        if (earliest == 0 || due < earliest) earliest = due;
        continue;
      }
      next = run;
      queue_.erase(it);
      break;
    }
    if (!next) {
      {
        std::lock_guard guard(unsettled_mutex_);
        if (!unsettled_.empty() && (earliest == 0 || next_settle_retry_ < earliest)) {
          earliest = next_settle_retry_;
        }
      }
      if (earliest != 0) {
        wake_.wait_for(lock, std::chrono::milliseconds(std::max<std::int64_t>(earliest - now, 1)));
      } else {
        wake_.wait(lock);
      }
      continue;
    }
    running_threads_.insert(next->record.thread_id);
    if (shared() && !next->taken_up) {
      // Taken up through the database: one run per thread at a time across every replica.
      lock.unlock();
      std::string rollback_to;
      const ClaimOutcome outcome = claim(next, rollback_to);
      lock.lock();
      const bool cancelled = active_.count(next->record.run_id) == 0;  // cancelled meanwhile
      if (outcome != ClaimOutcome::kClaimed || cancelled) {
        running_threads_.erase(next->record.thread_id);
        if (outcome == ClaimOutcome::kWaiting && !cancelled) {
          // Its place in the queue is kept (no earlier run of its thread was waiting).
          next->next_try = now_millis(*clock_) + poll_millis();
          queue_.push_front(next->record.run_id);
        } else if (outcome == ClaimOutcome::kGone && !cancelled) {
          finish_locked(next, "{}");  // no longer this replica's to run
        }
        wake_.notify_all();
        continue;
      }
      next->taken_up = true;
      if (!rollback_to.empty()) rollback_to_[next->record.thread_id] = rollback_to;
    }
    next->started = true;
    lock.unlock();
    try {
      execute(next);
    } catch (const std::exception& e) {
      // execute() handles every failure of a run; this is the last line, so that a bug never
      // takes the worker (and the process) down or leaves the thread held.
      log_error("run " + next->record.run_id + ": " + e.what());
    }
    lock.lock();
    if (active_.count(next->record.run_id)) finish_locked(next, "{}");
    // A run of this thread that waited for this one is taken up by this worker, which looks at
    // the queue again before it waits: no other worker needs waking.
    running_threads_.erase(next->record.thread_id);
  }
}

void RunManager::record_state_update(const std::string& thread_id, const std::string& graph_id) {
  ThreadOutcome outcome =
      read_thread_outcome(graph(graph_id), thread_id, RunEnding::kCompleted, "", *clock_);
  record_reviews(thread_id, outcome);
  store_outcome(thread_id, outcome);
}

}  // namespace tollgate::server

#include "server/run_manager.h"

#include <chrono>

#include "server/http_types.h"
#include "server/ids.h"
#include "server/run_events.h"
#include "server/wire_format.h"
#include "tollgate/error.h"

namespace tollgate::server {

namespace {

constexpr std::size_t kFinishedRunsKept = 512;
constexpr const char* kBusyMessage =
    "Thread is already running a task. Wait for it to finish or choose a different multitask "
    "strategy.";

// The id of the thread's latest checkpoint ("" when it has none).
std::string latest_checkpoint(const CompiledGraph& graph, const std::string& thread_id) {
  RunConfig latest;
  latest.thread_id = thread_id;
  return graph.get_state(latest).config.checkpoint_id;
}

// Whether the thread's latest checkpoint is still `checkpoint` (false if it cannot be read).
bool still_at(const CompiledGraph& graph, const std::string& thread_id,
              const std::string& checkpoint) {
  try {
    return latest_checkpoint(graph, thread_id) == checkpoint;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

// ----------------------------------------------------------------------------- ActiveRun

struct RunManager::ActiveRun {
  RunRecord record;
  RunRequest request;
  std::shared_ptr<EventLog> log = std::make_shared<EventLog>();
  std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
  bool started = false;
  bool rollback = false;  // guarded by mutex_
  // Guarded by mutex_: refused before it changed anything and answered with its error; it
  // finishes its bookkeeping but no longer holds its thread.
  bool refused = false;
  std::int64_t not_before = 0;
};

RunManager::RunManager(ServerStore& store, ThreadStreams& streams, GraphMap graphs,
                       std::size_t workers)
    : store_(store), streams_(streams), graphs_(std::move(graphs)), worker_count_(workers) {}

RunManager::~RunManager() {
  stop();
}

void RunManager::start() {
  for (RunRecord run : store_.list_runs_with_status("running")) {
    run.status = "error";
    run.updated_at = now_millis();
    store_.put_run(run);
    const std::string message = "The server stopped while run " + run.run_id +
                                " was executing; its progress up to the last checkpoint is kept. "
                                "Start a new run to retry.";
    auto assistant = store_.get_assistant(run.assistant_id);
    refresh_thread(run.thread_id, assistant ? assistant->graph_id : "", message);
  }
  {
    std::unique_lock lock(mutex_);
    for (RunRecord run : store_.list_runs_with_status("pending")) {
      RunRequest request = RunRequest::from_kwargs(run.kwargs, run.thread_id, run.assistant_id);
      auto active = std::make_shared<ActiveRun>();
      active->record = run;
      active->request = std::move(request);
      active->not_before = run.created_at;
      active_[run.run_id] = active;
      queue_.push_back(run.run_id);
    }
  }
  std::size_t count = worker_count_ == 0 ? 1 : worker_count_;
  for (std::size_t i = 0; i < count; ++i) workers_.emplace_back([this] { worker_loop(); });
}

void RunManager::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
    for (auto& [id, run] : active_) run->cancel->store(true);
  }
  wake_.notify_all();
  for (auto& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  workers_.clear();
}

const CompiledGraph* RunManager::graph(const std::string& graph_id) const {
  auto it = graphs_.find(graph_id);
  return it == graphs_.end() ? nullptr : it->second.get();
}

bool RunManager::thread_active_locked(const std::string& thread_id) const {
  for (const auto& [id, run] : active_) {
    if (run->record.thread_id == thread_id && !run->refused) return true;
  }
  return false;
}

bool RunManager::other_runs_active(const RunRecord& run) {
  std::lock_guard lock(mutex_);
  for (const auto& [id, other] : active_) {
    if (id != run.run_id && other->record.thread_id == run.thread_id && !other->refused) return true;
  }
  return false;
}

bool RunManager::thread_active(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  return thread_active_locked(thread_id);
}

RunRecord RunManager::submit(const RunRequest& request) {
  auto assistant = store_.get_assistant(request.assistant_id);
  if (!assistant) throw Error::NotFound("Assistant not found");
  auto thread = store_.get_thread(request.thread_id);
  if (!thread) throw Error::NotFound("Thread with ID " + request.thread_id + " not found");

  std::unique_lock lock(mutex_);
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

  const std::int64_t now = now_millis();
  RunRecord record;
  record.run_id = new_uuid7();
  record.thread_id = request.thread_id;
  record.assistant_id = assistant->assistant_id;
  record.status = "pending";
  record.multitask_strategy = request.multitask_strategy;
  record.created_at = now;
  record.updated_at = now;
  Json metadata = assistant->metadata.is_object() ? assistant->metadata : Json::object();
  if (thread->metadata.is_object()) metadata.update(thread->metadata);
  if (request.metadata.is_object()) metadata.update(request.metadata);
  metadata["graph_id"] = assistant->graph_id;
  metadata["assistant_id"] = assistant->assistant_id;
  record.metadata = metadata;
  RunRequest stored = request;
  stored.assistant_id = assistant->assistant_id;
  Json configurable = stored.config.value("configurable", Json::object());
  if (!configurable.is_object()) configurable = Json::object();
  configurable["run_id"] = record.run_id;
  configurable["thread_id"] = record.thread_id;
  configurable["graph_id"] = assistant->graph_id;
  configurable["assistant_id"] = assistant->assistant_id;
  record.kwargs = stored.to_kwargs();
  record.kwargs["config"]["configurable"] = configurable;

  store_.put_run(record);
  thread->status = "busy";
  thread->updated_at = now;
  if (!thread->metadata.is_object()) thread->metadata = Json::object();
  thread->metadata["graph_id"] = assistant->graph_id;
  thread->metadata["assistant_id"] = assistant->assistant_id;
  store_.update_thread(*thread);

  auto active = enqueue_locked(record, std::move(stored));
  active->not_before = now + static_cast<std::int64_t>(request.after_seconds * 1000);
  lock.unlock();
  wake_.notify_all();
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
  if (!store_.get_run(run_id)) return nullptr;
  auto log = std::make_shared<EventLog>();
  for (LogEntry& entry : store_.run_events(run_id)) log->append(std::move(entry));
  log->close();
  return log;
}

std::optional<Json> RunManager::result(const std::string& run_id) {
  std::unique_lock lock(mutex_);
  if (active_.count(run_id)) return std::nullopt;
  auto done = finished_.find(run_id);
  if (done != finished_.end()) return done->second.result;
  lock.unlock();
  auto run = store_.get_run(run_id);
  if (!run) return Json();
  auto thread = store_.get_thread(run->thread_id);
  if (run->status == "error") {
    std::string message =
        thread && thread->error.is_string() ? thread->error.get<std::string>() : "The run failed.";
    return Json{{"__error__", {{"error", "Error"}, {"message", message}}}};
  }
  Json values = thread && thread->values.is_object() ? thread->values : Json::object();
  if (thread && thread->status == "interrupted" && thread->interrupts.is_object()) {
    Json all = Json::array();
    for (auto& [task, list] : thread->interrupts.items()) {
      for (const Json& i : list) all.push_back(i);
    }
    values["__interrupt__"] = all;
  }
  return values;
}

bool RunManager::cancel(const std::string& run_id, bool rollback) {
  std::unique_lock lock(mutex_);
  auto it = active_.find(run_id);
  if (it == active_.end()) return false;
  auto run = it->second;
  cancel_locked(run, rollback, lock);
  return true;
}

void RunManager::cancel_thread(const std::string& thread_id) {
  std::unique_lock lock(mutex_);
  std::vector<std::shared_ptr<ActiveRun>> runs;
  for (const auto& [id, run] : active_) {
    if (run->record.thread_id == thread_id) runs.push_back(run);
  }
  for (auto& run : runs) cancel_locked(run, false, lock);
}

bool RunManager::cancel_locked(const std::shared_ptr<ActiveRun>& run, bool rollback,
                               std::unique_lock<std::mutex>& lock) {
  (void)lock;
  run->cancel->store(true);
  run->rollback = run->rollback || rollback;
  if (run->started) return true;  // the worker finishes it
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (*it == run->record.run_id) {
      queue_.erase(it);
      break;
    }
  }
  if (rollback) {
    store_.delete_run(run->record.run_id);
  } else {
    run->record.status = "interrupted";
    run->record.updated_at = now_millis();
    store_.put_run(run->record);
  }
  finish_locked(run, Json::object());
  if (!thread_active_locked(run->record.thread_id)) {
    auto assistant = store_.get_assistant(run->record.assistant_id);
    std::string graph_id = assistant ? assistant->graph_id : "";
    refresh_thread_state(run->record.thread_id, graph_id, std::nullopt, false);
  }
  return true;
}

void RunManager::finish_locked(const std::shared_ptr<ActiveRun>& run, Json result) {
  run->log->close();
  active_.erase(run->record.run_id);
  if (!finished_.count(run->record.run_id)) finished_order_.push_back(run->record.run_id);
  finished_[run->record.run_id] = Finished{run->log, std::move(result)};
  while (finished_order_.size() > kFinishedRunsKept) {
    finished_.erase(finished_order_.front());
    finished_order_.pop_front();
  }
}

void RunManager::worker_loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    std::shared_ptr<ActiveRun> next;
    std::int64_t now = now_millis();
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
      if (run->not_before > now) {
        if (earliest == 0 || run->not_before < earliest) earliest = run->not_before;
        continue;
      }
      next = run;
      queue_.erase(it);
      break;
    }
    if (!next) {
      if (earliest != 0) {
        wake_.wait_for(lock, std::chrono::milliseconds(earliest - now));
      } else {
        wake_.wait(lock);
      }
      continue;
    }
    next->started = true;
    running_threads_.insert(next->record.thread_id);
    lock.unlock();
    execute(next);
    lock.lock();
    running_threads_.erase(next->record.thread_id);
    wake_.notify_all();
  }
}

void RunManager::refresh_thread(const std::string& thread_id, const std::string& graph_id,
                                const std::optional<std::string>& error) {
  bool active;
  {
    std::lock_guard lock(mutex_);
    active = thread_active_locked(thread_id);
  }
  refresh_thread_state(thread_id, graph_id, error, active);
}

void RunManager::refresh_thread_state(const std::string& thread_id, const std::string& graph_id,
                                      const std::optional<std::string>& error, bool active) {
  auto thread = store_.get_thread(thread_id);
  if (!thread) return;
  const CompiledGraph* g = graph(graph_id);
  bool pending = false;
  if (g != nullptr) {
    RunConfig config;
    config.thread_id = thread_id;
    StateSnapshot snapshot = g->get_state(config);
    if (!snapshot.config.checkpoint_id.empty()) {
      Json values = snapshot.values.to_json();
      thread->values = values.is_object() ? values : Json::object();
      thread->interrupts = interrupts_by_task(snapshot);
      pending = !snapshot.next.empty();
    }
  }
  if (error) {
    thread->status = "error";
    thread->error = *error;
  } else {
    thread->error = nullptr;
    thread->status = pending ? "interrupted" : active ? "busy" : "idle";
  }
  thread->updated_at = now_millis();
  store_.update_thread(*thread);
}

void RunManager::execute(const std::shared_ptr<ActiveRun>& run) {
  RunRecord& record = run->record;
  const RunRequest& request = run->request;
  auto assistant = store_.get_assistant(record.assistant_id);
  const std::string graph_id = assistant ? assistant->graph_id : "";
  const CompiledGraph* g = graph(graph_id);

  record.status = "running";
  record.updated_at = now_millis();
  store_.put_run(record);

  RunEvents events(store_, streams_, run->log, record, request, graph_id);
  events.started();

  Json result = Json::object();
  std::optional<std::string> failure;
  bool rejected = false;
  // The checkpoint this run starts from: where a rollback returns to, and how a refusal is
  // told from a failure (a refused run leaves it the thread's latest checkpoint).
  std::string base_checkpoint;
  std::optional<std::int64_t> audit_id;
  try {
    if (g == nullptr) throw Error::NotFound("Graph " + graph_id + " is not served here");
    RunConfig config;
    config.thread_id = record.thread_id;
    config.run_id = record.run_id;
    config.checkpoint_id = request.checkpoint_id;
    {
      std::lock_guard lock(mutex_);
      auto rollback = rollback_to_.find(record.thread_id);
      if (rollback != rollback_to_.end()) {
        if (config.checkpoint_id.empty()) config.checkpoint_id = rollback->second;
        rollback_to_.erase(rollback);
      }
    }
    const Json& configurable = record.kwargs["config"]["configurable"];
    if (config.checkpoint_id.empty() && configurable.contains("checkpoint_id") &&
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
    config.on_event = [&events](const StreamEvent& event) { events.on_event(event); };
    config.cancel = run->cancel;

    base_checkpoint = latest_checkpoint(*g, record.thread_id);
    audit_id = audit_decision(record, request, graph_id, base_checkpoint);

    Input input = Json();
    if (request.command) {
      input = Command::from_json(*request.command);
    } else {
      input = normalize_input(request.input);
    }
    RunResult outcome = g->invoke(input, config);
    if (run->cancel->load()) {
      std::lock_guard lock(mutex_);
      if (run->rollback) rollback_to_[record.thread_id] = base_checkpoint;
      throw Error(ErrorCode::kCancelled, "Run cancelled");
    }
    events.finished(outcome);
    result = outcome.to_json();
    if (!outcome.interrupts.empty() || outcome.paused) {
      result["__interrupt__"] = interrupts_to_json(outcome.interrupts);
    }
    record.status = "success";
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kCancelled || run->cancel->load()) {
      record.status = "interrupted";
      events.cancelled();
    } else {
      const bool refusal = e.code() == ErrorCode::kConflict ||
                           e.code() == ErrorCode::kUnprocessable ||
                           e.code() == ErrorCode::kInvalidArgument;
      if (refusal && g != nullptr && still_at(*g, record.thread_id, base_checkpoint)) {
        // Refused before anything was saved (a resume with nothing to resume, a decision the
        // HITL middleware rejects): the thread keeps its state and status; requests waiting
        // for the run answer with the error's status and message.
        rejected = true;
        // Before the refusal is answered, the thread reads as it was and a refused resume is
        // gone from the run list, so the client that got the 409/422 sees neither the run nor
        // a busy thread. (Both are done again once the run is finished; events recorded until
        // then are deleted with it.)
        try {
          refresh_thread_state(record.thread_id, graph_id, std::nullopt,
                               other_runs_active(record));
          if (request.command) store_.delete_run(record.run_id);
        } catch (const std::exception&) {
        }
        {
          // The client may start the next run as soon as it has the 409/422: this one must no
          // longer hold the thread by then (the next run would be refused as busy).
          std::lock_guard lock(mutex_);
          run->refused = true;
        }
        run->log->set_rejection(http_status(e.code()), e.what());
      } else {
        failure = e.what();
      }
      record.status = "error";
      events.failed(run_error_name(e.code()), e.what());
      result = Json{{"__error__", {{"error", run_error_name(e.code())}, {"message", e.what()}}}};
    }
  } catch (const std::exception& e) {
    record.status = "error";
    failure = e.what();
    events.failed("Error", e.what());
    result = Json{{"__error__", {{"error", "Error"}, {"message", e.what()}}}};
  }

  settle_decision(audit_id, record, rejected, result);
  record.updated_at = now_millis();
  bool rolled_back;
  {
    std::lock_guard lock(mutex_);
    rolled_back = run->rollback;
  }
  // A refused resume never happened: the request that asked for it was held until now and
  // gets the error instead of the run. (Other runs were already announced to their client.)
  if (rolled_back || (rejected && request.command)) {
    store_.delete_run(record.run_id);
  } else {
    store_.put_run(record);
  }
  try {
    if (request.temporary) {
      if (g != nullptr && g->checkpointer()) g->checkpointer()->delete_thread(record.thread_id);
      store_.delete_thread(record.thread_id);
      streams_.forget(record.thread_id);
    } else {
      // The thread's record is final before the run's result is published, so a client
      // answered by /runs/wait or /join reads the thread as it is now, never still busy.
      try {
        refresh_thread_state(record.thread_id, graph_id, rejected ? std::nullopt : failure,
                             other_runs_active(record));
      } catch (const std::exception&) {
        // The run's own outcome is recorded; a failed refresh shows up on the next read.
      }
      std::lock_guard lock(mutex_);
      active_.erase(record.run_id);
      finished_order_.push_back(record.run_id);
      finished_[record.run_id] = Finished{run->log, result};
    }
  } catch (const std::exception&) {
    // The run's own outcome is recorded; a failed refresh shows up on the next read.
  }
  std::lock_guard lock(mutex_);
  finish_locked(run, std::move(result));
}

}  // namespace tollgate::server

// RunManager: accepts runs, applies multitask strategies, executes runs on a worker pool
// (never on I/O threads; at most one run per thread at a time), records their stream
// events, and keeps thread and run records in step with the graph's checkpoints.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/event_log.h"
#include "server/run_request.h"
#include "server/store.h"
#include "server/thread_streams.h"
#include "tollgate/graph.h"

namespace tollgate::server {

class AuditLog;

using GraphMap = std::map<std::string, std::shared_ptr<const CompiledGraph>, std::less<>>;

// Thread-safety: all public methods may be called from any thread. mutex_ guards active_,
// queue_, running_threads_, finished_ and rollback_to_.
class RunManager {
 public:
  RunManager(ServerStore& store, ThreadStreams& streams, GraphMap graphs, std::size_t workers);
  ~RunManager();
  RunManager(const RunManager&) = delete;
  RunManager& operator=(const RunManager&) = delete;

  // Marks runs that were executing when a previous process died as failed, re-queues the
  // pending ones, and starts the workers.
  void start();
  void stop();

  // Creates the run (pending) after applying the multitask strategy against the thread's
  // active runs. Throws Error(kConflict) for "reject" on a busy thread.
  RunRecord submit(const RunRequest& request);

  // The run's event log: live for active and recent runs, rebuilt (closed) from the store for
  // older ones; nullptr for an unknown run.
  std::shared_ptr<EventLog> events(const std::string& run_id);
  // The body /runs/wait and /join answer with once the run ended: the last values (plus
  // "__interrupt__" when paused) or {"__error__": {...}}. nullopt while the run is active.
  std::optional<Json> result(const std::string& run_id);

  // Cancels a pending or running run; rollback also deletes it (and its progress). Returns
  // false if the run is not active.
  bool cancel(const std::string& run_id, bool rollback);
  // Cancels every active run of a thread (e.g. before deleting it).
  void cancel_thread(const std::string& thread_id);
  bool thread_active(const std::string& thread_id);

  const CompiledGraph* graph(const std::string& graph_id) const;
  const GraphMap& graphs() const { return graphs_; }

  // Records every decision (a run resuming a thread) in `log` before the run applies it, and
  // its outcome afterwards. Call before start(); `log` must outlive the manager.
  void set_audit_log(AuditLog* log) { audit_ = log; }

  // Re-reads the thread's state from its checkpoints and stores values, interrupts and
  // status (interrupted if anything is pending, busy if runs are active, else idle, or
  // error when `error` is given).
  void refresh_thread(const std::string& thread_id, const std::string& graph_id,
                      const std::optional<std::string>& error = std::nullopt);

 private:
  struct ActiveRun;
  void worker_loop();
  void execute(const std::shared_ptr<ActiveRun>& run);
  void finish_locked(const std::shared_ptr<ActiveRun>& run, Json result);
  bool cancel_locked(const std::shared_ptr<ActiveRun>& run, bool rollback,
                     std::unique_lock<std::mutex>& lock);
  std::shared_ptr<ActiveRun> enqueue_locked(RunRecord record, RunRequest request);
  bool thread_active_locked(const std::string& thread_id) const;
  // True when another run than `run` is active on its thread (its status stays busy).
  bool other_runs_active(const RunRecord& run);
  // The audit entry of the decision `request` carries (nullopt: it carries none, or no log).
  std::optional<std::int64_t> audit_decision(const RunRecord& record, const RunRequest& request,
                                             const std::string& graph_id,
                                             const std::string& checkpoint_id);
  void settle_decision(std::optional<std::int64_t> audit_id, const RunRecord& record,
                       bool refused, const Json& result);
  void refresh_thread_state(const std::string& thread_id, const std::string& graph_id,
                            const std::optional<std::string>& error, bool active);

  ServerStore& store_;
  ThreadStreams& streams_;
  GraphMap graphs_;
  std::size_t worker_count_;
  AuditLog* audit_ = nullptr;
  std::vector<std::thread> workers_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, std::shared_ptr<ActiveRun>> active_;
  std::deque<std::string> queue_;
  std::set<std::string> running_threads_;
  struct Finished {
    std::shared_ptr<EventLog> log;
    Json result;
  };
  std::map<std::string, Finished> finished_;
  std::deque<std::string> finished_order_;
  std::map<std::string, std::string> rollback_to_;  // thread -> checkpoint the next run forks
};

}  // namespace tollgate::server

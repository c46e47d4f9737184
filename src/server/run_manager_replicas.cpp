// RunManager as one replica of several on one database (cluster.h, replica_store.h): runs are
// taken up through the database, cancels asked elsewhere reach the runs executing here, streams
// of runs executing elsewhere are followed, and the runs of replicas that died are taken over.
#include <unistd.h>

#include <chrono>
#include <vector>

#include "server/cluster.h"
#include "server/log.h"
#include "server/run_manager.h"
#include "server/run_mirrors.h"
#include "tollgate/error.h"

namespace tollgate::server {

namespace {

constexpr std::chrono::milliseconds kFlushEvery{25};

std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

}  // namespace

void RunManager::set_cluster(Cluster& cluster, ReplicaStore& replicas) {
  cluster_ = &cluster;
  replicas_ = &replicas;
  mirrors_ = std::make_unique<RunMirrors>(store_);
  cluster.on_tick([this] { replica_tick(); });
  cluster.on_fenced([this] { fenced(); });
  // A run ended somewhere: runs waiting for their thread may start.
  cluster.on_notification("runs", [this](const std::string&) {
    std::lock_guard lock(mutex_);
    for (const std::string& id : queue_) active_.at(id)->next_try = 0;
    wake_.notify_all();
  });
  cluster.on_notification("cancels", [this](const std::string& payload) {
    const std::size_t colon = payload.find(':');
    if (colon == std::string::npos) return;
    const bool rollback = payload.compare(0, colon, "rollback") == 0;
    const std::string run_id = payload.substr(colon + 1);
    std::unique_lock lock(mutex_);
    auto it = active_.find(run_id);
    if (it == active_.end()) return;
    auto run = it->second;
    if (run->cancel->load() && (run->rollback || !rollback)) return;  // asked before
    cancel_locked(run, rollback, lock);
  });
  cluster.on_notification("events", [this](const std::string& payload) {
    if (payload.rfind("r:", 0) == 0) {
      mirrors_->catch_up(payload.substr(2));
    } else if (payload.rfind("t:", 0) == 0) {
      streams_.catch_up(payload.substr(2));
    } else {
      // Notifications may have been missed (the listener reconnected).
      mirrors_->catch_up_all();
      streams_.catch_up_read();
    }
  });
}

const std::string& RunManager::cluster_replica_id() const {
  return cluster_->replica_id();
}

std::int64_t RunManager::poll_millis() const {
  return cluster_->options().poll.count();
}

void RunManager::recover_shared() {
  cluster_->join(Json{{"host", host_name()},
                      {"pid", static_cast<std::int64_t>(getpid())},
                      {"workers", worker_count_}});
  // What a previous process with this replica id left is cut off as by a crash; what dead
  // replicas left, too.
  take_over(replicas_->owned_runs(cluster_->replica_id()));
  take_over(replicas_->adopt_orphaned_runs(cluster_->replica_id(),
                                           cluster_->options().timeout.count()));
  for (const std::string& thread_id : store_.thread_ids_with_stored_status(ThreadStatus::kBusy)) {
    reconcile_thread(thread_id);
  }
  cluster_->start();
}

void RunManager::stop_cluster() {
  if (cluster_ != nullptr) cluster_->stop();
}

void RunManager::take_over(std::vector<RunRecord> runs) {
  if (runs.empty()) return;
  std::vector<CutOffRun> cut_off;
  for (RunRecord& run : runs) {
    if (run.status == RunStatus::kRunning) {
      log_info("run " + run.run_id + " was cut off by the end of the replica executing it; " +
               cluster_->replica_id() + " takes it over");
      cut_off.push_back(plan_recovery(std::move(run)));
      continue;
    }
    RunRequest request = RunRequest::from_kwargs(run.kwargs, run.thread_id, run.assistant_id);
    const std::int64_t not_before = std::max(
        run.not_before,
        run.created_at + static_cast<std::int64_t>(run.kwargs.value("after_seconds", 0.0) * 1000));
    std::lock_guard lock(mutex_);
    if (active_.count(run.run_id) != 0) continue;
    auto active = enqueue_locked(run, std::move(request));
    active->not_before = not_before;
  }
  settle_cut_off_decisions(cut_off);
  for (CutOffRun& cut : cut_off) carry_out(cut);
  wake_.notify_all();
}

void RunManager::replica_tick() {
  const std::string& me = cluster_->replica_id();
  take_over(replicas_->adopt_orphaned_runs(me, cluster_->options().timeout.count()));
  for (const CancelRequest& asked : replicas_->cancel_requests(me)) {
    cluster_->deliver("cancels", (asked.rollback ? "rollback:" : "interrupt:") + asked.run_id);
  }
  cluster_->deliver("runs", "");
  mirrors_->catch_up_all();
  streams_.catch_up_read();
}

ClaimOutcome RunManager::claim(const std::shared_ptr<ActiveRun>& run, std::string& rollback_to) {
  ClaimedRun claimed;
  ClaimOutcome outcome = ClaimOutcome::kWaiting;
  try {
    outcome = replicas_->claim_run(run->record.run_id, run->record.thread_id,
                                   cluster_->replica_id(), now_millis(*clock_), claimed);
  } catch (const Error& e) {
    log_warning("run " + run->record.run_id + " could not be taken up now: " + e.what());
    return ClaimOutcome::kWaiting;
  }
  if (outcome == ClaimOutcome::kClaimed) {
    std::lock_guard lock(mutex_);
    run->record.status = claimed.record.status;
    run->record.attempts = claimed.record.attempts;
    run->record.updated_at = claimed.record.updated_at;
    rollback_to = claimed.rollback_to;
  }
  return outcome;
}

void RunManager::fenced() {
  // Whatever executes here now also executes on the replica that adopted it: stop it. The store
  // refuses the ends these runs write, and the queued ones find they are no longer this
  // replica's when they are taken up.
  std::lock_guard lock(mutex_);
  for (auto& [id, run] : active_) run->cancel->store(true);
}

bool RunManager::handed_over(const std::shared_ptr<ActiveRun>& run) {
  std::lock_guard lock(mutex_);
  return run->handed_over;
}

void RunManager::flush_loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    flush_wake_.wait_for(lock, kFlushEvery);
    lock.unlock();
    try {
      replicas_->flush_events();
    } catch (const Error&) {
      // Kept queued: written with the next write that succeeds.
    }
    lock.lock();
  }
}

}  // namespace tollgate::server

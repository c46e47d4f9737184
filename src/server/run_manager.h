// RunManager: accepts runs, applies multitask strategies, executes runs on a worker pool
// (never on I/O threads; at most one run per thread at a time), records their stream
// events, and keeps thread and run records in step with the graph's checkpoints.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/event_log.h"
#include "server/keyed_locks.h"
#include "server/replica_store.h"
#include "server/run_events.h"
#include "server/run_request.h"
#include "server/store.h"
#include "server/thread_outcome.h"
#include "server/thread_streams.h"
#include "tollgate/clock.h"
#include "tollgate/graph.h"

namespace tollgate::server {

class AuditLog;
class Cluster;
class Notifications;
class ReplicaStore;
class RunMirrors;
class ReviewStore;
class ReviewTimer;
struct ReviewRecord;

// A review whose deadline passed, as the server answered it (RunManager::expire_review).
struct ReviewExpiry {
  std::string thread_id;
  std::string assistant_id;
  std::string checkpoint_id;
  std::string interrupt_id;
  std::string run_id;  // the run carrying the answer, as identity "system:timeout"
  Json decisions;      // the HITLResponse decisions given, one per action
  Json shown;          // the interrupt's value (action_requests, review_configs)
  std::int64_t expired_at = 0;
};
using ExpiryListener = std::function<void(const ReviewExpiry&)>;

using GraphMap = std::map<std::string, std::shared_ptr<const CompiledGraph>, std::less<>>;

// Thread-safety: all public methods may be called from any thread. mutex_ guards active_,
// queue_, running_threads_, finished_ and rollback_to_; unsettled_mutex_ (taken after mutex_
// when both are held) guards unsettled_ and next_settle_retry_. A thread's submission lock
// (taken before mutex_) is held by a submission of a run of the thread from its busy check to
// the run's insert, and by a deletion or pruning of the thread: mutex_ is held only while what
// runs is looked at or changed, never across a write to the storage.
//
// Storage failures (Error kUnavailable from the store, the saver or the audit log) inside a run
// fail that run — its waiting client gets 503 — never a worker or the process. A run's end that
// cannot be stored is kept and written again until storage is back.
class RunManager {
 public:
  RunManager(ServerStore& store, ThreadStreams& streams, GraphMap graphs, std::size_t workers);
  ~RunManager();
  RunManager(const RunManager&) = delete;
  RunManager& operator=(const RunManager&) = delete;

  // Recovers what a previous process left (run_recovery.cpp): a run it was executing whose step
  // was cut short is queued again to finish that step from the last checkpoint when the step
  // was cut off during a tool call whose intent was stored (the call pauses for review instead
  // of running again) or when its graph re-runs cut-off steps
  // (set_graphs_rerunning_cut_off_steps; docs/effects.md); other runs it was executing are
  // failed and their threads set by their latest checkpoint (a pending interrupt stays
  // answerable). Decisions those runs carried are settled in the audit log ("lost",
  // "effect_uncertain"), but those of re-run steps by their continued run as it ends. Threads it
  // left busy are reconciled; pending runs are queued again. Then starts the workers.
  void start();
  void stop();

  // Creates the run (pending) after applying the multitask strategy against the thread's
  // active runs. Throws Error(kConflict) for "reject" on a busy thread. `notices` (what the new
  // run's acceptance tells, e.g. review.expired) are stored with the run and told once it is.
  // `head`: the thread's head as the caller has just read it (get_thread_head), or null to read
  // it here; the run's insert finds a thread deleted since either way. `assistant`: likewise
  // request.assistant_id's record, or null.
  RunRecord submit(const RunRequest& request, std::vector<QueuedNotification> notices = {},
                   const ThreadRecord* head = nullptr, const AssistantRecord* assistant = nullptr);

  // The run's event log: live for active and recent runs, rebuilt (closed) from the store for
  // older ones; nullptr for an unknown run.
  std::shared_ptr<EventLog> events(const std::string& run_id);
  // Recent runs are the last 512 that finished here, the oldest of them let go while their
  // logs and results hold more than `bytes` (the newest 16 always kept). Default 64 MiB.
  static constexpr std::size_t kDefaultFinishedBytesKept = std::size_t{64} << 20;
  void set_finished_bytes_kept(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    finished_bytes_kept_ = bytes;
  }
  // How many finished runs are kept in memory (for tests and diagnostics).
  std::size_t finished_runs_kept() {
    std::lock_guard lock(mutex_);
    return finished_.size();
  }
  // The body /runs/wait and /join answer with once the run ended, as JSON text: the last values
  // (plus "__interrupt__" when paused) or {"__error__": {...}}; null while the run is active.
  // Written once from the run's state, shared, never copied: a long thread's state is large.
  std::shared_ptr<const std::string> result(const std::string& run_id);
  // What result() answers without reading the store (for an HTTP I/O thread): the result of a
  // run that ended here lately, or null while it runs here; null with `store_needed` set when
  // only the store can tell.
  std::shared_ptr<const std::string> known_result(const std::string& run_id, bool& store_needed);
  // result() of a run whose end is stored while it may still be finishing here (a client
  // followed it as a mirror, then this replica took it over): waits until it has left the
  // active runs, at most `patience`, then answers as result() would, from the store if it
  // is still active here by then.
  std::shared_ptr<const std::string> result_once_ended(const std::string& run_id,
                                                       std::chrono::milliseconds patience);

  // Cancels a pending or running run; rollback also deletes it (and its progress). Returns
  // false if the run is not active.
  bool cancel(const std::string& run_id, bool rollback);
  bool thread_active(const std::string& thread_id);
  // Deletes the thread with its runs, events and (from `checkpoints`, if given) checkpoints.
  // Refused with Error(kConflict) while a run of the thread is pending or running, so that no
  // run writes after the thread is gone and no accepted decision is dropped.
  void delete_thread(const std::string& thread_id, Saver* checkpoints);
  // Removes every checkpoint of the thread but the newest of each namespace (with the values
  // and writes it needs: a pause on it stays answerable). False, nothing removed, while a run
  // of the thread is pending or running.
  bool prune_checkpoints(const std::string& thread_id, Saver& checkpoints);

  const CompiledGraph* graph(const std::string& graph_id) const;
  const GraphMap& graphs() const { return graphs_; }

  // Records every decision (a run resuming a thread) in `log` before the run applies it, and
  // its outcome afterwards. Call before start(); `log` must outlive the manager.
  void set_audit_log(AuditLog* log) { audit_ = log; }
  // Keeps a review record of every pending action in `reviews` and claims the records a
  // decision answers when it is accepted (review_store.h). Call before start(); `reviews` must
  // outlive the manager.
  void set_review_store(ReviewStore* reviews) { reviews_ = reviews; }
  // Tells `notifications` of each pause (review.requested), applied decision (review.decided)
  // and run end (run.finished, run.failed). Call before start(); it must outlive the manager.
  void set_notifications(Notifications* notifications) { notifications_ = notifications; }
  // The graphs whose cut-off steps recovery runs again by itself
  // (ServedGraphOptions::rerun_cut_off_steps). Call before start().
  void set_graphs_rerunning_cut_off_steps(std::set<std::string, std::less<>> graph_ids) {
    rerunning_graphs_ = std::move(graph_ids);
  }
  // Makes this manager one replica of several on one database (cluster.h, replica_store.h):
  // runs are taken up through `replicas` (one per thread at a time across replicas), cancels
  // and streams reach runs executing elsewhere, and the runs of a replica that died are taken
  // over. Call before start(); both must outlive the manager, and the cluster is started by
  // start() and stopped by stop().
  void set_cluster(Cluster& cluster, ReplicaStore& replicas);
  // Woken when review records with a deadline are added. Call before start().
  void set_review_timer(ReviewTimer* timer) { timer_ = timer; }
  // The clock runs and review deadlines are read by: run ids and times, when a delayed run is
  // due, the times of threads' outcomes and of review records (the system clock by default).
  // Call before start();
  // it must outlive the manager.
  void set_clock(const Clock& clock) { clock_ = &clock; }
  // Called once for each review the server answered on its deadline, after the expiry was
  // claimed and its run accepted (its review.expired is stored with that run, see
  // set_notifications). Called on the timer's thread; must not call back into the manager's
  // expiry. Call before start().
  void set_expiry_listener(ExpiryListener listener) { expiry_listener_ = std::move(listener); }

  // Answers the interrupt of `due` (a pending record whose deadline passed) as identity
  // "system:timeout": each of its actions whose deadline passed gets its on_timeout (reject
  // with kReviewTimeoutMessage when none is given), every other action a rejection with that
  // message — never an approval. Its records move pending -> expired with a conditional
  // update, so a decision racing it, or a second expiry, loses (409 for a decision). Records
  // whose thread or interrupt is gone are superseded. Throws when the answer could not be
  // submitted now (e.g. the thread is busy, storage failed); the timer tries again.
  void expire_review(const ReviewRecord& due);

  // Stores the thread's values, interrupts and status after its state was updated directly
  // (POST /threads/{id}/state).
  void record_state_update(const std::string& thread_id, const std::string& graph_id);

  // Recovery gives up on a run cut off this many times (by the process dying while the run
  // executed or while recovery read its checkpoint) and fails it without touching its checkpoint.
  static constexpr int kMaxRunAttempts = 3;

 private:
  struct ActiveRun {
    RunRecord record;
    RunRequest request;
    std::shared_ptr<EventLog> log = std::make_shared<EventLog>();
    std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
    bool started = false;   // guarded by mutex_
    bool rollback = false;  // guarded by mutex_
    // Guarded by mutex_: refused before it changed anything and answered with its error; it
    // finishes its bookkeeping but no longer holds its thread.
    bool refused = false;
    std::int64_t not_before = 0;
    // A run continued by start-up recovery: the audit entry of the decision it carries, still
    // pending from the attempt that was cut off (settled as this one ends).
    std::optional<std::int64_t> audit_id;
    // Several replicas: its record is already taken up for this replica (status running, the
    // attempt counted): claimed, or continued after a cut-off. Guarded by mutex_.
    bool taken_up = false;
    // Several replicas: not tried again before this time (its thread was busy elsewhere).
    std::int64_t next_try = 0;
    // Several replicas: stopped because this replica stops; its end is not stored, another
    // replica adopts and continues it. Guarded by mutex_.
    bool handed_over = false;
  };
  // What start-up recovery does with a run a dead process was executing (run_recovery.cpp).
  struct CutOffRun {
    RunRecord record;
    enum Action { kFail, kContinue, kLeave } action = kFail;  // kLeave: it could not be read
    bool effect_uncertain = false;  // cut off in a tool call whose intent was stored
    ThreadOutcome outcome;          // the thread's, for a run that is failed
  };
  // What a run's end tells beside the reviews its pause asks for (store_end).
  struct EndNotices {
    std::vector<QueuedNotification> decided;
    std::optional<QueuedNotification> ended;
  };
  // A run's end not yet stored (storage failed); written again by the workers.
  struct UnsettledEnd {
    RunRecord record;
    bool keep_run = true;
    std::optional<ThreadOutcome> thread;
    bool reopen_reviews = false;              // the run's decision was not taken (see store_end)
    std::vector<QueuedNotification> notices;  // stored with the end, in order
  };
  // Writes an end with its notices (in the store's transaction when they can be, else each
  // after it) and tells them; throws when storage fails.
  void write_end(const RunRecord& record, bool keep_run, const ThreadOutcome* thread,
                 std::vector<QueuedNotification>& notices);
  // What a store write of a fact takes as its notices: `notices` when the store can write them
  // in its transaction (Notifications::stored_with_facts), else null ...
  std::vector<QueuedNotification>* notices_for_store(
      std::vector<QueuedNotification>& notices) const;
  // ... and, once that write is done, tells what it wrote, or stores and tells them now.
  void tell_after_store(std::vector<QueuedNotification>& notices);
  void worker_loop();
  void execute(const std::shared_ptr<ActiveRun>& run);
  void finish_locked(const std::shared_ptr<ActiveRun>& run, std::string result);
  bool cancel_locked(const std::shared_ptr<ActiveRun>& run, bool rollback,
                     std::unique_lock<std::mutex>& lock);
  std::shared_ptr<ActiveRun> enqueue_locked(RunRecord record, RunRequest request);
  // result() as the store tells it (a run this replica does not hold in memory).
  std::shared_ptr<const std::string> stored_result(const std::string& run_id);
  bool thread_active_locked(const std::string& thread_id) const;
  bool any_run_of_locked(const std::string& thread_id) const;
  // The graph a run executes: the one its metadata names (its assistant's when it was
  // submitted), else (a run stored without it) its assistant's.
  std::string graph_id_of(const RunRecord& record);
  // Stores a run's end; false when storage failed (the end is then kept in unsettled_). The
  // review records the run claimed are put back to pending first when its decision was not
  // taken: `reopen_reviews` (a run that changed nothing), or `thread` still pending what it
  // claimed (cut off by a crash, cancelled, failed before the graph took the decision).
  // The run's notifications are stored with its end and told once it is stored, in this order:
  // the decisions it applied, the reviews its pause asks for (from `thread`), its own end; so a
  // receiver hears review.decided before the review.requested of the pause that follows.
  // `thread` is taken (a long thread's values are large): none when the thread is not written.
  bool store_end(const RunRecord& record, bool keep_run, std::optional<ThreadOutcome> thread,
                 bool reopen_reviews = false, EndNotices notices = {});
  void retry_unsettled(std::unique_lock<std::mutex>& lock);
  // Start-up recovery (run_recovery.cpp).
  void recover();
  // Counts the attempt and decides: fail the run, or continue its step.
  CutOffRun plan_recovery(RunRecord run);
  // Settles the audit entries a dead process left pending (AuditLog::settle_lost).
  void settle_cut_off_decisions(const std::vector<CutOffRun>& cut_off);
  void carry_out(CutOffRun& cut);
  // Queues `run` again to finish the step it was cut off in (RunRequest::continues_cut_off_step).
  void continue_cut_off_step(const RunRecord& run);
  void reconcile_thread(const std::string& thread_id);
  // Several replicas (run_manager_replicas.cpp).
  bool shared() const { return cluster_ != nullptr; }
  // Start-up: the runs a previous process with this replica id left, and those of dead
  // replicas; then the notifications and the tick.
  void recover_shared();
  // At each poll: dead replicas' runs, cancels asked elsewhere, waiting claims, followed
  // streams.
  void replica_tick();
  // Recovers runs taken over (from a dead replica, or this replica's previous process): a
  // running one as start-up recovery does, a pending one queued here.
  void take_over(std::vector<RunRecord> runs);
  // Takes up `run` through the replica store; kClaimed updates its record.
  ClaimOutcome claim(const std::shared_ptr<ActiveRun>& run, std::string& rollback_to);
  // Another replica took this one for dead: stops what executes here (the store refuses
  // their ends) and drops the runs it had queued.
  void fenced();
  // Writes queued stream events often, so clients of other replicas follow runs as they go.
  void flush_loop();
  bool handed_over(const std::shared_ptr<ActiveRun>& run);
  const std::string& cluster_replica_id() const;
  std::int64_t poll_millis() const;
  void stop_cluster();
  // The audit entry of the decision `request` carries (nullopt: it carries none, or no log).
  std::optional<std::int64_t> audit_decision(const RunRecord& record, const RunRequest& request,
                                             const std::string& graph_id,
                                             const std::string& checkpoint_id);
  // Whether audit_run_start records `request`: a run that carries no decision, and does not
  // continue a step that was cut off, with a log to record it in.
  bool audits_run_start(const RunRequest& request) const;
  // Records who started a run that carries no decision, and from which checkpoint (the
  // thread's latest when the run starts, "" when it has none).
  void audit_run_start(const RunRecord& record, const RunRequest& request,
                       const std::string& graph_id, const std::string& checkpoint_id);
  // Settles the decision's audit entry by how its run ended ("recorded" for an approval short
  // of approvals_required), with the message of the run's error, if it failed.
  void settle_decision(std::optional<std::int64_t> audit_id, const RunRecord& record, bool refused,
                       const std::string& message, bool approval_only);
  // Throws Error(kPermissionDenied) naming the rule when the request's identity may not give
  // its decision (review_rules.h); the refusal is audited with that identity.
  void check_reviewers(const RunRequest& request, const ThreadRecord& thread,
                       const std::string& graph_id);
  // Claims the review records of the interrupts `request`'s decision answers (pending ->
  // decided). Throws Error(kConflict) when one of them is no longer pending; then none is
  // claimed.
  void claim_reviews(const RunRequest& request, const std::string& run_id);
  // Puts back the claims among `records` (of one checkpoint) on `interrupt_id` whose run was
  // never stored; true when it put one back.
  bool put_back_orphaned_claims(const std::vector<ReviewRecord>& records,
                                const std::string& interrupt_id, std::int64_t now);
  // For a decision that approves actions needing several approvals (approvals_required > 1):
  // records this reviewer's approval of each (Error(kConflict) when they already approved
  // one), and marks the request approval-only (binding "approval_only": true) while any of
  // them has fewer approvals than it needs — such a run records, it does not resume.
  // Error(kPermissionDenied) when approvals cannot be kept (no review store).
  void collect_approvals(RunRequest& request);
  // Adds the records' created_at and the approvals collected so far to the review configs of
  // `outcome`'s interrupts. Returns the review records at `outcome`'s checkpoint, read when it
  // pends an interrupt (else none).
  std::vector<ReviewRecord> annotate_reviews(const std::string& thread_id, ThreadOutcome& outcome);
  // Puts the records claimed by a run that changed nothing back to pending; `disarm` also
  // drops their deadline (an expiry that was refused is not tried again).
  void reopen_reviews(const std::string& run_id, bool disarm = false);
  // The same, without the disarm; throws when storage fails (store_end retries it).
  void reopen_claims(const std::string& run_id);
  // Whether `outcome` (the thread's latest checkpoint, after `run_id` ended) still pends a
  // review record `run_id` claimed: the run's decision was not taken. `at_checkpoint`: the
  // review records at the outcome's checkpoint (record_reviews).
  bool claims_still_pending(const std::string& run_id, const ThreadOutcome& outcome,
                            const std::vector<ReviewRecord>& at_checkpoint) const;
  // Records what `outcome` (read from the thread's latest checkpoint) shows as pending; earlier
  // pending records are superseded. A failure is logged: a decision adds the records it
  // answers when they are missing. Then shows, in `outcome`'s review configs, each review's
  // created_at and the approvals collected so far ("approvals": [{"by", "at"}]). Returns the
  // records read for that (annotate_reviews).
  std::vector<ReviewRecord> record_reviews(const std::string& thread_id, ThreadOutcome& outcome);
  // review.requested for each interrupt `outcome` shows pending.
  std::vector<QueuedNotification> review_requested_notices(const std::string& thread_id,
                                                           const std::string& assistant_id,
                                                           const ThreadOutcome& outcome) const;
  // Stores a thread's outcome outside a run's end (a state update, start-up recovery) with the
  // review.requested of what it shows pending, told once stored: a reviewer's GET
  // /reviews/stream, which checks who may see the thread when it reads the event, already finds
  // the thread waiting for review.
  void store_outcome(const std::string& thread_id, const ThreadOutcome& outcome);
  // review.decided for each interrupt the decision of `request` answered, once its run applied
  // it (not for a run that only recorded an approval).
  std::vector<QueuedNotification> decision_notices(const RunRecord& record,
                                                   const RunRequest& request) const;
  // run.finished or run.failed of the run's end (and `thread`'s outcome).
  std::optional<QueuedNotification> run_end_notice(const RunRecord& record,
                                                   const std::optional<ThreadOutcome>& thread,
                                                   const std::string& failure) const;

  ServerStore& store_;
  ThreadStreams& streams_;
  GraphMap graphs_;
  std::set<std::string, std::less<>> rerunning_graphs_;
  std::size_t worker_count_;
  AuditLog* audit_ = nullptr;
  ReviewStore* reviews_ = nullptr;
  Notifications* notifications_ = nullptr;
  ReviewTimer* timer_ = nullptr;
  const Clock* clock_ = &system_clock();
  ExpiryListener expiry_listener_;
  std::vector<std::thread> workers_;

  // Whether the run is this replica's in memory (queued, executing, or being submitted).
  bool run_in_memory(const std::string& run_id);
  // Each thread's submission lock (see the class comment), by thread id: a submission held up
  // by the storage holds back no other thread's.
  KeyedLocks submission_locks_;

  std::mutex mutex_;
  std::condition_variable wake_;        // the workers: a run may be taken up
  std::condition_variable flush_wake_;  // the event flusher: stopping
  std::condition_variable ended_;       // a run left active_
  bool stopping_ = false;
  std::map<std::string, std::shared_ptr<ActiveRun>> active_;
  std::deque<std::string> queue_;
  std::set<std::string> running_threads_;
  struct Finished {
    std::shared_ptr<EventLog> log;
    std::shared_ptr<const std::string> result;
    std::size_t bytes = 0;  // of its log's events and its result
  };
  std::map<std::string, Finished> finished_;
  std::deque<std::string> finished_order_;
  std::size_t finished_bytes_ = 0;  // of the finished runs' logs kept
  std::size_t finished_bytes_kept_ = kDefaultFinishedBytesKept;
  std::map<std::string, std::string> rollback_to_;  // thread -> checkpoint the next run forks
  // The texts of the lists each thread's last run showed, for its next run to write its
  // state's lists from (a long conversation is most of a thread's state): the 64 threads that
  // ran last, at most 64 MiB.
  CarriedLists carried_lists_{64, std::size_t{64} << 20};

  // Several replicas (set_cluster); null when this server runs alone.
  Cluster* cluster_ = nullptr;
  ReplicaStore* replicas_ = nullptr;
  std::unique_ptr<RunMirrors> mirrors_;
  std::thread flusher_;
  std::mutex unsettled_mutex_;
  std::vector<UnsettledEnd> unsettled_;
  std::int64_t next_settle_retry_ = 0;  // milliseconds since the epoch
};

}  // namespace tollgate::server

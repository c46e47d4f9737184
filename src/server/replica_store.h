// ReplicaStore: what several replicas of one server, sharing one database, coordinate through
// (docs/deploy.md, "Several replicas"). The tables are the truth; notifications between replicas
// (cluster.h) only say when to look.
//
//   server_replicas   who is alive: each replica renews its heartbeat, by the database's clock
//   server_runs       owner: the replica that executes a run, or will (the one it was submitted
//                     to, or the one that took it over when that one died); cancel_request: a
//                     cancel asked on another replica, until the owner acts on it
//   server_threads    rollback_to: the checkpoint a thread's next run starts from after a
//                     rollback
//
// A run is taken up (claim_run) only by its owner, only when no other run of its thread is
// running and no older run of its thread is still pending — across every replica — so runs of
// one thread go one at a time, in order. A replica whose heartbeat is older than the timeout is
// dead: a live replica adopts its runs (adopt_orphaned_runs) and recovers them as start-up
// recovery does (run_recovery.cpp).
//
// Thread-safety: every method may be called from any thread; each call is atomic. Storage
// failures throw Error(kUnavailable).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/store.h"
#include "tollgate/json.h"

namespace tollgate::server {

struct NotificationEvent;  // webhook_queue.h

// A run a replica took up.
struct ClaimedRun {
  RunRecord record;         // status running, its attempt counted
  std::string rollback_to;  // the checkpoint it starts from (a rollback before it), or ""
};

enum class ClaimOutcome {
  kClaimed,
  kWaiting,  // not yet: its thread is busy, an older run of it waits, or it is not due
  kGone,     // no longer pending here: ended, cancelled, deleted, or adopted by another replica
};

// A cancel asked of a run this replica owns.
struct CancelRequest {
  std::string run_id;
  bool rollback = false;
};

class ReplicaStore {
 public:
  virtual ~ReplicaStore() = default;

  // Says that `replica_id` is alive (inserts or renews its row), with `info` (host, pid, ...)
  // for diagnostics.
  virtual void register_replica(const std::string& replica_id, const Json& info) = 0;
  // Renews the heartbeat; false when the row is gone: another replica found this one dead and
  // adopted its runs.
  virtual bool heartbeat(const std::string& replica_id) = 0;
  // Removes the replica's row (a clean stop).
  virtual void deregister_replica(const std::string& replica_id) = 0;

  // Takes up the pending run `run_id` of thread `thread_id`, owned by `replica_id`, when it is
  // due at `now` and its thread is free (see above): status running, attempts + 1, the thread's
  // rollback point taken.
  virtual ClaimOutcome claim_run(const std::string& run_id, const std::string& thread_id,
                                 const std::string& replica_id, std::int64_t now,
                                 ClaimedRun& claimed) = 0;
  // Makes `replica_id` the owner of every pending or running run whose owner is not a live
  // replica (no heartbeat within `timeout_ms`, or none at all), and returns them as they were
  // (a running one was cut off by its replica's death). Then forgets dead replicas that own
  // nothing.
  virtual std::vector<RunRecord> adopt_orphaned_runs(const std::string& replica_id,
                                                     std::int64_t timeout_ms) = 0;
  // The pending and running runs `replica_id` owns, oldest first: at start-up, what a previous
  // process with the same replica id left.
  virtual std::vector<RunRecord> owned_runs(const std::string& replica_id) = 0;
  // Writes the queued stream events now: replicas flush them often, so that a client of another
  // replica follows a run as it goes.
  virtual void flush_events() = 0;

  enum class Insert { kInserted, kThreadGone, kThreadBusy };
  // ServerStore::insert_run, unless a run of the thread is pending or running (kThreadBusy,
  // nothing written): the multitask strategy "reject" across replicas.
  virtual Insert insert_run_unless_busy(const RunRecord& run, const Json& thread_metadata,
                                        std::vector<QueuedNotification>* notices) = 0;

  // The thread's pending and running runs, oldest first.
  virtual std::vector<RunRecord> active_runs(const std::string& thread_id) = 0;
  // Asks the owner of an active run to cancel it (a rollback also discards its progress); the
  // run as it is, nullopt when it is not active.
  virtual std::optional<RunRecord> request_cancel(const std::string& run_id, bool rollback) = 0;
  // The cancels asked of active runs `replica_id` owns.
  virtual std::vector<CancelRequest> cancel_requests(const std::string& replica_id) = 0;
  // The checkpoint the thread's next run starts from (a run was rolled back).
  virtual void set_rollback_point(const std::string& thread_id,
                                  const std::string& checkpoint_id) = 0;

  // The review stream's events (ReviewFeed) of every replica: appended in one transaction
  // (numbered after every event committed before), read back in that order by each replica.
  virtual void append_feed(const std::vector<std::string>& events, std::int64_t at) = 0;
  // From now on, the fresh notices a write of the store stores with their fact (run inserts and
  // ends, thread outcomes) go into the feed in that write's transaction too, `text` making each
  // one's event (QueuedNotification::in_feed): no transaction of their own.
  virtual void set_feed_texts(std::function<std::string(const NotificationEvent&)> text) = 0;
  // Events numbered above `after`, oldest first, at most `limit`.
  virtual std::vector<std::pair<std::int64_t, std::string>> feed_after(std::int64_t after,
                                                                       std::size_t limit) = 0;
  virtual std::int64_t last_feed_seq() = 0;
  // The events this store appended to the feed (append_feed, and notices fed with their facts)
  // whose transactions committed since the last call, numbered, oldest first: a follower
  // publishes them without reading them back. Only the newest kOwnFeedKept are kept between
  // calls; the follower reads older ones back.
  static constexpr std::size_t kOwnFeedKept = 1024;
  virtual std::vector<std::pair<std::int64_t, std::string>> take_own_feed() = 0;
  // Forgets events appended before `before` (the feed is passing news).
  virtual void prune_feed(std::int64_t before) = 0;

  // Deletes the thread with its runs and events unless a run of it is pending or running
  // (false, nothing deleted).
  virtual bool delete_idle_thread(const std::string& thread_id) = 0;
  // Runs `body` while the thread's row is locked and no run of it is pending or running (false,
  // `body` not run, otherwise): no replica takes up or inserts a run of the thread meanwhile.
  virtual bool with_idle_thread(const std::string& thread_id, const std::function<void()>& body) = 0;
};

}  // namespace tollgate::server

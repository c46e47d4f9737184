// Retention: what the server deletes by itself (RetentionOptions) — expired threads, old
// stream events, old notification events and their ended webhook deliveries, the older
// checkpoints of idle threads — swept on a thread of its own, never on an I/O thread; and the
// thread pruning of POST /threads/prune and `tollgate prune`.
//
// Never deleted: the audit log and review records (other tables, never touched here), a
// pending webhook delivery and its event, a thread a run is pending or running on, a thread
// waiting for a review (by TTL), and any checkpoint, value or write a kept checkpoint needs
// (Saver::prune keeps them).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/run_manager.h"
#include "server/store.h"
#include "server/webhook_queue.h"
#include "tollgate/checkpoint.h"
#include "tollgate/server.h"

namespace tollgate::server {

struct RetentionCounts {
  std::size_t threads_deleted = 0;  // expired (TTL)
  std::size_t threads_pruned = 0;   // older checkpoints removed
  std::size_t events_deleted = 0;
  std::size_t notifications_deleted = 0;  // webhook events and deliveries (rows)
};

// Thread-safety: sweep() and prune() may be called from any thread; start/stop from one.
// mutex_ guards stopping_ and swept_until_.
class Retention {
 public:
  // `checkpoints` and `webhooks` may be null (nothing to prune there); every reference must
  // outlive this.
  Retention(ServerStore& store, RunManager& runs, Saver* checkpoints, RetentionOptions options,
            WebhookQueue* webhooks = nullptr);
  ~Retention();
  Retention(const Retention&) = delete;
  Retention& operator=(const Retention&) = delete;

  // Sweeps every options.interval on a thread of its own.
  void start();
  void stop();

  // One pass at time `now` (milliseconds since the epoch): deletes the expired threads, the
  // events older than options.events and the notifications older than options.webhooks, and,
  // with latest_checkpoint_only, prunes the checkpoints of the threads updated since the
  // previous pass.
  RetentionCounts sweep(std::int64_t now);

  // POST /threads/prune: kDelete deletes each thread, kKeepLatest keeps its latest checkpoint
  // of each namespace. Threads unknown or with a run pending or running are skipped. Returns
  // how many were pruned.
  std::size_t prune(const std::vector<std::string>& thread_ids, PruneStrategy strategy);

 private:
  void loop();

  ServerStore& store_;
  RunManager& runs_;
  Saver* checkpoints_;
  RetentionOptions options_;
  WebhookQueue* webhooks_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::int64_t swept_until_ = 0;  // threads updated before this had their checkpoints pruned
  std::thread thread_;
};

}  // namespace tollgate::server

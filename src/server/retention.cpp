#include "server/retention.h"

#include <utility>

#include "core/thread_name.h"
#include "server/log.h"
#include "tollgate/clock.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

// Expired threads deleted per pass; the rest wait for the next one (a pass stays short).
constexpr std::size_t kExpiredPerSweep = 1000;

}  // namespace

Retention::Retention(ServerStore& store, RunManager& runs, Saver* checkpoints,
                     RetentionOptions options, WebhookQueue* webhooks)
    : store_(store),
      runs_(runs),
      checkpoints_(checkpoints),
      options_(std::move(options)),
      webhooks_(webhooks) {}

Retention::~Retention() {
  stop();
}

void Retention::start() {
  // Always: any client may give a thread a TTL.
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    core::name_this_thread("tg-retention");
    loop();
  });
}

void Retention::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Retention::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    try {
      sweep(now_millis());
    } catch (const std::exception& e) {
      // A storage failure (a full disk): the next pass tries again.
      log_warning(std::string("retention: the sweep failed: ") + e.what());
    }
    lock.lock();
    wake_.wait_for(lock, options_.interval, [this] { return stopping_; });
  }
}

RetentionCounts Retention::sweep(std::int64_t now) {
  RetentionCounts counts;
  for (const std::string& thread_id : store_.expired_threads(now, kExpiredPerSweep)) {
    counts.threads_deleted += prune({thread_id}, PruneStrategy::kDelete);
  }
  if (options_.events) counts.events_deleted = store_.prune_events(now - options_.events->count());
  if (options_.webhooks && webhooks_ != nullptr) {
    counts.notifications_deleted = webhooks_->prune(now - options_.webhooks->count());
  }
  if (options_.latest_checkpoint_only && checkpoints_ != nullptr) {
    std::int64_t since = 0;
    {
      std::lock_guard lock(mutex_);
      since = swept_until_;
      swept_until_ = now;
    }
    for (const std::string& thread_id : store_.idle_threads_updated_since(since)) {
      counts.threads_pruned += runs_.prune_checkpoints(thread_id, *checkpoints_) ? 1 : 0;
    }
  }
  return counts;
}

std::size_t Retention::prune(const std::vector<std::string>& thread_ids, PruneStrategy strategy) {
  std::size_t pruned = 0;
  for (const std::string& thread_id : thread_ids) {
    // Busy as the store reads it: a run of this process or of another one on the same file
    // (tollgate prune beside a server); the run manager refuses this process's own atomically.
    auto thread = store_.get_thread_head(thread_id);
    if (!thread || thread->status == ThreadStatus::kBusy) continue;
    if (strategy == PruneStrategy::kKeepLatest) {
      if (checkpoints_ == nullptr || runs_.prune_checkpoints(thread_id, *checkpoints_)) ++pruned;
      continue;
    }
    try {
      runs_.delete_thread(thread_id, checkpoints_);
      ++pruned;
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kConflict) throw;  // a run is active: skipped
    }
  }
  return pruned;
}

}  // namespace tollgate::server

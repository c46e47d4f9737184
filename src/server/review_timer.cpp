#include "server/review_timer.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <tuple>

#include "core/thread_name.h"
#include "server/log.h"

namespace tollgate::server {
namespace {

// After a failed pass the next one waits this long, so that a failure does not spin.
constexpr std::int64_t kRetryMillis = 1000;
// The longest sleep: the wall clock may jump, and a deadline is read again at least this often.
constexpr std::int64_t kMaxSleepMillis = 60 * 1000;

}  // namespace

ReviewTimer::ReviewTimer(ReviewStore& reviews, const Clock& clock, Fire fire,
                         std::chrono::milliseconds poll_interval)
    : reviews_(reviews),
      clock_(clock),
      fire_(std::move(fire)),
      max_sleep_millis_(poll_interval.count() > 0
                            ? std::min<std::int64_t>(poll_interval.count(), kMaxSleepMillis)
                            : kMaxSleepMillis) {}

ReviewTimer::~ReviewTimer() {
  stop();
}

void ReviewTimer::start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this] {
    core::name_this_thread("tg-deadlines");
    loop();
  });
}

void ReviewTimer::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ReviewTimer::rearm() {
  {
    std::lock_guard lock(mutex_);
    rearmed_ = true;
  }
  wake_.notify_all();
}

std::size_t ReviewTimer::fire_due() {
  std::lock_guard pass(fire_mutex_);
  failed_ = false;
  std::vector<ReviewRecord> due;
  try {
    due = reviews_.due(now_millis(clock_));
  } catch (const std::exception& e) {
    log_error(std::string("review deadlines could not be read: ") + e.what());
    failed_ = true;
    return 0;
  }
  std::size_t fired = 0;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const ReviewRecord& record : due) {
    if (!seen.emplace(record.thread_id, record.checkpoint_id, record.interrupt_id).second) continue;
    try {
      fire_(record);
      ++fired;
    } catch (const std::exception& e) {
      log_error("the expired review of interrupt " + record.interrupt_id + " (thread " +
                record.thread_id + ") was not applied: " + e.what() + "; retrying");
      failed_ = true;
    }
  }
  return fired;
}

void ReviewTimer::loop() {
  for (;;) {
    fire_due();
    std::int64_t wait = max_sleep_millis_;
    try {
      if (auto next = reviews_.next_expiry()) wait = *next - now_millis(clock_);
    } catch (const std::exception& e) {
      log_error(std::string("review deadlines could not be read: ") + e.what());
      wait = kRetryMillis;
    }
    {
      // What is still due after a pass failed, or became due during it: a second from now.
      std::lock_guard pass(fire_mutex_);
      if (failed_ || wait <= 0) wait = std::max(wait, kRetryMillis);
    }
    wait = std::clamp<std::int64_t>(wait, 0, max_sleep_millis_);
    std::unique_lock lock(mutex_);
    if (wait > 0) {
      wake_.wait_for(lock, std::chrono::milliseconds(wait),
                     [this] { return stopping_ || rearmed_; });
    }
    if (stopping_) return;
    rearmed_ = false;
  }
}

}  // namespace tollgate::server

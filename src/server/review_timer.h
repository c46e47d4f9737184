// ReviewTimer: fires review deadlines. The deadlines live in the review records (durable, so
// they fire after a restart); the timer keeps only when to wake next. One thread sleeps until
// the earliest deadline of a pending record (by the Clock it was given), hands each due
// interrupt to `fire` once per pass, and sleeps again; rearm() wakes it when records were
// added. A deadline that passed while the server was down is due at once when the timer starts.
//
// Exactly once comes from the store, not from here: `fire` claims the records with a
// conditional update (ReviewStore::expire) that fails when a decision or another timer won.
// A `fire` that throws is logged and tried again a second later (while still due).
//
// Records added by another process sharing the database (a server replica) call no rearm()
// here: given a poll interval, the thread reads the earliest deadline again at least that
// often, so their deadlines fire that late at most, by whichever timer gets there first.
//
// Thread-safety: rearm() and fire_due() may be called from any thread; start() and stop() from
// one owner thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>

#include "server/review_store.h"
#include "tollgate/clock.h"

namespace tollgate::server {

class ReviewTimer {
 public:
  // `fire` gets the earliest due record of each due interrupt; it answers the interrupt (all
  // of its records), or finds it answered or gone, or throws (tried again later): when it
  // returns, the records are no longer pending. `reviews` and `clock` must outlive the timer.
  using Fire = std::function<void(const ReviewRecord& due)>;
  // `poll_interval`: the longest the thread sleeps (zero: it wakes for the earliest deadline
  // it read, on rearm(), and once a minute for a clock that jumped).
  ReviewTimer(ReviewStore& reviews, const Clock& clock, Fire fire,
              std::chrono::milliseconds poll_interval = std::chrono::milliseconds::zero());
  ~ReviewTimer();
  ReviewTimer(const ReviewTimer&) = delete;
  ReviewTimer& operator=(const ReviewTimer&) = delete;

  void start();
  void stop();
  // Wakes the thread to read the next deadline again (records were added, or the clock moved).
  void rearm();
  // Fires what is due now, on the calling thread; returns how many interrupts were handed to
  // `fire` without it throwing. What the thread runs, and what tests call after moving a
  // ManualClock.
  std::size_t fire_due();

 private:
  void loop();

  ReviewStore& reviews_;
  const Clock& clock_;
  Fire fire_;
  const std::int64_t max_sleep_millis_;
  std::mutex fire_mutex_;  // one pass at a time
  std::mutex mutex_;       // guards stopping_, rearmed_
  std::condition_variable wake_;
  bool stopping_ = false;
  bool rearmed_ = false;
  bool failed_ = false;  // guarded by fire_mutex_: the last pass had a failure
  std::thread thread_;
};

}  // namespace tollgate::server

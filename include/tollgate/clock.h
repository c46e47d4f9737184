// Where Tollgate takes the time from: checkpoint timestamps, time-ordered ids, run and thread
// times and review deadlines. Code that reads the time takes a `const Clock&` (the system clock
// by default), so a test passes a ManualClock and checks expiry and ordering at exact instants,
// without sleeping.
//
// Where a clock reaches: new_checkpoint_id() and utc_timestamp() (checkpoint.h) take one; a
// compiled graph passes its CompileOptions::clock to them for the checkpoints and debug events
// of its runs; the server hands its ServerOptions::clock to the run manager (run ids and times,
// when delayed runs are due, threads' outcomes, review records), the review timer, review claims
// and the API's thread and assistant times. Still on the system clock: webhook retries,
// retention sweeps, the audit log, notification events and stream-event stamps.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace tollgate {

// A source of time. Thread-safety: implementations may be read from any thread at once.
class Clock {
 public:
  virtual ~Clock() = default;

  // Wall-clock time, for timestamps and time-ordered ids. It may stand still or jump back
  // (NTP, a test): code that needs order keeps it itself (the ids do).
  virtual std::chrono::system_clock::time_point now() const = 0;
  // Monotonic time, for intervals and deadlines: never goes back.
  virtual std::chrono::steady_clock::time_point steady_now() const = 0;
};

// The process's clock (std::chrono::system_clock and steady_clock). Lives as long as the
// process; thread-safe.
const Clock& system_clock();

// A clock that moves only when told to, for tests. Thread-safe: one thread may set or advance
// it while others read it.
class ManualClock final : public Clock {
 public:
  // Starts at `wall` (now()); steady_now() starts at the steady clock's epoch.
  explicit ManualClock(std::chrono::system_clock::time_point wall);

  std::chrono::system_clock::time_point now() const override;
  std::chrono::steady_clock::time_point steady_now() const override;

  // Moves the wall time to `wall`, forward or back. The steady time does not move.
  void set(std::chrono::system_clock::time_point wall);
  // Moves both times forward by `elapsed` (asserts it is not negative).
  void advance(std::chrono::nanoseconds elapsed);

 private:
  std::atomic<std::int64_t> wall_nanos_;    // since the Unix epoch
  std::atomic<std::int64_t> steady_nanos_;  // since the steady clock's epoch
};

// Milliseconds since the Unix epoch by `clock` (what server records store).
std::int64_t now_millis(const Clock& clock = system_clock());

}  // namespace tollgate

#include "tollgate/clock.h"

#include <cassert>

namespace tollgate {
namespace {

class SystemClock final : public Clock {
 public:
  std::chrono::system_clock::time_point now() const override {
    return std::chrono::system_clock::now();
  }
  std::chrono::steady_clock::time_point steady_now() const override {
    return std::chrono::steady_clock::now();
  }
};

std::int64_t nanos_of(std::chrono::system_clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

template <typename ClockType>
typename ClockType::time_point time_point_at(std::int64_t nanos) {
  return typename ClockType::time_point(
      std::chrono::duration_cast<typename ClockType::duration>(std::chrono::nanoseconds(nanos)));
}

}  // namespace

const Clock& system_clock() {
  static const SystemClock clock;
  return clock;
}

ManualClock::ManualClock(std::chrono::system_clock::time_point wall)
    : wall_nanos_(nanos_of(wall)), steady_nanos_(0) {}

std::chrono::system_clock::time_point ManualClock::now() const {
  return time_point_at<std::chrono::system_clock>(wall_nanos_.load(std::memory_order_acquire));
}

std::chrono::steady_clock::time_point ManualClock::steady_now() const {
  return time_point_at<std::chrono::steady_clock>(steady_nanos_.load(std::memory_order_acquire));
}

void ManualClock::set(std::chrono::system_clock::time_point wall) {
  wall_nanos_.store(nanos_of(wall), std::memory_order_release);
}

void ManualClock::advance(std::chrono::nanoseconds elapsed) {
  assert(elapsed.count() >= 0 &&
         "a steady clock never goes back: use set() to move the wall time back");
  steady_nanos_.fetch_add(elapsed.count(), std::memory_order_acq_rel);
  wall_nanos_.fetch_add(elapsed.count(), std::memory_order_acq_rel);
}

std::int64_t now_millis(const Clock& clock) {
  using namespace std::chrono;
  return duration_cast<milliseconds>(clock.now().time_since_epoch()).count();
}

}  // namespace tollgate

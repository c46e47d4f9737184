// The clock seam: the system clock, and the manual clock tests set and advance.
#include "tollgate/clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace tollgate {
namespace {

using namespace std::chrono_literals;

const auto kStart = std::chrono::system_clock::time_point(1796007219194ms);  // 2026-11-30

TEST(SystemClock, ReadsTheSystemTime) {
  const auto before = std::chrono::system_clock::now();
  const auto now = system_clock().now();
  const auto after = std::chrono::system_clock::now();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
}

TEST(SystemClock, SteadyTimeNeverGoesBack) {
  const auto first = system_clock().steady_now();
  EXPECT_LE(first, system_clock().steady_now());
}

TEST(ManualClock, StartsAtTheGivenTime) {
  const ManualClock clock(kStart);
  EXPECT_EQ(clock.now(), kStart);
}

TEST(ManualClock, StandsStillUntilMoved) {
  const ManualClock clock(kStart);
  const auto steady = clock.steady_now();
  std::this_thread::yield();
  EXPECT_EQ(clock.now(), kStart);
  EXPECT_EQ(clock.steady_now(), steady);
}

TEST(ManualClock, AdvanceMovesBothTimes) {
  ManualClock clock(kStart);
  const auto steady = clock.steady_now();
  clock.advance(90s);
  EXPECT_EQ(clock.now(), kStart + 90s);
  EXPECT_EQ(clock.steady_now(), steady + 90s);
}

TEST(ManualClock, SetMovesTheWallTimeBackButNotTheSteadyTime) {
  ManualClock clock(kStart);
  clock.advance(5s);
  const auto steady = clock.steady_now();
  clock.set(kStart - 1h);
  EXPECT_EQ(clock.now(), kStart - 1h);
  EXPECT_EQ(clock.steady_now(), steady);
}

TEST(ManualClock, ReadersOnOtherThreadsSeeItOnlyMoveForward) {
  ManualClock clock(kStart);
  std::vector<std::thread> readers;
  std::vector<int> ordered(3, 1);
  for (std::size_t r = 0; r < ordered.size(); ++r) {
    readers.emplace_back([&clock, &ordered, r] {
      auto last = clock.steady_now();
      for (int i = 0; i < 20000; ++i) {
        const auto now = clock.steady_now();
        if (now < last) ordered[r] = 0;
        last = now;
      }
    });
  }
  for (int i = 0; i < 20000; ++i) clock.advance(1ms);
  for (auto& reader : readers) reader.join();
  for (int in_order : ordered) EXPECT_TRUE(in_order);
  EXPECT_EQ(clock.now(), kStart + 20s);
}

TEST(NowMillis, IsTheClocksTimeInMillisecondsSinceTheEpoch) {
  ManualClock clock(kStart);
  EXPECT_EQ(now_millis(clock), 1796007219194);
  clock.advance(1500us);
  EXPECT_EQ(now_millis(clock), 1796007219195);
}

}  // namespace
}  // namespace tollgate

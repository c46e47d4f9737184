#include "server/keyed_locks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

namespace tollgate::server {
namespace {

// Every key of a thousand is locked while one is held: no two keys share a lock (a striped
// set of 64 mutexes would hold some back).
TEST(KeyedLocksTest, AHeldKeyHoldsBackNoOtherKey) {
  KeyedLocks locks;
  const KeyedLocks::Guard held = locks.lock("held");
  auto others = std::async(std::launch::async, [&] {
    for (int i = 0; i < 1000; ++i) {
      const KeyedLocks::Guard other = locks.lock("thread-" + std::to_string(i));
    }
    return true;
  });
  ASSERT_EQ(others.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "another key waited for the held one";
  EXPECT_TRUE(others.get());
}

TEST(KeyedLocksTest, OneKeyIsHeldByOneHolderAtATime) {
  KeyedLocks locks;
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  auto work = [&] {
    for (int i = 0; i < 200; ++i) {
      const KeyedLocks::Guard guard = locks.lock("thread");
      const int now = ++inside;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::yield();
      --inside;
    }
  };
  std::thread a(work), b(work), c(work);
  a.join();
  b.join();
  c.join();
  EXPECT_EQ(most.load(), 1);
}

TEST(KeyedLocksTest, AKeyIsLetGoWhenItsLastHolderUnlocks) {
  KeyedLocks locks;
  {
    const KeyedLocks::Guard first = locks.lock("a");
    const KeyedLocks::Guard second = locks.lock("b");
    EXPECT_EQ(locks.size(), 2u);
  }
  EXPECT_EQ(locks.size(), 0u);
  KeyedLocks::Guard moved = locks.lock("a");
  KeyedLocks::Guard taken = std::move(moved);
  EXPECT_EQ(locks.size(), 1u);
}

}  // namespace
}  // namespace tollgate::server

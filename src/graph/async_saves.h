// Saver calls of one run made in the background (Durability::kAsync), in order.
//
// Jobs run one at a time, in submission order, on a pool thread or on the thread that waits
// for them (so waiting never depends on a free pool thread). The first failure is kept and
// rethrown by wait().
//
// Thread-safety: submit() and wait() may be called from any thread; one mutex guards the
// shared queue, which a late pool job keeps alive.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>

#include "graph/thread_pool.h"

namespace tollgate::graph_internal {

class AsyncSaves {
 public:
  explicit AsyncSaves(ThreadPool& pool) : pool_(pool), shared_(std::make_shared<Shared>()) {}
  ~AsyncSaves() {
    try {
      wait();
    } catch (...) {  // NOLINT: a failed background save was reported by wait() already or is moot
    }
  }
  AsyncSaves(const AsyncSaves&) = delete;
  AsyncSaves& operator=(const AsyncSaves&) = delete;

  void submit(std::function<void()> job) {
    {
      std::lock_guard lock(shared_->mutex);
      shared_->queue.push_back(std::move(job));
      // A drain that is queued or running takes this job too: wake a pool thread only when
      // there is none (one wake-up per burst of saves, not one per save).
      if (shared_->scheduled || shared_->running) return;
      shared_->scheduled = true;
    }
    pool_.submit([shared = shared_] {
      {
        std::lock_guard lock(shared->mutex);
        shared->scheduled = false;
      }
      drain(*shared, false);
    });
  }

  // Runs or waits for every submitted job; rethrows the first failure.
  void wait() {
    drain(*shared_, true);
    std::lock_guard lock(shared_->mutex);
    if (shared_->error) {
      std::exception_ptr error = shared_->error;
      shared_->error = nullptr;
      std::rethrow_exception(error);
    }
  }

 private:
  struct Shared {
    std::mutex mutex;  // guards queue, running, scheduled, error
    std::condition_variable idle;
    std::deque<std::function<void()>> queue;
    bool running = false;    // a job is executing (on a pool thread or in wait())
    bool scheduled = false;  // a pool drain was submitted and has not started yet
    std::exception_ptr error;
  };

  static void drain(Shared& shared, bool until_idle) {
    std::unique_lock lock(shared.mutex);
    while (true) {
      if (shared.running) {
        if (!until_idle) return;
        shared.idle.wait(lock);
        continue;
      }
      if (shared.queue.empty()) return;
      std::function<void()> job = std::move(shared.queue.front());
      shared.queue.pop_front();
      shared.running = true;
      lock.unlock();
      try {
        job();
      } catch (...) {
        std::lock_guard error_lock(shared.mutex);
        if (!shared.error) shared.error = std::current_exception();
      }
      lock.lock();
      shared.running = false;
      shared.idle.notify_all();
    }
  }

  ThreadPool& pool_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace tollgate::graph_internal

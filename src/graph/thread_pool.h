// A small pool of worker threads for running the tasks of a superstep in parallel.
//
// Threads start on the first submit() (a graph whose steps all have one task never starts
// any). Jobs must not block waiting for other queued jobs; the superstep runner makes sure
// of that by letting the submitting thread work through the step's tasks itself.
//
// Thread-safety: submit() may be called from any thread; one mutex guards the queue.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tollgate::graph_internal {

class ThreadPool {
 public:
  explicit ThreadPool(std::size_t threads = 0);  // 0: max(4, hardware threads)
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void submit(std::function<void()> job);

 private:
  void work();

  std::size_t size_;
  std::mutex mutex_;  // guards queue_, threads_, stopping_
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  bool stopping_ = false;
};

}  // namespace tollgate::graph_internal

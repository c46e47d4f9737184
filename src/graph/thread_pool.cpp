#include "graph/thread_pool.h"

#include <algorithm>

#include "core/thread_name.h"

namespace tollgate::graph_internal {

ThreadPool::ThreadPool(std::size_t threads)
    : size_(threads != 0 ? threads
                         : std::max<std::size_t>(4, std::thread::hardware_concurrency())) {}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void ThreadPool::submit(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(job));
    if (threads_.size() < size_ && threads_.size() < queue_.size() + 1) {
      threads_.emplace_back([this] {
        core::name_this_thread("tg-tasks");
        work();
      });
    }
  }
  ready_.notify_one();
}

void ThreadPool::work() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

}  // namespace tollgate::graph_internal

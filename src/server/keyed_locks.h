// KeyedLocks: a mutex per key (a thread id), made when a key is first locked and let go when its
// last user unlocks it, so that holding one key never holds back another (as a fixed set of
// mutexes picked by the key's hash would, whenever two keys share one).
//
// Thread-safety: every method may be called from any thread. Not reentrant: a thread that locks
// a key it holds deadlocks, as with std::mutex.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace tollgate::server {

class KeyedLocks {
  struct Entry {
    std::mutex mutex;
    std::size_t users = 0;  // holding or waiting; guarded by KeyedLocks::mutex_
  };

 public:
  // Holds one key's lock until destroyed.
  class Guard {
   public:
    Guard(Guard&& other) noexcept
        : locks_(std::exchange(other.locks_, nullptr)),
          key_(std::move(other.key_)),
          entry_(other.entry_) {}
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    Guard& operator=(Guard&&) = delete;
    ~Guard() {
      if (locks_ != nullptr) locks_->release(key_, *entry_);
    }

   private:
    friend class KeyedLocks;
    Guard(KeyedLocks* locks, std::string key, Entry* entry)
        : locks_(locks), key_(std::move(key)), entry_(entry) {}
    KeyedLocks* locks_;
    std::string key_;
    Entry* entry_;
  };

  // Waits for `key`'s lock.
  [[nodiscard]] Guard lock(const std::string& key) {
    Entry* entry = nullptr;
    {
      std::lock_guard lock(mutex_);
      std::unique_ptr<Entry>& slot = entries_[key];
      if (!slot) slot = std::make_unique<Entry>();
      ++slot->users;
      entry = slot.get();
    }
    entry->mutex.lock();
    return Guard(this, key, entry);
  }

  // The keys locked or waited for now.
  std::size_t size() {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

 private:
  void release(const std::string& key, Entry& entry) {
    entry.mutex.unlock();
    std::lock_guard lock(mutex_);
    if (--entry.users == 0) entries_.erase(key);
  }

  std::mutex mutex_;  // guards entries_ and each entry's users
  std::unordered_map<std::string, std::unique_ptr<Entry>> entries_;
};

}  // namespace tollgate::server

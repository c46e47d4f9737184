#include "graph/values_cache.h"

#include <tuple>

namespace tollgate::graph_internal {

bool ValuesCache::Key::operator<(const Key& other) const {
  return std::tie(saver, thread_id, checkpoint_ns) <
         std::tie(other.saver, other.thread_id, other.checkpoint_ns);
}

std::optional<CachedValues> ValuesCache::take(const Saver* saver, const std::string& thread_id,
                                              const std::string& checkpoint_ns) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(Key{saver, thread_id, checkpoint_ns});
  if (it == entries_.end()) return std::nullopt;
  CachedValues values = std::move(it->second.values);
  ages_.erase(it->second.age);
  entries_.erase(it);
  return values;
}

std::optional<CachedValues> ValuesCache::peek(const Saver* saver, const std::string& thread_id,
                                              const std::string& checkpoint_ns) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(Key{saver, thread_id, checkpoint_ns});
  if (it == entries_.end()) return std::nullopt;
  const CachedValues& entry = it->second.values;
  CachedValues values;
  values.checkpoint_id = entry.checkpoint_id;
  values.values = entry.values;
  for (const auto& [name, channel] : entry.channels) {
    if (JsonPtr value = channel->checkpoint()) values.values.emplace(name, std::move(value));
  }
  return values;
}

void ValuesCache::put(const Saver* saver, const std::string& thread_id,
                      const std::string& checkpoint_ns, CachedValues values) {
  if (capacity_ == 0) return;
  std::lock_guard lock(mutex_);
  Key key{saver, thread_id, checkpoint_ns};
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    ages_.erase(it->second.age);
    entries_.erase(it);
  }
  while (entries_.size() >= capacity_) {
    entries_.erase(ages_.front());
    ages_.pop_front();
  }
  auto age = ages_.insert(ages_.end(), key);
  entries_.emplace(std::move(key), Entry{std::move(values), age});
}

void ValuesCache::forget(const Saver* saver, const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->first.saver == saver && it->first.thread_id == thread_id) {
      ages_.erase(it->second.age);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace tollgate::graph_internal

#include "sql/sqlite_write_gate.h"

#include <map>

namespace tollgate::sql {

std::shared_ptr<SqliteWriteGate> SqliteWriteGate::of_file(const std::string& path) {
  if (path.empty()) return nullptr;
  static std::mutex registry_mutex;  // guards registry
  static std::map<std::string, std::weak_ptr<SqliteWriteGate>> registry;
  std::lock_guard lock(registry_mutex);
  std::weak_ptr<SqliteWriteGate>& slot = registry[path];
  std::shared_ptr<SqliteWriteGate> gate = slot.lock();
  if (!gate) {
    gate = std::make_shared<SqliteWriteGate>();
    slot = gate;
  }
  // Files whose connections all closed leave expired entries; drop them as new files come.
  for (auto it = registry.begin(); it != registry.end();) {
    it = it->second.expired() ? registry.erase(it) : std::next(it);
  }
  return gate;
}

bool SqliteWriteGate::enter(std::chrono::milliseconds patience) {
  std::unique_lock lock(mutex_);
  const std::thread::id self = std::this_thread::get_id();
  if (taken_ && holder_ == self) return false;
  if (!turn_free_.wait_for(lock, patience, [this] { return !taken_; })) return false;
  taken_ = true;
  holder_ = self;
  return true;
}

void SqliteWriteGate::leave() {
  {
    std::lock_guard lock(mutex_);
    taken_ = false;
    holder_ = std::thread::id();
  }
  turn_free_.notify_one();
}

}  // namespace tollgate::sql

#include "sql/connection_lock.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <system_error>

namespace tollgate::sql {

ConnectionLock::ConnectionLock() : state_(std::make_shared<State>()) {}

void ConnectionLock::lock() {
  State& state = *state_;
  const std::thread::id self = std::this_thread::get_id();
  if (state.holder.load(std::memory_order_relaxed) == self) {
    std::fputs("tollgate: a thread took a database connection's lock it already holds\n",
               stderr);
    std::abort();
  }
  state.mutex.lock();
  taken();
}

bool ConnectionLock::try_lock() {
  State& state = *state_;
  if (state.holder.load(std::memory_order_relaxed) == std::this_thread::get_id()) return false;
  if (!state.mutex.try_lock()) return false;
  taken();
  return true;
}

void ConnectionLock::taken() {
  State& state = *state_;
  state.holder.store(std::this_thread::get_id(), std::memory_order_relaxed);
  if (state.sqlite == nullptr || state.current == level_) return;
  try {
    state.sqlite->set_synchronous(level_);
    state.current = level_;
  } catch (...) {
    unlock();
    throw;
  }
}

void ConnectionLock::unlock() {
  state_->holder.store(std::thread::id(), std::memory_order_relaxed);
  state_->mutex.unlock();
}

SharedConnection SharedConnection::alone(std::unique_ptr<Connection> connection) {
  return {std::shared_ptr<Connection>(std::move(connection)), ConnectionLock()};
}

SharedConnection shared_sqlite_file(const std::string& path, SqliteSync level,
                                    std::chrono::milliseconds busy_timeout) {
  if (level == SqliteSync::kDefault) level = SqliteSync::kFull;
  if (path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0) {
    return SharedConnection::alone(std::make_unique<SqliteConnection>(
        path, SqliteFileOptions{busy_timeout, /*wal=*/true, level}));
  }
  const SqliteFileOptions options{busy_timeout, /*wal=*/true, SqliteSync::kNormal};
  std::error_code error;
  std::string key = std::filesystem::weakly_canonical(path, error).string();
  if (error) key = path;

  static std::mutex registry_mutex;  // guards registry
  static std::map<std::string, std::weak_ptr<ConnectionLock::State>> registry;
  std::lock_guard registry_lock(registry_mutex);
  for (auto it = registry.begin(); it != registry.end();) {
    it = it->second.expired() ? registry.erase(it) : std::next(it);
  }
  std::weak_ptr<ConnectionLock::State>& slot = registry[key];
  std::shared_ptr<ConnectionLock::State> state = slot.lock();
  if (!state) {
    state = std::make_shared<ConnectionLock::State>();
    state->sqlite = std::make_unique<SqliteConnection>(path, options);
    state->current = SqliteSync::kNormal;
    slot = state;
  } else if (busy_timeout > state->sqlite->busy_timeout()) {
    std::lock_guard lock(state->mutex);
    state->sqlite->set_busy_timeout(busy_timeout);
  }
  // The connection shares the state's ownership: it lives as long as any part holds either.
  std::shared_ptr<Connection> connection(state, state->sqlite.get());
  return {std::move(connection), ConnectionLock(std::move(state), level)};
}

}  // namespace tollgate::sql

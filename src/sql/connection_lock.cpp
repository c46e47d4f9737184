#include "sql/connection_lock.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>

#include "core/thread_name.h"
#include "sql/file_faults.h"

namespace tollgate::sql {
namespace {

// SQLite's own default: a WAL of this many frames is checkpointed (here by the checkpointer
// thread, which the commit that grew it wakes).
constexpr int kWalAutoCheckpointFrames = 1000;
// A WAL this long is checkpointed by the commit that grew it, under the lock, as SQLite does:
// a checkpoint that runs beside the writers copies the frames written before it began, but
// the WAL starts again from its beginning only once every frame is in the database, which
// writes that never pause may not allow. This bounds the WAL (and the cost of every read's
// lookups in it) whatever the load.
constexpr int kWalInlineCheckpointFrames = kWalAutoCheckpointFrames * 3 / 2;
// Frames the WAL grows by between two wakes of the checkpointer. A checkpoint first sorts
// every frame of the WAL, however few it then copies; one per commit past the threshold cost
// more than the copying.
constexpr int kWalCheckpointStep = kWalAutoCheckpointFrames / 4;

[[noreturn]] void sync_failed(const std::string& path, const char* what) {
  std::fprintf(stderr,
               "tollgate: the write-ahead log %s could not be synced to disk (%s); stopping "
               "so that no write is acknowledged that the disk may not hold (a restart "
               "recovers what it holds)\n",
               path.c_str(), what);
  std::abort();
}

}  // namespace

ConnectionLock::State::~State() {
  if (checkpointer.joinable()) {
    {
      std::lock_guard lock(checkpoint_mutex);
      stopping = true;
    }
    checkpoint_wanted_cv.notify_one();
    checkpointer.join();
  }
  checkpoint_connection.reset();  // before the last connection, which removes the WAL
  sqlite.reset();                 // first of the rest: its hook counts into this state
  if (wal_fd >= 0) ::close(wal_fd);
}

ConnectionLock::ConnectionLock() : state_(std::make_shared<State>()) {}

ConnectionLock ConnectionLock::at_level(SqliteSync level) const {
  return ConnectionLock(state_, level == SqliteSync::kDefault ? SqliteSync::kFull : level);
}

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
  if (state.group_sync) {
    commits_when_taken_ = state.commits.load(std::memory_order_relaxed);
    return;
  }
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
  State& state = *state_;
  // Read while the mutex is held: the commits this hold made are numbered up to `last`.
  const std::uint64_t last = state.commits.load(std::memory_order_relaxed);
  const bool sync = state.group_sync && level_ == SqliteSync::kFull && last != commits_when_taken_;
  state.holder.store(std::thread::id(), std::memory_order_relaxed);
  state.mutex.unlock();
  if (sync) sync_through(state, last);
}

void ConnectionLock::sync_through(State& state, std::uint64_t commit) {
  std::lock_guard lock(state.sync_mutex);
  if (state.synced >= commit) return;  // a sync that began after that commit has ended
  // Every commit counted so far has written its frames: one fdatasync covers them all.
  const std::uint64_t covered = state.commits.load(std::memory_order_acquire);
  if (FileFaults* faults = FileFaults::armed();
      faults != nullptr && faults->on_operation(FileOperation::kSync, state.wal_path.c_str())) {
    sync_failed(state.wal_path, "an injected fault");
  }
  if (state.wal_fd < 0) {
    state.wal_fd = ::open(state.wal_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (state.wal_fd < 0) sync_failed(state.wal_path, std::strerror(errno));
  }
  if (::fdatasync(state.wal_fd) != 0) sync_failed(state.wal_path, std::strerror(errno));
  state.synced = covered;
}

// Also has a long WAL checkpointed, as SQLite's default hook (which this one replaces) does.
int ConnectionLock::count_commit(void* state_pointer, sqlite3* db, const char* schema, int frames) {
  State& state = *static_cast<ConnectionLock::State*>(state_pointer);
  state.commits.fetch_add(1, std::memory_order_release);
  if (frames >= kWalInlineCheckpointFrames || !state.checkpointer.joinable()) {
    if (frames >= kWalAutoCheckpointFrames) {
      // After the checkpointer's checkpoint, if one is under way (a checkpoint finding another
      // one running gives up at once); with no other writer of this process meanwhile, this
      // one copies every frame, and the next write starts the WAL again from its beginning.
      std::lock_guard running(state.checkpoint_running);
      sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    }
  } else if (frames >= kWalAutoCheckpointFrames &&
             (frames < state.frames_at_wake ||  // the WAL started again since
              frames >= state.frames_at_wake + kWalCheckpointStep)) {
    state.frames_at_wake = frames;
    bool wake = false;
    {
      std::lock_guard lock(state.checkpoint_mutex);
      wake = !state.checkpoint_wanted;
      state.checkpoint_wanted = true;
    }
    if (wake) state.checkpoint_wanted_cv.notify_one();
  }
  return SQLITE_OK;
}

void ConnectionLock::start_checkpointer(State& state, const std::string& path) {
  try {
    // NORMAL, as the shared connection: a checkpoint syncs the WAL before it copies frames and
    // the database after.
    state.checkpoint_connection = std::make_unique<SqliteConnection>(
        path, SqliteFileOptions{std::chrono::milliseconds(0), /*wal=*/true, SqliteSync::kNormal});
    state.checkpointer = std::thread([&state] {
      core::name_this_thread("tg-wal");
      run_checkpointer(state);
    });
  } catch (...) {
    // Without it, the commits checkpoint the WAL themselves, as before.
    state.checkpoint_connection.reset();
  }
}

void ConnectionLock::run_checkpointer(State& state) {
  sqlite3* db = state.checkpoint_connection->handle();
  std::unique_lock lock(state.checkpoint_mutex);
  for (;;) {
    state.checkpoint_wanted_cv.wait(lock,
                                    [&state] { return state.checkpoint_wanted || state.stopping; });
    if (state.stopping) return;
    state.checkpoint_wanted = false;
    lock.unlock();
    // PASSIVE: copies what it can without waiting for readers or writers. A failure (the disk,
    // a fault a test injected) leaves the frames in the WAL, where readers find them, for the
    // next checkpoint.
    {
      std::lock_guard running(state.checkpoint_running);
      sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    }
    lock.lock();
  }
}

void ConnectionLock::enable_group_sync(State& state) {
  sqlite3* db = state.sqlite->handle();
  auto mode = state.sqlite->prepare("PRAGMA journal_mode");
  if (!mode->step() || mode->text(0) != "wal") return;
  const char* file = sqlite3_db_filename(db, "main");
  if (file == nullptr || *file == '\0') return;
  state.wal_path = sqlite3_filename_wal(file);
  sqlite3_wal_hook(db, count_commit, &state);
  state.group_sync = true;
  start_checkpointer(state, file);
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
    ConnectionLock::enable_group_sync(*state);
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

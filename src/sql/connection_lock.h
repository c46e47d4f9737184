// ConnectionLock: what the users of a database connection take around every use of it.
//
// Each part of the server's storage (the server store, the checkpointer, the audit log, the
// review store, the webhook queue) takes its connection's lock as it would a std::mutex (the
// lock is Lockable: std::lock_guard, std::unique_lock). A part with a connection of its own
// (PostgreSQL, where each part pipelines on its own session; a SQLite database one part
// opened alone) has a lock of its own.
//
// The parts of one process on one SQLite file share one connection (shared_sqlite_file) and
// its lock: one page cache, which a commit of another connection of this process would
// otherwise drop (SQLite drops a connection's whole cache whenever another connection has
// committed), and one writer, so this process's writers never wait on each other's locks in
// SQLite's busy handler.
//
// Each part keeps its durability. The shared connection commits with PRAGMA synchronous =
// NORMAL (the WAL is written at every commit, synced at checkpoints): as durable as the
// checkpoints and the server store ask. A part of level FULL (the audit log, the review records,
// the webhook queue) has the WAL synced before its lock is given back whenever a transaction
// committed while it held it, as FULL would sync it in the commit, but outside the lock: the
// next part's transaction runs while the disk syncs. A sync that began after a part's commit
// covers it, and the part does not sync again. A failed sync ends the process
// (std::abort with a message), as PostgreSQL does: the part's write is not acknowledged, and
// after a failed fsync the kernel may have dropped the pages it could not write, so no later
// sync could be trusted; a restart recovers from what is on the disk. (A file SQLite could not
// put in WAL mode keeps the former way: the lock sets the connection's synchronous to the
// taking part's level.)
//
// A thread that takes a lock it already holds (a part calling another part of the same
// connection while holding its lock) would deadlock; the lock aborts with a message instead.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "sql/connection.h"
#include "sql/sqlite_connection.h"

struct sqlite3;

namespace tollgate::sql {

struct SharedConnection;
SharedConnection shared_sqlite_file(const std::string& path, SqliteSync level,
                                    std::chrono::milliseconds busy_timeout);

class ConnectionLock {
 public:
  // A lock of its own.
  ConnectionLock();

  void lock();
  // False when another thread holds the lock, or this one does.
  bool try_lock();
  void unlock();

  // The same lock, its holder's commits as durable as `level` (kDefault means kFull): for a
  // part some of whose writes need less than its own level. On a lock of its own `level`
  // changes nothing (the connection's durability is its own).
  ConnectionLock at_level(SqliteSync level) const;

 private:
  // Notes this thread as the holder and applies the part's durability; the mutex is held.
  void taken();
  struct State;
  // Syncs the write-ahead log through commit number `commit`, unless a sync that began after
  // that commit already has.
  static void sync_through(State& state, std::uint64_t commit);
  // For a file in WAL mode: counts its commits (SQLite's WAL hook) for the FULL parts' syncs.
  static void enable_group_sync(State& state);
  static int count_commit(void* state, sqlite3* db, const char* schema, int frames);
  // The WAL's checkpoints, on a thread and a connection of their own (see State::checkpointer).
  static void start_checkpointer(State& state, const std::string& path);
  static void run_checkpointer(State& state);
  friend struct SharedConnection;
  friend SharedConnection shared_sqlite_file(const std::string& path, SqliteSync level,
                                             std::chrono::milliseconds busy_timeout);
  struct State {
    ~State();
    std::mutex mutex;
    std::atomic<std::thread::id> holder{};
    std::unique_ptr<SqliteConnection> sqlite;  // set for a shared SQLite file; owned here
    SqliteSync current = SqliteSync::kDefault;  // the connection's level; guarded by mutex
    // In WAL mode: FULL parts sync the WAL on release instead of setting synchronous.
    bool group_sync = false;
    std::atomic<std::uint64_t> commits{0};  // write transactions committed (SQLite's WAL hook)
    std::mutex sync_mutex;                  // guards the members below
    std::uint64_t synced = 0;               // commits known to be on the disk
    std::string wal_path;
    int wal_fd = -1;  // opened at the first sync
    // Checkpoints of a WAL that grew long, made by a thread on a connection of its own, so that
    // no writer of the file waits while the checkpoint copies pages and syncs the database
    // (SQLite's default checkpoints in the commit that grew the WAL, under this lock).
    std::unique_ptr<SqliteConnection> checkpoint_connection;
    std::thread checkpointer;
    std::mutex checkpoint_running;  // held while a checkpoint runs (either thread)
    std::mutex checkpoint_mutex;    // guards the two flags below
    std::condition_variable checkpoint_wanted_cv;
    bool checkpoint_wanted = false;
    bool stopping = false;
    // The WAL's frames when the checkpointer was last woken; guarded by mutex (the WAL hook
    // runs in a commit, under the lock).
    int frames_at_wake = 0;
  };
  ConnectionLock(std::shared_ptr<State> state, SqliteSync level)
      : state_(std::move(state)), level_(level) {}

  std::shared_ptr<State> state_;
  SqliteSync level_ = SqliteSync::kDefault;  // applied on lock when the connection is shared
  std::uint64_t commits_when_taken_ = 0;       // guarded by the state's mutex
};

// A connection and the lock its users take around every use of it.
struct SharedConnection {
  std::shared_ptr<Connection> connection;
  ConnectionLock lock;

  // A connection of its own, with a lock of its own.
  static SharedConnection alone(std::unique_ptr<Connection> connection);
};

// This process's connection to the SQLite file at `path`, shared by every part that opens the
// file through here while one of them holds it; opened (WAL, NORMAL, `busy_timeout`) by the
// first. Its lock applies `level` (kNormal or kFull; kDefault means kFull). Throws
// Error(kUnavailable) when the file cannot be opened. For a path that names no file of its
// own (":memory:", a "file:" URI) each call opens a connection of its own.
SharedConnection shared_sqlite_file(const std::string& path, SqliteSync level,
                                    std::chrono::milliseconds busy_timeout);

}  // namespace tollgate::sql

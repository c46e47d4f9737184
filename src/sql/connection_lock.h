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
// SQLite's busy handler. Taking the shared lock also sets the connection's durability to the
// taking part's (PRAGMA synchronous: NORMAL for checkpoints and the server store, FULL for the
// audit log, the review records and the webhook queue), so a part's commits are as durable as
// they were on a connection of its own.
//
// A thread that takes a lock it already holds (a part calling another part of the same
// connection while holding its lock) would deadlock; the lock aborts with a message instead.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "sql/connection.h"
#include "sql/sqlite_connection.h"

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

 private:
  // Notes this thread as the holder and applies the part's durability; the mutex is held.
  void taken();
  friend struct SharedConnection;
  friend SharedConnection shared_sqlite_file(const std::string& path, SqliteSync level,
                                             std::chrono::milliseconds busy_timeout);
  struct State {
    std::mutex mutex;
    std::atomic<std::thread::id> holder{};
    std::unique_ptr<SqliteConnection> sqlite;  // set for a shared SQLite file; owned here
    SqliteSync current = SqliteSync::kDefault;  // the connection's level; guarded by mutex
  };
  ConnectionLock(std::shared_ptr<State> state, SqliteSync level)
      : state_(std::move(state)), level_(level) {}

  std::shared_ptr<State> state_;
  SqliteSync level_ = SqliteSync::kDefault;  // applied on lock when the connection is shared
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

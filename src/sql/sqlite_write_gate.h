// SqliteWriteGate: the writers of one SQLite database file in this process take turns here.
//
// SQLite lets one connection write at a time and makes the others wait in its busy handler,
// which polls with sleeps of 1, 2, 5, 10 ... ms: with a few connections to one file (the
// server's store, the checkpointer, the audit log, the review store) and several runs at once,
// writers slept for milliseconds while the lock was free again after tens of microseconds, and
// throughput fell as clients were added. Writers of this process now queue on a condition
// variable and are woken as the previous write transaction ends; SQLite's own locking still
// orders them against other processes.
//
// Thread-safety: every method may be called from any thread; one mutex guards the turn.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace tollgate::sql {

class SqliteWriteGate {
 public:
  // The gate of the database file at `path` (as SQLite names it: sqlite3_db_filename), shared
  // by every connection of this process to it; nullptr for a database without a file
  // (":memory:", a temporary database), which no other connection can reach.
  static std::shared_ptr<SqliteWriteGate> of_file(const std::string& path);

  // Waits for the turn, at most `patience`, and takes it. Returns false when it did not get it:
  // the wait ran out, or this thread holds the turn already (through another connection to
  // the file). The write then goes to SQLite's locking as it always did (busy until the
  // connection's timeout), so a writer that waits on another one never waits here forever; a
  // write held up that long fails after up to twice the timeout instead of once.
  bool enter(std::chrono::milliseconds patience);
  // Ends the turn taken by enter(); may be called from another thread than enter().
  void leave();

 private:
  std::mutex mutex_;  // guards taken_ and holder_
  std::condition_variable turn_free_;
  bool taken_ = false;
  std::thread::id holder_;
};

}  // namespace tollgate::sql

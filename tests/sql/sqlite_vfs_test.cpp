// Tollgate's VFS writes a WAL frame's header and page with one system call (it holds the
// header back until the page follows): what is on disk when a commit returns, or when one of
// its writes fails, is what SQLite wrote.
#include "sql/sqlite_vfs.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/types.h>

#include <atomic>
#include <filesystem>

#include "sql/file_faults.h"
#include "sql/sql_test_util.h"
#include "sql/sqlite_connection.h"

namespace tollgate::sql {
namespace {

namespace fs = std::filesystem;

// Counts the write system calls of the platform's VFS under ours (its pwrite, pwrite64 or
// write, whichever it was built to use), through SQLite's own system-call override.
class SystemWrites {
 public:
  SystemWrites() : vfs_(sqlite3_vfs_find(nullptr)) {
    install("pwrite", reinterpret_cast<sqlite3_syscall_ptr>(&counted_pwrite), pwrite_);
    install("pwrite64", reinterpret_cast<sqlite3_syscall_ptr>(&counted_pwrite64), pwrite64_);
    install("write", reinterpret_cast<sqlite3_syscall_ptr>(&counted_write), write_);
  }
  ~SystemWrites() {
    for (const char* name : {"pwrite", "pwrite64", "write"})
      vfs_->xSetSystemCall(vfs_, name, nullptr);
  }
  SystemWrites(const SystemWrites&) = delete;
  SystemWrites& operator=(const SystemWrites&) = delete;
  static std::int64_t count() { return count_.load(); }

 private:
  using Pwrite = ssize_t (*)(int, const void*, size_t, off_t);
  using Write = ssize_t (*)(int, const void*, size_t);
  template <typename F>
  void install(const char* name, sqlite3_syscall_ptr counted, F& original) {
    original = reinterpret_cast<F>(vfs_->xGetSystemCall(vfs_, name));
    if (original != nullptr) {
      ASSERT_EQ(vfs_->xSetSystemCall(vfs_, name, counted), SQLITE_OK);
    }
  }
  static ssize_t counted_pwrite(int fd, const void* data, size_t size, off_t at) {
    ++count_;
    return pwrite_(fd, data, size, at);
  }
  static ssize_t counted_pwrite64(int fd, const void* data, size_t size, off_t at) {
    ++count_;
    return pwrite64_(fd, data, size, at);
  }
  static ssize_t counted_write(int fd, const void* data, size_t size) {
    ++count_;
    return write_(fd, data, size);
  }
  sqlite3_vfs* vfs_;
  static inline std::atomic<std::int64_t> count_{0};
  static inline Pwrite pwrite_ = nullptr, pwrite64_ = nullptr;
  static inline Write write_ = nullptr;
};

class SqliteVfsTest : public ScratchFileTest {
 protected:
  static void insert(SqliteConnection& connection, int value) {
    SqliteStatement statement(connection, "INSERT INTO t (x) VALUES (?)");
    statement.bind(1, std::int64_t{value}).run();
  }
  // Inserts rows `first` to `last` into t (x, pad), each with `pad` bytes, in one transaction.
  static void insert_padded(SqliteConnection& connection, int first, int last, int pad) {
    connection.exec("BEGIN");
    for (int i = first; i <= last; ++i) {
      SqliteStatement statement(connection, "INSERT INTO t VALUES (?, zeroblob(?))");
      statement.bind(1, std::int64_t{i}).bind(2, std::int64_t{pad}).run();
    }
    connection.exec("COMMIT");
  }
  static std::int64_t count_rows(SqliteConnection& connection) {
    SqliteStatement count(connection, "SELECT count(*) FROM t");
    EXPECT_TRUE(count.step());
    return count.integer(0);
  }
  // The rows a process starting now would find if this one died: the file and its WAL copied
  // while the connection is still open, then opened (SQLite recovers the WAL's frames).
  std::int64_t rows_after_a_crash(const std::string& name) {
    const std::string copy = path(name);
    fs::copy_file(path(), copy);
    if (fs::exists(path() + "-wal")) fs::copy_file(path() + "-wal", copy + "-wal");
    SqliteConnection reopened(copy, {.wal = true});
    return count_rows(reopened);
  }
};

TEST_F(SqliteVfsTest, SqliteKeepsNoAllocationStatisticsOnceConfigured) {
  // ctest runs each test in a process of its own, where nothing initialised SQLite before.
  if (!configure_sqlite()) GTEST_SKIP() << "SQLite was initialised earlier in this process";
  SqliteConnection connection(path(), {.wal = true});
  connection.exec("CREATE TABLE t (x)");
  insert(connection, 1);
  sqlite3_int64 current = -1;
  sqlite3_int64 highwater = -1;
  ASSERT_EQ(sqlite3_status64(SQLITE_STATUS_MEMORY_USED, &current, &highwater, 0), SQLITE_OK);
  EXPECT_EQ(current, 0);
}

TEST_F(SqliteVfsTest, EveryCommittedFrameIsOnDiskWhenTheCommitReturns) {
  SqliteConnection connection(path(), {.wal = true, .synchronous = SqliteSync::kNormal});
  connection.exec("CREATE TABLE t (x INTEGER)");
  for (int i = 0; i < 5; ++i) insert(connection, i);
  ASSERT_TRUE(fs::exists(path() + "-wal"));
  EXPECT_EQ(rows_after_a_crash("crashed.db"), 5);
}

TEST_F(SqliteVfsTest, AFailedWriteOfACommitLeavesTheCommitsBeforeIt) {
  SqliteConnection connection(path(), {.wal = true, .synchronous = SqliteSync::kNormal});
  connection.exec("CREATE TABLE t (x INTEGER); CREATE INDEX t_x ON t (x)");
  insert(connection, 0);
  // A commit of a row and its index entry writes two frames: header and page each. Fail each
  // of its writes in turn; the header held back is on disk as it would be without holding.
  for (std::size_t n = 1; n <= 4; ++n) {
    const std::int64_t before = count_rows(connection);
    {
      FileFaults faults({.path_prefix = path(), .operation = FileOperation::kWrite, .fail_at = n});
      try {
        insert(connection, static_cast<int>(n));
      } catch (const Error&) {
      }
      if (!faults.fired()) continue;  // the commit wrote fewer times than n
    }
    EXPECT_EQ(count_rows(connection), before) << "write " << n;
    EXPECT_EQ(rows_after_a_crash("crashed-" + std::to_string(n) + ".db"), before) << "write " << n;
    insert(connection, 100);  // the file takes commits again
    EXPECT_EQ(count_rows(connection), before + 1) << "write " << n;
  }
}

// After a checkpoint the log starts again from its beginning (a new header at offset 0, frames
// over the old ones): the commits written there are as whole when they return.
TEST_F(SqliteVfsTest, CommitsAfterTheLogStartsAgainAreOnDiskWhenTheyReturn) {
  SqliteConnection connection(path(), {.wal = true, .synchronous = SqliteSync::kNormal});
  connection.exec("CREATE TABLE t (x INTEGER, pad BLOB)");
  for (int i = 0; i < 20; ++i) insert(connection, i);
  connection.exec("PRAGMA wal_checkpoint(RESTART)");
  const auto log_size = fs::file_size(path() + "-wal");
  SystemWrites writes;
  const std::int64_t before = SystemWrites::count();
  for (int i = 20; i < 23; ++i) insert(connection, i);
  EXPECT_EQ(fs::file_size(path() + "-wal"), log_size);  // written over, not appended
  // The new header, which SQLite syncs at once, then one write a commit.
  EXPECT_EQ(SystemWrites::count() - before, 1 + 3);
  EXPECT_EQ(rows_after_a_crash("crashed.db"), 23);
}

// A transaction larger than the page cache writes pages to the WAL before its commit; a page
// it changes again is written over its own frame, and SQLite then rewrites the checksums of the
// transaction's frames after the commit frame, down to the commit frame's header.
TEST_F(SqliteVfsTest, ATransactionLargerThanThePageCacheIsOnDiskWhenItsCommitReturns) {
  SqliteConnection connection(path(), {.wal = true, .synchronous = SqliteSync::kNormal});
  connection.exec("CREATE TABLE t (x INTEGER, pad BLOB)");
  insert(connection, 0);
  connection.exec("PRAGMA cache_size = 10");
  connection.exec("BEGIN");
  for (int i = 1; i <= 300; ++i) {
    SqliteStatement statement(connection, "INSERT INTO t VALUES (?, zeroblob(900))");
    statement.bind(1, std::int64_t{i}).run();
  }
  connection.exec("UPDATE t SET pad = zeroblob(901) WHERE x <= 3");  // pages already spilled
  connection.exec("COMMIT");
  EXPECT_EQ(rows_after_a_crash("crashed.db"), 301);
}

// The frames of one commit reach the file in one write (up to 64 KiB of them): a commit of ten
// pages costs one system call, not twenty.
TEST_F(SqliteVfsTest, ACommitOfTenPagesIsOneWrite) {
  SqliteConnection connection(path(), {.wal = true, .synchronous = SqliteSync::kNormal});
  connection.exec("CREATE TABLE t (x INTEGER, pad BLOB)");
  insert(connection, 0);
  SystemWrites writes;
  const std::int64_t before = SystemWrites::count();
  insert_padded(connection, 1, 10, 3000);
  EXPECT_EQ(SystemWrites::count() - before, 1);
  EXPECT_EQ(rows_after_a_crash("crashed.db"), 11);
}

// A transaction of more pages than 64 KiB holds is written in parts of at most that much (the
// platform's VFS cannot write 128 KiB in one call), and whole when its commit returns.
TEST_F(SqliteVfsTest, ACommitOfManyPagesIsWrittenInPartsOfAtMost64KiB) {
  SqliteConnection connection(path(), {.wal = true, .synchronous = SqliteSync::kNormal});
  connection.exec("CREATE TABLE t (x INTEGER, pad BLOB)");
  insert(connection, 0);
  SystemWrites writes;
  const std::int64_t before = SystemWrites::count();
  insert_padded(connection, 1, 100, 3000);
  const std::int64_t wal_bytes = static_cast<std::int64_t>(fs::file_size(path() + "-wal"));
  EXPECT_GE(SystemWrites::count() - before, wal_bytes / (128 * 1024));
  EXPECT_LE(SystemWrites::count() - before, wal_bytes / (64 * 1024) + 1);
  EXPECT_EQ(rows_after_a_crash("crashed.db"), 101);
}

}  // namespace
}  // namespace tollgate::sql

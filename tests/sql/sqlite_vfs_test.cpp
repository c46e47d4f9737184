// Tollgate's VFS writes a WAL frame's header and page with one system call (it holds the
// header back until the page follows): what is on disk when a commit returns, or when one of
// its writes fails, is what SQLite wrote.
#include "sql/sqlite_vfs.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "sql/file_faults.h"
#include "sql/sql_test_util.h"
#include "sql/sqlite_connection.h"

namespace tollgate::sql {
namespace {

namespace fs = std::filesystem;

class SqliteVfsTest : public ScratchFileTest {
 protected:
  static void insert(SqliteConnection& connection, int value) {
    SqliteStatement statement(connection, "INSERT INTO t VALUES (?)");
    statement.bind(1, std::int64_t{value}).run();
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

}  // namespace
}  // namespace tollgate::sql

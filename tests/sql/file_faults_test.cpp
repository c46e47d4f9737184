// The fault seam: Tollgate's VFS counts and fails exactly the write, sync or truncate it is
// told to.
#include "sql/file_faults.h"

#include <gtest/gtest.h>

#include "sql/sql_test_util.h"
#include "sql/sqlite_connection.h"
#include "tollgate/error.h"

namespace tollgate::sql {
namespace {

class FileFaultsTest : public ScratchFileTest {
 protected:
  void insert(SqliteConnection& connection, int value) {
    SqliteStatement statement(connection, "INSERT INTO t VALUES (?)");
    statement.bind(1, std::int64_t{value}).run();
  }
  std::int64_t count_rows(SqliteConnection& connection) {
    SqliteStatement count(connection, "SELECT count(*) FROM t");
    EXPECT_TRUE(count.step());
    return count.integer(0);
  }
};

TEST_F(FileFaultsTest, CountsTheWritesAndSyncsOfFilesUnderThePrefixOnly) {
  SqliteConnection counted(path("counted.db"), {.wal = true, .synchronous = SqliteSync::kFull});
  SqliteConnection other(path("other.db"), {.wal = true, .synchronous = SqliteSync::kFull});
  counted.exec("CREATE TABLE t (x INTEGER)");
  other.exec("CREATE TABLE t (x INTEGER)");
  FileFaults faults({.path_prefix = path("counted.db")});
  insert(other, 1);
  EXPECT_EQ(faults.counts().writes, 0u);
  insert(counted, 1);
  const FileOperationCounts counts = faults.counts();
  EXPECT_GT(counts.writes, 0u);
  EXPECT_GT(counts.syncs, 0u);  // FULL syncs the WAL at each commit
  EXPECT_FALSE(faults.fired());
}

TEST_F(FileFaultsTest, TheNthWriteFailsOnceWithAnIoErrorAndTheNextTransactionSucceeds) {
  SqliteConnection connection(path(), {.wal = true});
  connection.exec("CREATE TABLE t (x INTEGER)");
  FileFaults faults({.path_prefix = path(), .operation = FileOperation::kWrite, .fail_at = 1});
  const Error error = error_of([&] { insert(connection, 1); });
  EXPECT_EQ(error.code(), ErrorCode::kUnavailable);
  EXPECT_NE(std::string(error.what()).find("I/O error"), std::string::npos) << error.what();
  EXPECT_TRUE(faults.fired());
  EXPECT_EQ(count_rows(connection), 0);
  insert(connection, 2);
  EXPECT_EQ(count_rows(connection), 1);
}

TEST_F(FileFaultsTest, ADiskFullIsReportedAsSuch) {
  SqliteConnection connection(path(), {.wal = true});
  connection.exec("CREATE TABLE t (x INTEGER)");
  FileFaults faults({.path_prefix = path(),
                     .operation = FileOperation::kWrite,
                     .fail_at = 1,
                     .fault = FileFault::kDiskFull});
  const Error error = error_of([&] { insert(connection, 1); });
  EXPECT_EQ(error.code(), ErrorCode::kUnavailable);
  EXPECT_NE(std::string(error.what()).find("full"), std::string::npos) << error.what();
}

TEST_F(FileFaultsTest, AFailedCommitSyncLeavesTheLastCommittedRows) {
  SqliteConnection connection(path(), {.wal = true, .synchronous = SqliteSync::kFull});
  connection.exec("CREATE TABLE t (x INTEGER)");
  insert(connection, 1);
  {
    FileFaults faults({.path_prefix = path(), .operation = FileOperation::kSync, .fail_at = 1});
    EXPECT_EQ(code_of([&] { insert(connection, 2); }), ErrorCode::kUnavailable);
    EXPECT_TRUE(faults.fired());
  }
  EXPECT_EQ(count_rows(connection), 1);
  SqliteConnection other(path());
  EXPECT_EQ(count_rows(other), 1);
}

TEST_F(FileFaultsTest, ATruncateCanFail) {
  SqliteConnection connection(path(), {.wal = true});
  connection.exec("CREATE TABLE t (x INTEGER)");
  insert(connection, 1);
  FileFaults faults({.path_prefix = path(), .operation = FileOperation::kTruncate, .fail_at = 1});
  // Folding the WAL into the database truncates the WAL file.
  EXPECT_EQ(code_of([&] { connection.exec("PRAGMA wal_checkpoint(TRUNCATE)"); }),
            ErrorCode::kUnavailable);
  EXPECT_TRUE(faults.fired());
  EXPECT_EQ(faults.counts().truncates, 1u);
}

TEST_F(FileFaultsTest, OnlyOneCallFailsAndOnlyWhileArmed) {
  SqliteConnection connection(path(), {.wal = true});
  connection.exec("CREATE TABLE t (x INTEGER)");
  {
    FileFaults faults({.path_prefix = path(), .operation = FileOperation::kWrite, .fail_at = 1});
    EXPECT_EQ(code_of([&] { insert(connection, 1); }), ErrorCode::kUnavailable);
    for (int i = 0; i < 5; ++i) insert(connection, i);
    EXPECT_EQ(FileFaults::armed(), &faults);
  }
  EXPECT_EQ(FileFaults::armed(), nullptr);
  insert(connection, 5);
  EXPECT_EQ(count_rows(connection), 6);
}

}  // namespace
}  // namespace tollgate::sql

// The SQLite connection, statements and transactions on real files.
#include "sql/sqlite_connection.h"

#include <gtest/gtest.h>

#include <vector>

#include "sql/sql_test_util.h"
#include "tollgate/error.h"

namespace tollgate::sql {
namespace {

class SqliteConnectionTest : public ScratchFileTest {
 protected:
  std::int64_t count_rows(SqliteConnection& connection) {
    SqliteStatement count(connection, "SELECT count(*) FROM t");
    EXPECT_TRUE(count.step());
    return count.integer(0);
  }
};

TEST_F(SqliteConnectionTest, StatementsBindAndReadEveryColumnType) {
  SqliteConnection connection(path());
  connection.exec("CREATE TABLE t (s TEXT, i INTEGER, d REAL, b BLOB, n TEXT)");
  const std::vector<std::uint8_t> bytes = {0, 1, 255};
  SqliteStatement insert(connection, "INSERT INTO t VALUES (?, ?, ?, ?, ?)");
  EXPECT_EQ(insert.bind(1, "text")
                .bind(2, std::int64_t{42})
                .bind(3, 0.5)
                .bind_blob(4, bytes)
                .bind_null(5)
                .run(),
            1);
  SqliteStatement select(connection, "SELECT s, i, d, b, n FROM t");
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.text(0), "text");
  EXPECT_EQ(select.integer(1), 42);
  const auto blob = select.blob(3);
  EXPECT_EQ(std::vector<std::uint8_t>(blob.begin(), blob.end()), bytes);
  EXPECT_TRUE(select.is_null(4));
  EXPECT_FALSE(select.step());
}

TEST_F(SqliteConnectionTest, ATextBoundUnownedIsStoredAsItWasWhenTheStatementRan) {
  SqliteConnection connection(path());
  connection.exec("CREATE TABLE t (s TEXT)");
  SqliteStatement insert(connection, "INSERT INTO t VALUES (?)");
  std::string text(100000, 'v');  // long, as a conversation's values are
  text.back() = 'z';
  EXPECT_EQ(insert.bind_unowned(1, text).run(), 1);
  insert.reset();
  text.assign("changed afterwards");  // read at the step, not after
  SqliteStatement select(connection, "SELECT length(s), substr(s, -1) FROM t");
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.integer(0), 100000);
  EXPECT_EQ(select.text(1), "z");
}

TEST_F(SqliteConnectionTest, ATransactionLeftUncommittedIsRolledBack) {
  SqliteConnection connection(path());
  connection.exec("CREATE TABLE t (x INTEGER)");
  {
    Transaction transaction(connection, TransactionKind::kWrite);
    connection.exec("INSERT INTO t VALUES (1)");
  }
  EXPECT_EQ(count_rows(connection), 0);
  {
    Transaction transaction(connection, TransactionKind::kWrite);
    connection.exec("INSERT INTO t VALUES (1)");
    transaction.commit();
  }
  EXPECT_EQ(count_rows(connection), 1);
}

TEST_F(SqliteConnectionTest, CommitAfterRunsTheLastStatementThenCommits) {
  SqliteConnection connection(path());
  connection.exec("CREATE TABLE t (x INTEGER PRIMARY KEY)");
  SqliteStatement insert(connection, "INSERT INTO t VALUES (?)");
  {
    Transaction transaction(connection, TransactionKind::kWrite);
    insert.bind(1, std::int64_t{1});
    transaction.commit_after(insert);
  }
  EXPECT_EQ(count_rows(connection), 1);
  {
    Transaction transaction(connection, TransactionKind::kWrite);
    connection.exec("INSERT INTO t VALUES (2)");
    insert.bind(1, std::int64_t{1});  // a duplicate key: nothing of the transaction is kept
    EXPECT_EQ(code_of([&] { transaction.commit_after(insert); }), ErrorCode::kInternal);
  }
  EXPECT_EQ(count_rows(connection), 1);
}

TEST_F(SqliteConnectionTest, AStatementInUseIsResetWhenItsScopeEnds) {
  SqliteConnection connection(path());
  connection.exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2)");
  SqliteStatement select(connection, "SELECT x FROM t ORDER BY x");
  {
    StatementUse use(select);
    ASSERT_TRUE(use->step());
    EXPECT_EQ(use->integer(0), 1);
  }
  StatementUse again(select);
  ASSERT_TRUE(again->step());
  EXPECT_EQ(again->integer(0), 1);
}

TEST_F(SqliteConnectionTest, AnUnopenablePathIsUnavailable) {
  EXPECT_EQ(code_of([&] { SqliteConnection connection(path("no/such/dir/x.db")); }),
            ErrorCode::kUnavailable);
}

TEST_F(SqliteConnectionTest, AWriterHeldUpByAnotherConnectionIsUnavailable) {
  SqliteConnection first(path(), {.wal = true});
  SqliteConnection second(path(), {.wal = true});
  first.exec("CREATE TABLE t (x INTEGER)");
  Transaction holding(first, TransactionKind::kWrite);
  EXPECT_EQ(code_of([&] { Transaction waiting(second, TransactionKind::kWrite); }),
            ErrorCode::kUnavailable);
}

TEST_F(SqliteConnectionTest, MalformedSqlIsInternalAndNamesTheStatement) {
  SqliteConnection connection(path());
  const Error error = error_of([&] { connection.exec("SELEC 1"); });
  EXPECT_EQ(error.code(), ErrorCode::kInternal);
  EXPECT_NE(std::string(error.what()).find("SELEC 1"), std::string::npos) << error.what();
}

TEST_F(SqliteConnectionTest, OptionsSetWalAndSynchronous) {
  SqliteConnection connection(path(), {.wal = true, .synchronous = SqliteSync::kFull});
  SqliteStatement journal(connection, "PRAGMA journal_mode");
  ASSERT_TRUE(journal.step());
  EXPECT_EQ(journal.text(0), "wal");
  SqliteStatement synchronous(connection, "PRAGMA synchronous");
  ASSERT_TRUE(synchronous.step());
  EXPECT_EQ(synchronous.integer(0), 2);  // FULL
}

}  // namespace
}  // namespace tollgate::sql

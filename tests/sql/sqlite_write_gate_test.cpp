// The turn-taking of one process's writers of a SQLite file (no timed assertions: a turn is
// probed with a zero wait from another thread).
#include "sql/sqlite_write_gate.h"

#include <gtest/gtest.h>

#include <future>

#include "sql/sql_test_util.h"
#include "sql/sqlite_connection.h"

namespace tollgate::sql {
namespace {

using std::chrono::milliseconds;

// Whether another thread could take the turn of `gate` right now (and gives it back).
bool free_for_another_thread(SqliteWriteGate& gate) {
  return std::async(std::launch::async, [&gate] {
           const bool taken = gate.enter(milliseconds(0));
           if (taken) gate.leave();
           return taken;
         }).get();
}

class SqliteWriteGateTest : public ScratchFileTest {};

TEST_F(SqliteWriteGateTest, ConnectionsToOneFileShareItsGate) {
  SqliteConnection first(path(), {.wal = true});
  SqliteConnection second(path(), {.wal = true});
  SqliteConnection other(path("other.db"), {.wal = true});
  ASSERT_NE(first.write_gate(), nullptr);
  EXPECT_EQ(first.write_gate(), second.write_gate());
  EXPECT_NE(first.write_gate(), other.write_gate());
  EXPECT_EQ(SqliteConnection(":memory:").write_gate(), nullptr);
}

TEST_F(SqliteWriteGateTest, ATurnHeldByOneThreadIsNotTakenByAnother) {
  auto gate = SqliteWriteGate::of_file(path());
  ASSERT_TRUE(gate->enter(milliseconds(0)));
  EXPECT_FALSE(free_for_another_thread(*gate));
  gate->leave();
  EXPECT_TRUE(free_for_another_thread(*gate));
}

TEST_F(SqliteWriteGateTest, AThreadHoldingTheTurnDoesNotWaitForItself) {
  auto gate = SqliteWriteGate::of_file(path());
  ASSERT_TRUE(gate->enter(milliseconds(0)));
  EXPECT_FALSE(gate->enter(std::chrono::hours(1)));  // returns at once, the turn stays held
  EXPECT_FALSE(free_for_another_thread(*gate));
  gate->leave();
}

TEST_F(SqliteWriteGateTest, AWriteTransactionHoldsTheTurnUntilItEnds) {
  SqliteConnection connection(path(), {.wal = true});
  connection.exec("CREATE TABLE t (x INTEGER)");
  {
    Transaction write(connection, TransactionKind::kWrite);
    EXPECT_FALSE(free_for_another_thread(*connection.write_gate()));
    write.commit();
  }
  EXPECT_TRUE(free_for_another_thread(*connection.write_gate()));
  {
    Transaction rolled_back(connection, TransactionKind::kWrite);
  }
  EXPECT_TRUE(free_for_another_thread(*connection.write_gate()));
  Transaction read(connection, TransactionKind::kRead);
  EXPECT_TRUE(free_for_another_thread(*connection.write_gate()));
}

TEST_F(SqliteWriteGateTest, AWriteOutsideATransactionHoldsTheTurnUntilItsStatementEnds) {
  SqliteConnection connection(path(), {.wal = true});
  connection.exec("CREATE TABLE t (x INTEGER)");
  SqliteStatement insert(connection, "INSERT INTO t VALUES (1), (2) RETURNING x");
  ASSERT_TRUE(insert.step());
  EXPECT_FALSE(free_for_another_thread(*connection.write_gate()));
  insert.reset();
  EXPECT_TRUE(free_for_another_thread(*connection.write_gate()));
  SqliteStatement select(connection, "SELECT x FROM t");
  ASSERT_TRUE(select.step());
  EXPECT_TRUE(free_for_another_thread(*connection.write_gate()));
}

}  // namespace
}  // namespace tollgate::sql

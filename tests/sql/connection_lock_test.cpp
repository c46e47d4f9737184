// The connection that the parts of one process share per SQLite file, and its lock.
#include "sql/connection_lock.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>

#include "sql/sql_test_util.h"

namespace tollgate::sql {
namespace {

using std::chrono::milliseconds;

class ConnectionLockTest : public ScratchFileTest {};

// PRAGMA synchronous as the connection has it now (1 NORMAL, 2 FULL).
std::int64_t synchronous(Connection& connection) {
  auto query = connection.prepare("PRAGMA synchronous");
  EXPECT_TRUE(query->step());
  return query->integer(0);
}

// Whether another thread could take `lock` right now (and gives it back).
bool free_for_another_thread(ConnectionLock& lock) {
  return std::async(std::launch::async, [&lock] {
           std::unique_lock taken(lock, std::try_to_lock);
           return taken.owns_lock();
         }).get();
}

TEST_F(ConnectionLockTest, PartsOpeningOneFileShareOneConnection) {
  SharedConnection store = shared_sqlite_file(path(), SqliteSync::kNormal, milliseconds(100));
  SharedConnection audit = shared_sqlite_file(path(), SqliteSync::kFull, milliseconds(100));
  SharedConnection other = shared_sqlite_file(path("other.db"), SqliteSync::kNormal, milliseconds(100));
  EXPECT_EQ(store.connection.get(), audit.connection.get());
  EXPECT_NE(store.connection.get(), other.connection.get());
}

TEST_F(ConnectionLockTest, AnInMemoryDatabaseIsNeverShared) {
  SharedConnection first = shared_sqlite_file(":memory:", SqliteSync::kNormal, milliseconds(0));
  SharedConnection second = shared_sqlite_file(":memory:", SqliteSync::kNormal, milliseconds(0));
  EXPECT_NE(first.connection.get(), second.connection.get());
}

TEST_F(ConnectionLockTest, TheFileIsOpenedAgainOnceEveryPartClosedIt) {
  {
    SharedConnection part = shared_sqlite_file(path(), SqliteSync::kNormal, milliseconds(0));
    std::lock_guard lock(part.lock);
    part.connection->exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7)");
  }
  SharedConnection again = shared_sqlite_file(path(), SqliteSync::kNormal, milliseconds(0));
  std::lock_guard lock(again.lock);
  auto query = again.connection->prepare("SELECT x FROM t");
  ASSERT_TRUE(query->step());
  EXPECT_EQ(query->integer(0), 7);
}

TEST_F(ConnectionLockTest, TakingTheLockAppliesThePartsDurability) {
  SharedConnection store = shared_sqlite_file(path(), SqliteSync::kNormal, milliseconds(0));
  SharedConnection audit = shared_sqlite_file(path(), SqliteSync::kFull, milliseconds(0));
  {
    std::lock_guard lock(audit.lock);
    EXPECT_EQ(synchronous(*audit.connection), 2);
  }
  {
    std::lock_guard lock(store.lock);
    EXPECT_EQ(synchronous(*store.connection), 1);
  }
  SharedConnection review = shared_sqlite_file(path(), SqliteSync::kDefault, milliseconds(0));
  std::lock_guard lock(review.lock);
  EXPECT_EQ(synchronous(*review.connection), 2);  // the default is FULL
}

TEST_F(ConnectionLockTest, OnePartHoldingTheLockKeepsTheOthersOut) {
  SharedConnection store = shared_sqlite_file(path(), SqliteSync::kNormal, milliseconds(0));
  SharedConnection audit = shared_sqlite_file(path(), SqliteSync::kFull, milliseconds(0));
  {
    std::lock_guard lock(store.lock);
    EXPECT_FALSE(free_for_another_thread(audit.lock));
  }
  EXPECT_TRUE(free_for_another_thread(audit.lock));
}

TEST_F(ConnectionLockTest, ALockOfItsOwnIsNotShared) {
  ConnectionLock first;
  ConnectionLock second;
  std::lock_guard lock(first);
  EXPECT_TRUE(free_for_another_thread(second));
  EXPECT_FALSE(free_for_another_thread(first));
}

TEST_F(ConnectionLockTest, TakingTheLockTwiceOnOneThreadAbortsInsteadOfDeadlocking) {
  SharedConnection store = shared_sqlite_file(path(), SqliteSync::kNormal, milliseconds(0));
  SharedConnection audit = shared_sqlite_file(path(), SqliteSync::kFull, milliseconds(0));
  EXPECT_DEATH(
      {
        std::lock_guard outer(store.lock);
        std::lock_guard inner(audit.lock);
      },
      "lock it already holds");
}

}  // namespace
}  // namespace tollgate::sql

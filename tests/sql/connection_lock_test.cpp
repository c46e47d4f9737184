// The connection that the parts of one process share per SQLite file, and its lock.
#include "sql/connection_lock.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include "sql/file_faults.h"
#include "sql/sql_test_util.h"

namespace tollgate::sql {
namespace {

using std::chrono::milliseconds;

class ConnectionLockTest : public ScratchFileTest {
 protected:
  // The test file's shared connection, as a part of durability `level` opens it.
  SharedConnection open_part(SqliteSync level) const {
    return shared_sqlite_file(path(), level, milliseconds(0));
  }
};

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
    SharedConnection part = open_part(SqliteSync::kNormal);
    std::lock_guard lock(part.lock);
    part.connection->exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7)");
  }
  SharedConnection again = open_part(SqliteSync::kNormal);
  std::lock_guard lock(again.lock);
  auto query = again.connection->prepare("SELECT x FROM t");
  ASSERT_TRUE(query->step());
  EXPECT_EQ(query->integer(0), 7);
}

// Runs `sql` while holding `part`'s lock; the syncs of the files under the scratch directory
// that it took, the lock's release included.
std::uint64_t syncs_of(SharedConnection& part, const std::string& dir, const std::string& sql) {
  FileFaults count({.path_prefix = dir, .operation = FileOperation::kSync});
  {
    std::lock_guard lock(part.lock);
    part.connection->exec(sql);
  }
  return count.counts().syncs;
}

// Creates table t (a new file's first commit also syncs the new WAL and its directory).
void create_table(SharedConnection& part) {
  std::lock_guard lock(part.lock);
  part.connection->exec("CREATE TABLE t (x INTEGER)");
}

TEST_F(ConnectionLockTest, TheSharedConnectionCommitsWithNormalDurability) {
  SharedConnection store = open_part(SqliteSync::kNormal);
  SharedConnection audit = open_part(SqliteSync::kFull);
  std::lock_guard lock(audit.lock);
  EXPECT_EQ(synchronous(*audit.connection), 1);
}

TEST_F(ConnectionLockTest, AFullPartsCommitIsSyncedBeforeItsLockIsGivenBack) {
  SharedConnection store = open_part(SqliteSync::kNormal);
  SharedConnection audit = open_part(SqliteSync::kFull);
  create_table(store);
  EXPECT_EQ(syncs_of(store, dir_, "INSERT INTO t VALUES (1)"), 0u);
  EXPECT_EQ(syncs_of(audit, dir_, "INSERT INTO t VALUES (2)"), 1u);
  // Two transactions in one hold: one sync.
  EXPECT_EQ(syncs_of(audit, dir_, "INSERT INTO t VALUES (3); INSERT INTO t VALUES (4)"), 1u);
  SharedConnection review = open_part(SqliteSync::kDefault);
  EXPECT_EQ(syncs_of(review, dir_, "INSERT INTO t VALUES (5)"), 1u);  // the default is FULL
}

TEST_F(ConnectionLockTest, AFullPartsLockAtNormalLevelCommitsWithoutASync) {
  SharedConnection review = open_part(SqliteSync::kFull);
  create_table(review);
  SharedConnection claims{review.connection, review.lock.at_level(SqliteSync::kNormal)};
  EXPECT_EQ(syncs_of(claims, dir_, "INSERT INTO t VALUES (1)"), 0u);
  EXPECT_EQ(syncs_of(review, dir_, "INSERT INTO t VALUES (2)"), 1u);
}

TEST_F(ConnectionLockTest, ALockAtAnotherLevelIsStillTheSameLock) {
  SharedConnection review = open_part(SqliteSync::kFull);
  ConnectionLock claims = review.lock.at_level(SqliteSync::kNormal);
  std::unique_lock held(claims);
  EXPECT_FALSE(free_for_another_thread(review.lock));
  held.unlock();
  EXPECT_TRUE(free_for_another_thread(review.lock));
}

TEST_F(ConnectionLockTest, AFullPartThatCommitsNothingDoesNotSync) {
  SharedConnection store = open_part(SqliteSync::kNormal);
  SharedConnection audit = open_part(SqliteSync::kFull);
  create_table(store);  // a commit of the store's, not the audit log's to sync
  EXPECT_EQ(syncs_of(audit, dir_, "SELECT count(*) FROM t"), 0u);
}

TEST_F(ConnectionLockTest, ACommitAlreadySyncedByAnotherPartIsNotSyncedAgain) {
  SharedConnection audit = open_part(SqliteSync::kFull);
  SharedConnection review = open_part(SqliteSync::kFull);
  create_table(audit);
  FileFaults count({.path_prefix = dir_, .operation = FileOperation::kSync});
  std::unique_lock first(audit.lock);
  audit.connection->exec("INSERT INTO t VALUES (1)");
  first.unlock();  // syncs it
  std::unique_lock second(review.lock);
  second.unlock();  // nothing committed since
  EXPECT_EQ(count.counts().syncs, 1u);
}

TEST_F(ConnectionLockTest, AFailedSyncEndsTheProcessBeforeTheWriteIsAcknowledged) {
  SharedConnection audit = open_part(SqliteSync::kFull);
  create_table(audit);
  EXPECT_DEATH(
      {
        FileFaults faults({.path_prefix = dir_, .operation = FileOperation::kSync, .fail_at = 1});
        std::lock_guard lock(audit.lock);
        audit.connection->exec("INSERT INTO t VALUES (1)");
      },
      "could not be synced to disk");
}

TEST_F(ConnectionLockTest, ALongWriteAheadLogIsStillCheckpointed) {
  SharedConnection store = open_part(SqliteSync::kNormal);
  std::lock_guard lock(store.lock);
  store.connection->exec("CREATE TABLE t (x BLOB)");
  // 3,000 commits of a page each: without checkpoints the WAL would hold 3,000 frames (12 MB).
  for (int i = 0; i < 3000; ++i) store.connection->exec("INSERT INTO t VALUES (zeroblob(3000))");
  const auto wal_bytes = std::filesystem::file_size(path() + "-wal");
  EXPECT_LT(wal_bytes, 2000u * 4096u) << wal_bytes;
}

TEST_F(ConnectionLockTest, AWriteAheadLogPastTheThresholdIsCheckpointedWhileAPartHoldsTheLock) {
  SharedConnection store = open_part(SqliteSync::kNormal);
  std::lock_guard lock(store.lock);
  store.connection->exec("CREATE TABLE t (x BLOB)");
  // 1,100 commits of a page each: past the 1,000 frames that call for a checkpoint, short of
  // the length at which the committing part would checkpoint under the lock itself.
  for (int i = 0; i < 1100; ++i) store.connection->exec("INSERT INTO t VALUES (zeroblob(3000))");
  // The lock is still held: the pages reach the database file all the same.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::filesystem::file_size(path()) < 1000u * 4096u &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_GE(std::filesystem::file_size(path()), 1000u * 4096u);
}

TEST_F(ConnectionLockTest, OnePartHoldingTheLockKeepsTheOthersOut) {
  SharedConnection store = open_part(SqliteSync::kNormal);
  SharedConnection audit = open_part(SqliteSync::kFull);
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
  SharedConnection store = open_part(SqliteSync::kNormal);
  SharedConnection audit = open_part(SqliteSync::kFull);
  EXPECT_DEATH(
      {
        std::lock_guard outer(store.lock);
        std::lock_guard inner(audit.lock);
      },
      "lock it already holds");
}

}  // namespace
}  // namespace tollgate::sql

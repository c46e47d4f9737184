// Review records on a real database (SQLite; PostgreSQL in server_postgres_test): one decision wins, a refused one gives the review back,
// what is no longer pending is superseded.
#include "server/sql_review_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>

#include "core/sha256.h"
#include "server/review_records.h"
#include "server/store_backend.h"
#include "sql/file_faults.h"
#include "sql/sqlite_connection.h"
#include "tollgate/iso_time.h"

namespace tollgate::server {
namespace {

// What a paused HITL thread shows: one interrupt with two actions.
Json shown_two_actions() {
  Json value{{"action_requests",
              {{{"name", "write_file"}, {"args", {{"path", "a.txt"}}}, {"description", "A"}},
               {{"name", "write_file"}, {"args", {{"path", "b.txt"}}}, {"description", "B"}}}},
             {"review_configs",
              {{{"action_name", "write_file"}, {"allowed_decisions", {"approve", "reject"}}}}}};
  return Json{{"task-1", {{{"id", "i-1"}, {"value", value}}}}};
}

Json values_with_calls() {
  return Json{{"messages",
               {{{"type", "ai"},
                 {"tool_calls",
                  {{{"id", "call-a"}, {"name", "write_file"}, {"args", {{"path", "a.txt"}}}},
                   {{"id", "call-b"}, {"name", "write_file"}, {"args", {{"path", "b.txt"}}}}}}}}}};
}

class ReviewStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TOLLGATE_REQUIRE_STORE_BACKEND();
    store_ = std::make_unique<SqlReviewStore>(db_.connect());
    store_->add_pending(
        review_records_for("t1", "cp-1", shown_two_actions(), values_with_calls()["messages"]));
  }
  void TearDown() override { store_.reset(); }

  testing::StoreBackend db_{"reviews"};
  std::unique_ptr<SqlReviewStore> store_;
};

TEST_F(ReviewStoreTest, EachActionGetsARecordWithItsToolCallAndDigest) {
  auto records = store_->list("t1");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].action_index, 1);
  EXPECT_EQ(records[1].tool_call_id, "call-b");
  EXPECT_EQ(records[1].digest, core::sha256_hex(R"({"args":{"path":"b.txt"},"name":"write_file"})"));
  EXPECT_EQ(records[0].status, ReviewStatus::kPending);
}

TEST_F(ReviewStoreTest, AddingTheSameInterruptAgainKeepsTheRecords) {
  const std::string id = store_->list("t1")[0].review_id;
  store_->add_pending(review_records_for("t1", "cp-1", shown_two_actions(), Json()));
  auto records = store_->list("t1");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].review_id, id);
}

TEST_F(ReviewStoreTest, OnlyTheFirstDecisionIsAccepted) {
  EXPECT_EQ(store_->decide("t1", "cp-1", "i-1", "alice", "run-1", 5), 2u);
  EXPECT_EQ(store_->decide("t1", "cp-1", "i-1", "bob", "run-2", 6), 0u);
  auto records = store_->list("t1");
  EXPECT_EQ(records[0].status, ReviewStatus::kDecided);
  EXPECT_EQ(records[0].decided_by, "alice");
  EXPECT_EQ(records[0].run_id, "run-1");
}

TEST_F(ReviewStoreTest, ADecisionForAnotherCheckpointClaimsNothing) {
  EXPECT_EQ(store_->decide("t1", "cp-0", "i-1", "alice", "run-1", 5), 0u);
}

TEST_F(ReviewStoreTest, ReopeningGivesTheReviewBackForTheNextDecision) {
  store_->decide("t1", "cp-1", "i-1", "alice", "run-1", 5);
  store_->reopen("run-1");
  EXPECT_EQ(store_->list("t1")[0].status, ReviewStatus::kPending);
  EXPECT_EQ(store_->decide("t1", "cp-1", "i-1", "bob", "run-2", 6), 2u);
}

TEST_F(ReviewStoreTest, RecordsNoLongerPendingAreSuperseded) {
  store_->supersede_others("t1", "cp-2", {"i-2"});
  for (const ReviewRecord& r : store_->list("t1")) EXPECT_EQ(r.status, ReviewStatus::kSuperseded);
}

TEST_F(ReviewStoreTest, RecordsStillPendingAreKept) {
  store_->supersede_others("t1", "cp-1", {"i-1"});
  for (const ReviewRecord& r : store_->list("t1")) EXPECT_EQ(r.status, ReviewStatus::kPending);
}

TEST_F(ReviewStoreTest, ApprovalsAreCollectedOncePerReviewer) {
  EXPECT_TRUE(store_->add_approval("t1", "cp-1", ReviewApproval{"i-1", 0, "rita", 5}));
  EXPECT_FALSE(store_->add_approval("t1", "cp-1", ReviewApproval{"i-1", 0, "rita", 6}));
  EXPECT_TRUE(store_->add_approval("t1", "cp-1", ReviewApproval{"i-1", 0, "sam", 7}));
  const std::vector<ReviewApproval> approvals = store_->approvals("t1", "cp-1");
  ASSERT_EQ(approvals.size(), 2u);
  EXPECT_EQ(approvals[0].approved_by, "rita");
  EXPECT_EQ(approvals[0].approved_at, 5);
  EXPECT_EQ(approvals[1].approved_by, "sam");
}

TEST_F(ReviewStoreTest, ApprovalsBelongToTheirCheckpoint) {
  store_->add_approval("t1", "cp-1", ReviewApproval{"i-1", 0, "rita", 5});
  EXPECT_TRUE(store_->approvals("t1", "cp-2").empty());
  EXPECT_TRUE(store_->approvals("t2", "cp-1").empty());
}

TEST(Sha256, HashesAsLowercaseHex) {
  EXPECT_EQ(core::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// One action reviewed until `expires_at` (ISO 8601), rejected then with "Too late."
Json shown_timed(const std::string& interrupt_id, const std::string& expires_at) {
  Json value{{"action_requests", {{{"name", "write_file"}, {"args", {{"path", "c.txt"}}}}}},
             {"review_configs",
              {{{"action_name", "write_file"},
                {"allowed_decisions", {"approve", "reject"}},
                {"expires_at", expires_at},
                {"on_timeout", {{"type", "reject"}, {"message", "Too late."}}}}}}};
  return Json{{"task-2", {{{"id", interrupt_id}, {"value", value}}}}};
}

TEST_F(ReviewStoreTest, ATimedReviewKeepsItsDeadlineAndOnTimeout) {
  store_->add_pending(review_records_for("t2", "cp-9", shown_timed("i-9", "2030-01-01T00:00:00.000Z"), Json()));
  const ReviewRecord r = store_->list("t2")[0];
  EXPECT_EQ(r.expires_at, *parse_iso_utc_millis("2030-01-01T00:00:00.000Z"));
  EXPECT_EQ(r.on_timeout, (Json{{"type", "reject"}, {"message", "Too late."}}));
  EXPECT_EQ(r.to_json()["expires_at"], "2030-01-01T00:00:00.000Z");
  EXPECT_EQ(store_->list("t1")[0].expires_at, 0);  // untimed
}

TEST_F(ReviewStoreTest, OnlyPendingRecordsPastTheirDeadlineAreDueEarliestFirst) {
  store_->add_pending(review_records_for("t2", "cp-9", shown_timed("late", "2030-01-02T00:00:00.000Z"), Json()));
  store_->add_pending(review_records_for("t2", "cp-9", shown_timed("early", "2030-01-01T00:00:00.000Z"), Json()));
  const std::int64_t early = *parse_iso_utc_millis("2030-01-01T00:00:00.000Z");
  EXPECT_EQ(store_->next_expiry(), early);
  EXPECT_TRUE(store_->due(early - 1).empty());
  ASSERT_EQ(store_->due(early + 86'400'000).size(), 2u);
  EXPECT_EQ(store_->due(early + 86'400'000)[0].interrupt_id, "early");
  store_->decide("t2", "cp-9", "early", "alice", "run-1", 1);
  ASSERT_EQ(store_->due(early + 86'400'000).size(), 1u);
  EXPECT_EQ(store_->due(early + 86'400'000)[0].interrupt_id, "late");
}

TEST_F(ReviewStoreTest, AnExpiryAndADecisionClaimTheSameRecordsOnlyOnce) {
  store_->add_pending(review_records_for("t2", "cp-9", shown_timed("i-9", "2030-01-01T00:00:00.000Z"), Json()));
  EXPECT_EQ(store_->expire("t2", "cp-9", "i-9", "system:timeout", "run-x", 5), 1u);
  EXPECT_EQ(store_->expire("t2", "cp-9", "i-9", "system:timeout", "run-y", 6), 0u);
  EXPECT_EQ(store_->decide("t2", "cp-9", "i-9", "alice", "run-z", 7), 0u);
  const ReviewRecord r = store_->list("t2")[0];
  EXPECT_EQ(r.status, ReviewStatus::kExpired);
  EXPECT_EQ(r.run_id, "run-x");
  EXPECT_FALSE(store_->next_expiry());
}

TEST_F(ReviewStoreTest, ARefusedExpiryThatIsDisarmedWaitsForAPersonWithoutADeadline) {
  store_->add_pending(review_records_for("t2", "cp-9", shown_timed("i-9", "2030-01-01T00:00:00.000Z"), Json()));
  store_->expire("t2", "cp-9", "i-9", "system:timeout", "run-x", 5);
  store_->disarm("run-x");
  store_->reopen("run-x");
  const ReviewRecord r = store_->list("t2")[0];
  EXPECT_EQ(r.status, ReviewStatus::kPending);
  EXPECT_EQ(r.expires_at, 0);
  EXPECT_FALSE(store_->next_expiry());
}

#ifndef TOLLGATE_TEST_POSTGRES_STORES  // a SQLite file of an older layout
TEST(ReviewStoreSchema, ADatabaseFromBeforeDeadlinesOpensAndItsRecordsHaveNone) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tollgate_reviews_v2_" + std::to_string(::getpid()) + ".db"))
                               .string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  {
    // Version 2 of the "reviews" component, with one pending record.
    sql::SqliteConnection db(path);
    db.exec(R"sql(
CREATE TABLE tollgate_schema (component TEXT PRIMARY KEY, version INTEGER);
INSERT INTO tollgate_schema VALUES ('reviews', 2);
CREATE TABLE server_reviews (
  review_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL,
  interrupt_id TEXT NOT NULL, action_index INTEGER NOT NULL, tool_call_id TEXT NOT NULL,
  digest TEXT NOT NULL, created_at INTEGER NOT NULL, status TEXT NOT NULL,
  decided_by TEXT NOT NULL, run_id TEXT NOT NULL, decided_at INTEGER NOT NULL,
  UNIQUE (thread_id, checkpoint_id, interrupt_id, action_index));
CREATE TABLE server_review_approvals (
  thread_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL, interrupt_id TEXT NOT NULL,
  action_index INTEGER NOT NULL, approved_by TEXT NOT NULL, approved_at INTEGER NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_id, interrupt_id, action_index, approved_by));
INSERT INTO server_reviews VALUES ('r-1', 't1', 'cp-1', 'i-1', 0, '', 'd', 1000, 'pending', '', '', 0);
)sql");
  }
  {
    SqliteReviewStore store(path);
    const std::vector<ReviewRecord> records = store.list("t1");
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].status, ReviewStatus::kPending);
    EXPECT_EQ(records[0].expires_at, 0);
    EXPECT_TRUE(records[0].on_timeout.is_null());
    EXPECT_FALSE(store.next_expiry());
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}
#endif

// ------------------------------------------------------------------ claims

TEST_F(ReviewStoreTest, AClaimCoversThePendingRecordsOfTheInterrupt) {
  auto claim = store_->take_claim("t1", "i-1", "alice", 1000, 61000);
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->claimed_by, "alice");
  EXPECT_EQ(claim->claimed_at, 1000);
  EXPECT_EQ(claim->expires_at, 61000);
  auto live = store_->live_claims({"t1"}, 2000);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].interrupt_id, "i-1");
  EXPECT_EQ(live[0].claimed_by, "alice");
}

TEST_F(ReviewStoreTest, AnotherIdentitysLiveClaimIsReturnedInsteadOfTaken) {
  store_->take_claim("t1", "i-1", "alice", 1000, 61000);
  auto held = store_->take_claim("t1", "i-1", "bob", 2000, 62000);
  ASSERT_TRUE(held);
  EXPECT_EQ(held->claimed_by, "alice");
  EXPECT_EQ(store_->live_claims({"t1"}, 3000)[0].claimed_by, "alice");
}

TEST_F(ReviewStoreTest, TheHolderClaimingAgainExtendsItsClaimFromWhenItFirstClaimed) {
  store_->take_claim("t1", "i-1", "alice", 1000, 61000);
  auto again = store_->take_claim("t1", "i-1", "alice", 30000, 90000);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->claimed_at, 1000);
  EXPECT_EQ(again->expires_at, 90000);
}

TEST_F(ReviewStoreTest, AnExpiredClaimIsNotLiveAndAnotherIdentityMayClaim) {
  store_->take_claim("t1", "i-1", "alice", 1000, 61000);
  EXPECT_TRUE(store_->live_claims({"t1"}, 61000).empty());
  auto taken = store_->take_claim("t1", "i-1", "bob", 61000, 121000);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->claimed_by, "bob");
  EXPECT_EQ(taken->claimed_at, 61000);
}

TEST_F(ReviewStoreTest, NothingPendingCannotBeClaimed) {
  store_->decide("t1", "cp-1", "i-1", "alice", "run-1", 5);
  EXPECT_FALSE(store_->take_claim("t1", "i-1", "alice", 1000, 61000));
  EXPECT_FALSE(store_->take_claim("t1", "i-other", "alice", 1000, 61000));
}

TEST_F(ReviewStoreTest, ADecisionEndsTheClaim) {
  store_->take_claim("t1", "i-1", "alice", 1000, 61000);
  store_->decide("t1", "cp-1", "i-1", "bob", "run-1", 2000);
  store_->reopen("run-1");
  EXPECT_TRUE(store_->live_claims({"t1"}, 3000).empty());
}

TEST_F(ReviewStoreTest, AnExpiryEndsTheClaim) {
  store_->take_claim("t1", "i-1", "alice", 1000, 61000);
  store_->expire("t1", "cp-1", "i-1", "system:timeout", "run-1", 2000);
  EXPECT_TRUE(store_->live_claims({"t1"}, 3000).empty());
}

TEST_F(ReviewStoreTest, SupersededRecordsLoseTheirClaim) {
  store_->take_claim("t1", "i-1", "alice", 1000, 61000);
  store_->supersede_others("t1", "cp-2", {"i-2"});
  EXPECT_TRUE(store_->live_claims({"t1"}, 3000).empty());
}

TEST_F(ReviewStoreTest, OnlyTheHolderReleasesWhenAHolderIsNamed) {
  store_->take_claim("t1", "i-1", "alice", 1000, 61000);
  EXPECT_FALSE(store_->release_claim("t1", "i-1", "bob", 2000));
  auto released = store_->release_claim("t1", "i-1", "alice", 2000);
  ASSERT_TRUE(released);
  EXPECT_EQ(released->claimed_by, "alice");
  EXPECT_TRUE(store_->live_claims({"t1"}, 3000).empty());
}

TEST_F(ReviewStoreTest, ReleasingWithoutAHolderEndsAnyonesClaim) {
  store_->take_claim("t1", "i-1", "alice", 1000, 61000);
  EXPECT_TRUE(store_->release_claim("t1", "i-1", "", 2000));
  EXPECT_FALSE(store_->release_claim("t1", "i-1", "", 2000));
}

TEST_F(ReviewStoreTest, LiveClaimsAreReadForSeveralThreadsAtOnce) {
  store_->add_pending(review_records_for("t2", "cp-9", shown_timed("i-9", "2030-01-01T00:00:00.000Z"), Json()));
  store_->take_claim("t1", "i-1", "alice", 1000, 61000);
  store_->take_claim("t2", "i-9", "bob", 1000, 61000);
  auto live = store_->live_claims({"t1", "t2", "t3"}, 2000);
  ASSERT_EQ(live.size(), 2u);
  EXPECT_EQ(live[0].thread_id, "t1");
  EXPECT_EQ(live[1].claimed_by, "bob");
}

TEST(ReviewStoreSchema, ADatabaseFromBeforeClaimsOpensAndItsReviewsCanBeClaimed) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tollgate_reviews_v3_" + std::to_string(::getpid()) + ".db"))
                               .string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  {
    // Version 3 of the "reviews" component, with one pending record.
    sql::SqliteConnection db(path);
    db.exec(R"sql(
CREATE TABLE tollgate_schema (component TEXT PRIMARY KEY, version INTEGER);
INSERT INTO tollgate_schema VALUES ('reviews', 3);
CREATE TABLE server_reviews (
  review_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL,
  interrupt_id TEXT NOT NULL, action_index INTEGER NOT NULL, tool_call_id TEXT NOT NULL,
  digest TEXT NOT NULL, created_at INTEGER NOT NULL, status TEXT NOT NULL,
  decided_by TEXT NOT NULL, run_id TEXT NOT NULL, decided_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL DEFAULT 0, on_timeout TEXT NOT NULL DEFAULT '',
  UNIQUE (thread_id, checkpoint_id, interrupt_id, action_index));
CREATE TABLE server_review_approvals (
  thread_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL, interrupt_id TEXT NOT NULL,
  action_index INTEGER NOT NULL, approved_by TEXT NOT NULL, approved_at INTEGER NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_id, interrupt_id, action_index, approved_by));
INSERT INTO server_reviews VALUES ('r-1', 't1', 'cp-1', 'i-1', 0, '', 'd', 1000, 'pending', '', '', 0, 0, '');
)sql");
  }
  {
    SqliteReviewStore store(path);
    EXPECT_TRUE(store.live_claims({"t1"}, 2000).empty());
    auto claim = store.take_claim("t1", "i-1", "alice", 2000, 62000);
    ASSERT_TRUE(claim);
    EXPECT_EQ(claim->claimed_by, "alice");
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// On its SQLite file, a pause's records are synced before add_pending returns; a decision's
// claim is not synced on its own (the insert of the run that carries it follows it in the
// write-ahead log, and the next sync covers both).
TEST(SqliteReviewStoreTest, APausesRecordsAreSyncedAndAClaimWaitsForTheNextSync) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("tollgate_review_syncs_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    SqliteReviewStore store((dir / "reviews.db").string());
    // The file's first commit also syncs the new WAL's directory: made before counting.
    store.add_pending(review_records_for("t0", "cp-0", shown_two_actions(), Json()));
    const auto syncs = [&](const std::function<void()>& write) {
      sql::FileFaults count({.path_prefix = dir.string(), .operation = sql::FileOperation::kSync});
      write();
      return count.counts().syncs;
    };
    EXPECT_EQ(syncs([&] {
                store.add_pending(review_records_for("t1", "cp-1", shown_two_actions(),
                                                     values_with_calls()["messages"]));
              }),
              1u);
    EXPECT_EQ(syncs([&] { EXPECT_EQ(store.decide("t1", "cp-1", "i-1", "alice", "r1", 1), 2u); }),
              0u);
    EXPECT_EQ(store.list("t1").front().status, ReviewStatus::kDecided);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tollgate::server

// Review records on a real SQLite file: one decision wins, a refused one gives the review back,
// what is no longer pending is superseded.
#include "server/sqlite_review_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/sha256.h"
#include "server/review_records.h"

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
    path_ = std::filesystem::temp_directory_path() /
            ("tollgate_reviews_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    remove();
    store_ = std::make_unique<SqliteReviewStore>(path_.string());
    store_->add_pending(review_records_for("t1", "cp-1", shown_two_actions(), values_with_calls()));
  }
  void TearDown() override {
    store_.reset();
    remove();
  }
  void remove() {
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path_.string() + suffix);
  }

  std::filesystem::path path_;
  std::unique_ptr<SqliteReviewStore> store_;
};

TEST_F(ReviewStoreTest, EachActionGetsARecordWithItsToolCallAndDigest) {
  auto records = store_->list("t1");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].action_index, 1);
  EXPECT_EQ(records[1].tool_call_id, "call-b");
  EXPECT_EQ(records[1].digest, core::sha256_hex(R"({"args":{"path":"b.txt"},"name":"write_file"})"));
  EXPECT_EQ(records[0].status, "pending");
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
  EXPECT_EQ(records[0].status, "decided");
  EXPECT_EQ(records[0].decided_by, "alice");
  EXPECT_EQ(records[0].run_id, "run-1");
}

TEST_F(ReviewStoreTest, ADecisionForAnotherCheckpointClaimsNothing) {
  EXPECT_EQ(store_->decide("t1", "cp-0", "i-1", "alice", "run-1", 5), 0u);
}

TEST_F(ReviewStoreTest, ReopeningGivesTheReviewBackForTheNextDecision) {
  store_->decide("t1", "cp-1", "i-1", "alice", "run-1", 5);
  store_->reopen("run-1");
  EXPECT_EQ(store_->list("t1")[0].status, "pending");
  EXPECT_EQ(store_->decide("t1", "cp-1", "i-1", "bob", "run-2", 6), 2u);
}

TEST_F(ReviewStoreTest, RecordsNoLongerPendingAreSuperseded) {
  store_->supersede_others("t1", "cp-2", {"i-2"});
  for (const ReviewRecord& r : store_->list("t1")) EXPECT_EQ(r.status, "superseded");
}

TEST_F(ReviewStoreTest, RecordsStillPendingAreKept) {
  store_->supersede_others("t1", "cp-1", {"i-1"});
  for (const ReviewRecord& r : store_->list("t1")) EXPECT_EQ(r.status, "pending");
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

}  // namespace
}  // namespace tollgate::server

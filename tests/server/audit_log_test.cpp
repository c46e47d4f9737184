// The review audit log on a real SQLite file.
#include "server/audit_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace tollgate::server {
namespace {

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tollgate_audit_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    remove();
    log_ = std::make_unique<AuditLog>(path_.string());
  }
  void TearDown() override {
    log_.reset();
    remove();
  }
  void remove() {
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path_.string() + suffix);
  }
  std::int64_t append(const std::string& thread_id, const Json& decided = Json("yes")) {
    AuditEntry entry;
    entry.thread_id = thread_id;
    entry.run_id = "run-" + thread_id;
    entry.graph_id = "agent";
    entry.checkpoint_id = "cp-1";
    entry.shown = Json{{"task-1", {{{"id", "i-1"}, {"value", {{"question", "ok?"}}}}}}};
    entry.decided = decided;
    return log_->append(entry);
  }

  std::filesystem::path path_;
  std::unique_ptr<AuditLog> log_;
};

TEST_F(AuditLogTest, AppendedDecisionIsPendingWithWhatWasShownAndDecided) {
  const std::int64_t id = append("t1", Json{{"decisions", {{{"type", "approve"}}}}});
  auto entries = log_->list({});
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].id, id);
  EXPECT_EQ(entries[0].outcome, "pending");
  EXPECT_EQ(entries[0].shown["task-1"][0]["value"]["question"], "ok?");
  EXPECT_EQ(entries[0].decided["decisions"][0]["type"], "approve");
  EXPECT_EQ(entries[0].settled_at, 0);
  EXPECT_GT(entries[0].received_at, 0);
}

TEST_F(AuditLogTest, SettleWritesTheOutcomeOnce) {
  const std::int64_t id = append("t1");
  log_->settle(id, "refused", "Decision type 'respond' is not allowed");
  log_->settle(id, "applied");
  auto entries = log_->list({});
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].outcome, "refused");
  EXPECT_EQ(entries[0].message, "Decision type 'respond' is not allowed");
  EXPECT_GT(entries[0].settled_at, 0);
}

TEST_F(AuditLogTest, ListsNewestFirstFilteredByThreadAndPaged) {
  const std::int64_t a = append("t1");
  const std::int64_t b = append("t2");
  const std::int64_t c = append("t1");
  auto all = log_->list({});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, c);
  EXPECT_EQ(all[2].id, a);

  AuditQuery by_thread;
  by_thread.thread_id = "t1";
  auto t1 = log_->list(by_thread);
  ASSERT_EQ(t1.size(), 2u);
  EXPECT_EQ(t1[0].id, c);
  EXPECT_EQ(t1[1].id, a);

  AuditQuery page;
  page.before_id = c;
  page.limit = 1;
  auto older = log_->list(page);
  ASSERT_EQ(older.size(), 1u);
  EXPECT_EQ(older[0].id, b);
}

TEST_F(AuditLogTest, EntriesSurviveReopening) {
  const std::int64_t id = append("t1");
  log_->settle(id, "applied");
  log_ = std::make_unique<AuditLog>(path_.string());
  auto entries = log_->list({});
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].outcome, "applied");
}

TEST_F(AuditLogTest, PendingEntriesAreMarkedLostAtStartUpAndSettledOnesKept) {
  const std::int64_t settled = append("t1");
  log_->settle(settled, "applied");
  const std::int64_t pending = append("t2");
  log_ = std::make_unique<AuditLog>(path_.string());
  EXPECT_EQ(log_->settle_lost("the server stopped"), 1u);
  for (const AuditEntry& e : log_->list({})) {
    if (e.id == pending) {
      EXPECT_EQ(e.outcome, "lost");
      EXPECT_EQ(e.message, "the server stopped");
    } else {
      EXPECT_EQ(e.outcome, "applied");
    }
  }
}

TEST_F(AuditLogTest, JsonNamesEveryFieldWithIsoTimesAndNullsForEmptyText) {
  append("t1");
  Json j = log_->list({})[0].to_json();
  EXPECT_TRUE(j["received_at"].get<std::string>().find('T') != std::string::npos);
  EXPECT_TRUE(j["reviewer"].is_null());
  EXPECT_TRUE(j["message"].is_null());
  EXPECT_TRUE(j["settled_at"].is_null());
  EXPECT_EQ(j["outcome"], "pending");
  EXPECT_EQ(j["checkpoint_id"], "cp-1");
  EXPECT_EQ(j["graph_id"], "agent");
}

}  // namespace
}  // namespace tollgate::server

// Decisions through the run manager with identities built here: who may decide, and one
// decision per review.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "server/audit_log.h"
#include "server/run_manager.h"
#include "server/sql_review_store.h"
#include "server/sql_store.h"
#include "server/thread_streams.h"
#include "sql/sqlite_connection.h"
#include "tollgate/error.h"
#include "tollgate/memory_saver.h"

namespace tollgate::server {
namespace {

// One write_file call reviewed by alice only, then "written" once approved.
std::shared_ptr<const CompiledGraph> reviewed_by_alice() {
  StateGraph g;
  g.add_node("review", [](const State&, Runtime& rt) -> NodeResult {
    Json answer = rt.interrupt(Json{
        {"action_requests", {{{"name", "write_file"}, {"args", {{"path", "a.txt"}}}}}},
        {"review_configs",
         {{{"action_name", "write_file"},
           {"allowed_decisions", {"approve", "reject"}},
           {"reviewers", {"user:alice"}}}}}});
    return Json{{"decision", answer}};
  });
  g.add_edge(START, "review").add_edge("review", END);
  CompileOptions options;
  options.checkpointer = make_memory_saver();
  options.name = "gate";
  return g.compile(options);
}

Identity user(const std::string& id) {
  return Identity{id, "", {"user"}, true};
}

class ReviewDecisionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tollgate_decisions_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    remove();
    store_ = std::make_unique<SqliteStore>(path_.string());
    streams_ = std::make_unique<ThreadStreams>(*store_);
    reviews_ = std::make_unique<SqliteReviewStore>(path_.string());
    audit_ = std::make_unique<AuditLog>(path_.string());
    AssistantRecord assistant;
    assistant.assistant_id = "assistant-1";
    assistant.graph_id = "gate";
    store_->put_assistant(assistant);
    ThreadRecord thread;
    thread.thread_id = "thread-1";
    thread.metadata = Json{{"owner", "olga"}};
    store_->create_thread(thread);
    runs_ = std::make_unique<RunManager>(*store_, *streams_, GraphMap{{"gate", reviewed_by_alice()}}, 1);
    runs_->set_audit_log(audit_.get());
    runs_->set_review_store(reviews_.get());
    runs_->start();
    finish(submit(std::nullopt, Identity::local()));
  }
  void TearDown() override {
    runs_.reset();
    audit_.reset();
    reviews_.reset();
    streams_.reset();
    store_.reset();
    remove();
  }
  void remove() {
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path_.string() + suffix);
  }

  // A run on the thread: a new input (no command) or a decision; `delay_seconds` holds it.
  RunRecord submit(std::optional<Json> command, const Identity& who,
                   const std::string& strategy = "reject", double delay_seconds = 0) {
    RunRequest request;
    request.thread_id = "thread-1";
    request.assistant_id = "assistant-1";
    request.input = command ? Json() : Json::object();
    request.command = std::move(command);
    request.set_actors(who, {});
    request.multitask_strategy = strategy;
    request.after_seconds = delay_seconds;
    return runs_->submit(request);
  }
  static Json approve() { return Json{{"resume", {{"decisions", {{{"type", "approve"}}}}}}}; }
  // The run's result once it ended.
  Json finish(const RunRecord& run) {
    for (;;) {
      if (auto result = runs_->result(run.run_id)) return Json::parse(*result);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  std::filesystem::path path_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<ThreadStreams> streams_;
  std::unique_ptr<SqliteReviewStore> reviews_;
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<RunManager> runs_;
};

TEST_F(ReviewDecisionsTest, APausedRunLeavesAPendingReviewRecord) {
  auto records = reviews_->list("thread-1");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].status, ReviewStatus::kPending);
  EXPECT_EQ(store_->get_thread("thread-1")->status, ThreadStatus::kInterrupted);
}

// A thread paused before review records were kept (or whose records were not written at its
// pause) gets its records at the decision, claimed by it like any other.
TEST_F(ReviewDecisionsTest, ADecisionOnAPauseWithoutReviewRecordsRecordsAndClaimsThem) {
  sql::SqliteConnection(path_.string(),
                        sql::SqliteFileOptions{std::chrono::milliseconds(10000), true})
      .exec("DELETE FROM server_reviews");
  ASSERT_TRUE(reviews_->list("thread-1").empty());
  EXPECT_EQ(finish(submit(approve(), user("alice")))["decision"]["decisions"][0]["type"],
            "approve");
  auto records = reviews_->list("thread-1");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].status, ReviewStatus::kDecided);
  EXPECT_EQ(records[0].decided_by, "alice");
}

TEST_F(ReviewDecisionsTest, ADecisionBySomeoneTheRulesDoNotAllowIs403NamingTheRule) {
  try {
    submit(approve(), user("bob"));
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kPermissionDenied);
    EXPECT_NE(std::string(e.what()).find("rule reviewers [\"user:alice\"]"), std::string::npos)
        << e.what();
  }
}

TEST_F(ReviewDecisionsTest, ARefusedReviewerLeavesTheThreadPausedAndAnswerable) {
  EXPECT_THROW(submit(approve(), user("bob")), Error);
  EXPECT_EQ(store_->get_thread("thread-1")->status, ThreadStatus::kInterrupted);
  EXPECT_EQ(reviews_->list("thread-1")[0].status, ReviewStatus::kPending);
  EXPECT_EQ(finish(submit(approve(), user("alice")))["decision"]["decisions"][0]["type"],
            "approve");
  EXPECT_EQ(reviews_->list("thread-1")[0].decided_by, "alice");
}

TEST_F(ReviewDecisionsTest, TheRefusalIsAuditedWithTheIdentityThatTried) {
  EXPECT_THROW(submit(approve(), user("bob")), Error);
  const AuditEntry entry = audit_->list({})[0];
  EXPECT_EQ(entry.kind, "refusal");
  EXPECT_EQ(entry.reviewer, "bob");
  EXPECT_EQ(entry.outcome, "refused");
  EXPECT_NE(entry.message.find("rule reviewers"), std::string::npos);
  EXPECT_EQ(entry.shown.begin().value()[0]["value"]["action_requests"][0]["args"]["path"], "a.txt");
}

TEST_F(ReviewDecisionsTest, TheAcceptedDecisionIsAuditedWithItsReviewer) {
  finish(submit(approve(), user("alice")));
  const AuditEntry entry = audit_->list({})[0];
  EXPECT_EQ(entry.kind, "decision");
  EXPECT_EQ(entry.reviewer, "alice");
  EXPECT_EQ(entry.outcome, "applied");
}

TEST_F(ReviewDecisionsTest, ASecondDecisionForTheSameReviewIsRefusedWhenItArrives) {
  // The first is held, so the second surely arrives while the review is still pending.
  submit(approve(), user("alice"), "enqueue", 3600);
  try {
    submit(approve(), user("alice"), "enqueue");
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConflict);
    EXPECT_NE(std::string(e.what()).find("no longer pending"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store_->list_runs("thread-1").size(), 2u);  // the first run and the held approval
}

}  // namespace
}  // namespace tollgate::server

// Review deadlines through the run manager and the review timer, on a ManualClock: a review
// expires exactly once at its deadline into its on_timeout, as system:timeout; a decision
// racing it loses or wins whole; a deadline passed while the server was down fires on start.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include "server/audit_log.h"
#include "server/review_timer.h"
#include "server/run_manager.h"
#include "server/sql_review_store.h"
#include "server/sql_store.h"
#include "server/thread_streams.h"
#include "tollgate/error.h"
#include "tollgate/iso_time.h"
#include "tollgate/memory_saver.h"
#include "tollgate/review_timeout.h"

namespace tollgate::server {
namespace {

using std::chrono::seconds;

constexpr std::int64_t kTimeoutMillis = 60'000;

// A review of write_file (timed: 60 s from the pause by `clock`, answered by `on_timeout`)
// and, when `two_actions`, of notify (untimed) in the same interrupt.
std::shared_ptr<const CompiledGraph> timed_review(const Clock& clock, Json on_timeout,
                                                  bool two_actions) {
  StateGraph g;
  g.add_node("review", [&clock, on_timeout, two_actions](const State&, Runtime& rt) -> NodeResult {
    Json actions = {{{"name", "write_file"}, {"args", {{"path", "a.txt"}}}}};
    Json configs = {{{"action_name", "write_file"},
                     {"allowed_decisions", {"approve", "reject", "respond"}},
                     {"expires_at", iso_utc_millis(now_millis(clock) + kTimeoutMillis)},
                     {"on_timeout", on_timeout}}};
    if (two_actions) {
      actions.push_back({{"name", "notify"}, {"args", {{"who", "bob"}}}});
      configs.push_back({{"action_name", "notify"}, {"allowed_decisions", {"approve", "reject"}}});
    }
    Json answer = rt.interrupt(Json{{"action_requests", actions}, {"review_configs", configs}});
    return Json{{"decision", answer}};
  });
  g.add_edge(START, "review").add_edge("review", END);
  CompileOptions options;
  options.checkpointer = make_memory_saver();
  options.name = "gate";
  return g.compile(options);
}

Json reject_on_timeout() {
  return Json{{"type", "reject"}, {"message", std::string(kReviewTimeoutMessage)}};
}

class ReviewDeadlinesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tollgate_deadlines_" + std::to_string(::getpid()) + "_" +
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
  }
  void TearDown() override {
    stop();
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
  // Starts the manager and its timer (the timer's thread only when `timer_thread`), and pauses
  // the thread on the review unless it already is.
  void start(Json on_timeout = reject_on_timeout(), bool two_actions = false,
             bool timer_thread = false) {
    if (!graph_) graph_ = timed_review(clock_, std::move(on_timeout), two_actions);
    runs_ = std::make_unique<RunManager>(*store_, *streams_, GraphMap{{"gate", graph_}}, 1);
    runs_->set_audit_log(audit_.get());
    runs_->set_review_store(reviews_.get());
    runs_->set_clock(clock_);
    timer_ = std::make_unique<ReviewTimer>(
        *reviews_, clock_, [this](const ReviewRecord& due) { runs_->expire_review(due); });
    runs_->set_review_timer(timer_.get());
    runs_->set_expiry_listener([this](const ReviewExpiry& expiry) { expiries_.push_back(expiry); });
    runs_->start();
    if (timer_thread) timer_->start();
    if (reviews_->list("thread-1").empty()) finish(submit(std::nullopt, Identity::local()));
  }
  void stop() {
    // The timer's thread first, then the runs (whose workers re-arm the timer), then the timer.
    if (timer_) timer_->stop();
    runs_.reset();
    timer_.reset();
  }

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
  static Identity alice() { return Identity{"alice", "", {"reviewer"}, true}; }
  Json finish(const RunRecord& run) {
    for (;;) {
      if (auto result = runs_->result(run.run_id)) return Json::parse(*result);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  // The result of the thread's newest run once it ended.
  Json last_result() { return finish(store_->list_runs("thread-1").front()); }

  std::filesystem::path path_;
  ManualClock clock_{std::chrono::system_clock::now()};
  std::shared_ptr<const CompiledGraph> graph_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<ThreadStreams> streams_;
  std::unique_ptr<SqliteReviewStore> reviews_;
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<RunManager> runs_;
  std::unique_ptr<ReviewTimer> timer_;
  std::vector<ReviewExpiry> expiries_;
};

TEST_F(ReviewDeadlinesTest, ThePendingRecordKeepsTheDeadlineShownAndItsOnTimeout) {
  start();
  const ReviewRecord record = reviews_->list("thread-1")[0];
  EXPECT_EQ(record.expires_at, now_millis(clock_) + kTimeoutMillis);
  EXPECT_EQ(record.on_timeout, reject_on_timeout());
  EXPECT_EQ(reviews_->next_expiry(), record.expires_at);
}

TEST_F(ReviewDeadlinesTest, NothingExpiresBeforeTheDeadline) {
  start();
  clock_.advance(seconds(59));
  EXPECT_EQ(timer_->fire_due(), 0u);
  EXPECT_EQ(reviews_->list("thread-1")[0].status, ReviewStatus::kPending);
}

TEST_F(ReviewDeadlinesTest, AtTheDeadlineTheReviewExpiresExactlyOnce) {
  start();
  clock_.advance(seconds(60));
  EXPECT_EQ(timer_->fire_due(), 1u);
  EXPECT_EQ(last_result()["decision"], (Json{{"decisions", {reject_on_timeout()}}}));
  EXPECT_EQ(timer_->fire_due(), 0u);
  EXPECT_EQ(store_->list_runs("thread-1").size(), 2u);  // the first run and the expiry
  const ReviewRecord record = reviews_->list("thread-1")[0];
  EXPECT_EQ(record.status, ReviewStatus::kExpired);
  EXPECT_EQ(record.decided_by, "system:timeout");
  EXPECT_EQ(expiries_.size(), 1u);
}

TEST_F(ReviewDeadlinesTest, TheExpiryIsAuditedAsSystemTimeout) {
  start();
  clock_.advance(seconds(60));
  timer_->fire_due();
  last_result();
  const AuditEntry entry = audit_->list({})[0];
  EXPECT_EQ(entry.kind, "decision");
  EXPECT_EQ(entry.reviewer, "system:timeout");
  EXPECT_EQ(entry.outcome, "applied");
  // The resume as submitted: a map by interrupt id.
  ASSERT_EQ(entry.decided.size(), 1u);
  EXPECT_EQ(entry.decided.begin().value(), (Json{{"decisions", {reject_on_timeout()}}}));
}

TEST_F(ReviewDeadlinesTest, RespondOnTimeoutAnswersWithItsMessage) {
  const Json respond{{"type", "respond"}, {"message", "Nobody was there; try tomorrow."}};
  start(respond);
  clock_.advance(seconds(61));
  timer_->fire_due();
  EXPECT_EQ(last_result()["decision"], (Json{{"decisions", {respond}}}));
}

TEST_F(ReviewDeadlinesTest, TheOtherActionsOfTheInterruptAreRejectedNeverApproved) {
  const Json respond{{"type", "respond"}, {"message", "Later."}};
  start(respond, /*two_actions=*/true);
  clock_.advance(seconds(60));
  timer_->fire_due();
  EXPECT_EQ(last_result()["decision"], (Json{{"decisions", {respond, reject_on_timeout()}}}));
}

TEST_F(ReviewDeadlinesTest, ADecisionAfterTheExpiryIsRefusedWith409) {
  start();
  clock_.advance(seconds(60));
  timer_->fire_due();
  // While the run applying the expiry waits for the worker, the decision is refused at once;
  // once that run holds the thread, the decision waits behind it (enqueue) and is refused as it
  // executes. Which of the two depends on the worker; neither applies the decision.
  try {
    const Json late = finish(submit(approve(), alice(), "enqueue"));
    EXPECT_TRUE(late.contains("__error__")) << late.dump();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConflict);
    EXPECT_NE(std::string(e.what()).find("no longer pending"), std::string::npos) << e.what();
  }
  const std::vector<ReviewRecord> records = reviews_->list("thread-1");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].status, ReviewStatus::kExpired);
  EXPECT_EQ(records[0].decided_by, "system:timeout");
}

TEST_F(ReviewDeadlinesTest, ADecisionAcceptedBeforeTheDeadlineLeavesNothingToExpire) {
  start();
  submit(approve(), alice(), "enqueue", 3600);  // accepted (claimed), held
  clock_.advance(seconds(120));
  EXPECT_EQ(timer_->fire_due(), 0u);
  EXPECT_EQ(reviews_->list("thread-1")[0].decided_by, "alice");
  EXPECT_TRUE(expiries_.empty());
}

TEST_F(ReviewDeadlinesTest, ADecisionRacingTheTimerWinsOrLosesWhole) {
  start();
  clock_.advance(seconds(60));
  std::size_t fired = 0;
  std::thread timer([&] { fired = timer_->fire_due(); });
  bool decided = false;
  std::optional<RunRecord> late;
  try {
    late = submit(approve(), alice(), "enqueue");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConflict) << e.what();
  }
  timer.join();
  // A decision sent while the run applying the expiry holds the thread waits behind it
  // (enqueue) and is refused as it executes: accepted means its run did not fail.
  if (late) decided = !finish(*late).contains("__error__");
  EXPECT_NE(decided, fired == 1u);  // exactly one of them was accepted
  const ReviewRecord record = reviews_->list("thread-1")[0];
  EXPECT_EQ(record.decided_by, decided ? "alice" : "system:timeout");
  EXPECT_EQ(record.status, decided ? ReviewStatus::kDecided : ReviewStatus::kExpired);
}

TEST_F(ReviewDeadlinesTest, TheThreadShowsWhenEachReviewBeganAndWhenItExpires) {
  start();
  const ReviewRecord record = reviews_->list("thread-1")[0];
  const Json interrupts = store_->get_thread("thread-1")->interrupts;
  const Json& config = interrupts.begin().value()[0]["value"]["review_configs"][0];
  EXPECT_EQ(config["created_at"], iso_utc_millis(record.created_at));
  EXPECT_EQ(config["expires_at"], iso_utc_millis(record.expires_at));
}

TEST_F(ReviewDeadlinesTest, ADeadlinePassedWhileTheServerWasDownFiresWhenItStarts) {
  start();
  stop();  // the server is down
  clock_.advance(seconds(3600));
  start(reject_on_timeout(), false, /*timer_thread=*/true);
  // The timer's thread fires on its own; generous polling, no timing asserted.
  // The record turns expired when the expiry is accepted; the run applying it follows.
  for (int i = 0; i < 5000 && (reviews_->list("thread-1")[0].status == ReviewStatus::kPending ||
                               store_->list_runs("thread-1").size() < 2);
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(reviews_->list("thread-1")[0].status, ReviewStatus::kExpired);
  EXPECT_EQ(last_result()["decision"], (Json{{"decisions", {reject_on_timeout()}}}));
  timer_->stop();
  EXPECT_EQ(store_->list_runs("thread-1").size(), 2u);  // fired once
}

}  // namespace
}  // namespace tollgate::server

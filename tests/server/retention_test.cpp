// Retention on a real SQLite store: which events, threads and checkpoints a pass deletes, and
// what it never deletes (active threads, paused threads by TTL, each thread's newest event).
#include "server/retention.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "checkpoint/saver_test_util.h"
#include "server/sql_store.h"
#include "server/sql_webhook_queue.h"
#include "server/thread_streams.h"
#include "support/test_folder.h"
#include "tollgate/error.h"
#include "tollgate/memory_saver.h"

namespace tollgate::server {
namespace {

constexpr std::int64_t kLater = std::int64_t{1} << 50;  // after every test's writes

class RetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_unique<SqliteStore>((folder_.path() / "r.db").string());
    streams_ = std::make_unique<ThreadStreams>(*store_);
    runs_ = std::make_unique<RunManager>(*store_, *streams_, GraphMap{}, 1);
  }
  Retention retention(RetentionOptions options = {}) {
    return Retention(*store_, *runs_, saver_.get(), std::move(options));
  }

  void add_thread(const std::string& id, std::int64_t updated_at,
                  ThreadStatus status = ThreadStatus::kIdle) {
    ThreadRecord t;
    t.thread_id = id;
    t.created_at = t.updated_at = updated_at;
    t.status = status;
    ASSERT_TRUE(store_->create_thread(t));
  }
  void add_run(const std::string& run_id, const std::string& thread_id, RunStatus status,
               std::int64_t updated_at) {
    RunRecord r;
    r.run_id = run_id;
    r.thread_id = thread_id;
    r.assistant_id = "a";
    r.status = status;
    r.created_at = r.updated_at = updated_at;
    store_->put_run(r);
  }
  static LogEntry event(std::int64_t seq) {
    LogEntry e;
    e.seq = seq;
    e.event = "values";
    e.data = "{}";
    e.id = std::to_string(seq);
    return e;
  }
  // Three checkpoints on thread `id` in `saver`.
  static void put_checkpoints(Saver& saver, const std::string& id) {
    CheckpointConfig config{id, "", ""};
    for (int step = 0; step < 3; ++step) {
      Checkpoint checkpoint = testing::make_checkpoint(step, {{"n", step}}, {{"n", step + 1}});
      config = saver.put(config, checkpoint, Json{{"step", step}}, checkpoint.channel_versions);
    }
  }
  static std::size_t checkpoint_count(Saver& saver, const std::string& id) {
    ListQuery query;
    query.thread_id = id;
    return saver.list(query).size();
  }

  testing::TestFolder folder_{"retention"};
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<ThreadStreams> streams_;
  std::unique_ptr<RunManager> runs_;  // never started: it guards pruning against active runs
  std::shared_ptr<Saver> saver_ = make_memory_saver();
};

TEST_F(RetentionTest, PruneEventsDeletesTheEventsOfRunsThatEndedBeforeTheCutoff) {
  add_thread("t", 1);
  add_run("old", "t", RunStatus::kSuccess, 10);
  add_run("recent", "t", RunStatus::kSuccess, 1000);
  store_->append_run_event("old", event(1));
  store_->append_run_event("recent", event(1));
  store_->prune_events(500);
  EXPECT_TRUE(store_->run_events("old").empty());
  EXPECT_EQ(store_->run_events("recent").size(), 1u);
}

TEST_F(RetentionTest, PruneEventsKeepsTheEventsOfARunningRun) {
  add_thread("t", 1);
  add_run("live", "t", RunStatus::kRunning, 10);
  store_->append_run_event("live", event(1));
  store_->prune_events(kLater);
  EXPECT_EQ(store_->run_events("live").size(), 1u);
}

TEST_F(RetentionTest, PruneEventsKeepsEachThreadsNewestEventSoItsSequenceContinues) {
  add_thread("t", 1);
  for (int seq = 1; seq <= 3; ++seq) {
    store_->append_thread_event("t", event(seq));
    store_->flush_events();  // each stored by a write of its own
  }
  store_->prune_events(kLater);
  auto kept = store_->thread_events("t");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].seq, 3);
  ThreadStreams streams(*store_);
  EXPECT_EQ(streams.current_seq("t"), 3);
}

TEST_F(RetentionTest, PruneEventsLeavesTheThreadEventsOfABusyThread) {
  add_thread("t", 1);
  add_run("live", "t", RunStatus::kPending, 1);
  for (int seq = 1; seq <= 3; ++seq) store_->append_thread_event("t", event(seq));
  store_->prune_events(kLater);
  EXPECT_EQ(store_->thread_events("t").size(), 3u);
}

TEST_F(RetentionTest, ExpiredThreadsAreThoseWhoseTtlRanOutAndThatAreNotBusyOrPaused) {
  add_thread("expired", 100);
  add_thread("fresh", 100);
  add_thread("no_ttl", 100);
  add_thread("busy", 100);
  add_thread("paused", 100, ThreadStatus::kInterrupted);
  add_run("live", "busy", RunStatus::kRunning, 100);
  for (const char* id : {"expired", "busy", "paused"}) ASSERT_TRUE(store_->set_thread_ttl(id, 50));
  ASSERT_TRUE(store_->set_thread_ttl("fresh", 500));
  EXPECT_EQ(store_->expired_threads(200, 10), (std::vector<std::string>{"expired"}));
}

TEST_F(RetentionTest, SweepDeletesExpiredThreadsWithTheirCheckpoints) {
  add_thread("t", 100);
  put_checkpoints(*saver_, "t");
  store_->set_thread_ttl("t", 10);
  EXPECT_EQ(retention().sweep(1000).threads_deleted, 1u);
  EXPECT_FALSE(store_->get_thread("t"));
  EXPECT_EQ(checkpoint_count(*saver_, "t"), 0u);
}

TEST_F(RetentionTest, SweepKeepsOnlyTheLatestCheckpointOfIdleThreadsWhenAsked) {
  add_thread("idle", 100);
  add_thread("busy", 100);
  add_run("live", "busy", RunStatus::kRunning, 100);
  put_checkpoints(*saver_, "idle");
  put_checkpoints(*saver_, "busy");
  RetentionOptions options;
  options.latest_checkpoint_only = true;
  EXPECT_EQ(retention(options).sweep(1000).threads_pruned, 1u);
  EXPECT_EQ(checkpoint_count(*saver_, "idle"), 1u);
  EXPECT_EQ(saver_->get_tuple({"idle", "", ""})->checkpoint.channel_values.at("n")->get<int>(), 2);
  EXPECT_EQ(checkpoint_count(*saver_, "busy"), 3u);
}

TEST_F(RetentionTest, SweepKeepsEveryCheckpointByDefault) {
  add_thread("t", 100);
  put_checkpoints(*saver_, "t");
  retention().sweep(1000);
  EXPECT_EQ(checkpoint_count(*saver_, "t"), 3u);
}

TEST_F(RetentionTest, PruneSkipsUnknownThreadsAndThreadsWithAnActiveRun) {
  add_thread("idle", 100);
  add_thread("busy", 100);
  add_run("live", "busy", RunStatus::kRunning, 100);
  EXPECT_EQ(retention().prune({"idle", "busy", "unknown"}, PruneStrategy::kDelete), 1u);
  EXPECT_FALSE(store_->get_thread("idle"));
  EXPECT_TRUE(store_->get_thread("busy"));
}

TEST_F(RetentionTest, NotificationsOlderThanTheWebhooksWindowGoAndOnlyWithIt) {
  SqliteWebhookQueue queue((folder_.path() / "r.db").string());
  ASSERT_TRUE(queue.add(NotificationEvent{"old", "run.finished", 100, Json::object()}, {}));
  ASSERT_TRUE(queue.add(NotificationEvent{"new", "run.finished", 5000, Json::object()}, {}));
  RetentionOptions options;
  options.events = std::chrono::milliseconds(1);
  EXPECT_EQ(
      Retention(*store_, *runs_, nullptr, options, &queue).sweep(kLater).notifications_deleted, 0u);
  options.webhooks = std::chrono::milliseconds(1000);
  EXPECT_EQ(Retention(*store_, *runs_, nullptr, options, &queue).sweep(6000).notifications_deleted,
            1u);
  EXPECT_TRUE(queue.add(NotificationEvent{"old", "run.finished", 100, Json::object()}, {}));
  EXPECT_FALSE(queue.add(NotificationEvent{"new", "run.finished", 5000, Json::object()}, {}));
}

TEST(RetentionConfigTest, ParsesDurationsAndTheCheckpointChoice) {
  RetentionOptions options = parse_retention_options({{"events", "7d"},
                                                      {"checkpoints", "latest"},
                                                      {"thread_ttl", "90m"},
                                                      {"webhooks", "2d"},
                                                      {"interval", "30s"}});
  EXPECT_EQ(options.webhooks, std::chrono::hours(48));
  EXPECT_EQ(options.events, std::chrono::hours(24 * 7));
  EXPECT_TRUE(options.latest_checkpoint_only);
  EXPECT_EQ(options.thread_ttl, std::chrono::minutes(90));
  EXPECT_EQ(options.interval, std::chrono::seconds(30));
}

TEST(RetentionConfigTest, ABadFieldIsNamed) {
  try {
    parse_retention_options({{"events", "7 days"}});
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("retention.events"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_retention_options({{"checkpoints", 3}}), Error);
  EXPECT_THROW(parse_retention_options({{"keep", "1d"}}), Error);
}

}  // namespace
}  // namespace tollgate::server

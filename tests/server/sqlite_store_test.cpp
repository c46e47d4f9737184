#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <initializer_list>

#include "server/log_entry_testing.h"
#include "server/review_feed.h"
#include "server/run_request.h"
#include "server/sql_store.h"
#include "server/sql_store_rows.h"
#include "server/sql_webhook_queue.h"
#include "server/storage.h"
#include "server/store_backend.h"
#include "server/thread_streams.h"
#include "sql/connection_lock.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TOLLGATE_REQUIRE_STORE_BACKEND();
    store_ = std::make_unique<SqlStore>(db_.connect());
  }
  void TearDown() override { store_.reset(); }
  // Closes the store and runs each statement list on its database, as an older version left it.
  void rewrite_closed_database(std::initializer_list<const char*> statements) {
    store_.reset();
    for (const char* sql : statements) db_.exec(sql);
  }
  // Opens the store again on the rewritten database.
  void reopen() { store_ = std::make_unique<SqlStore>(db_.connect()); }
  testing::StoreBackend db_{"store"};
  std::unique_ptr<SqlStore> store_;
};

ThreadRecord thread(std::string id) {
  ThreadRecord t;
  t.thread_id = std::move(id);
  t.created_at = 1;
  t.updated_at = 1;
  t.metadata = {{"purpose", "test"}};
  return t;
}

RunRecord run_of(std::string id, std::string thread_id, RunStatus status) {
  RunRecord run;
  run.run_id = std::move(id);
  run.thread_id = std::move(thread_id);
  run.assistant_id = "a";
  run.status = status;
  return run;
}

LogEntry thread_event(std::int64_t seq, std::vector<std::string> ns = {}) {
  LogEntry e;
  e.seq = seq;
  e.event = "updates";
  e.data = R"({"seq":)" + std::to_string(seq) + R"(,"text":"a\nb \" | 1 2"})" + "\n 7 7\n";
  e.id = std::to_string(seq);
  e.channel = "updates";
  e.ns = std::move(ns);
  return e;
}

TEST_F(SqliteStoreTest, NewFileHasTheCurrentSchemaVersion) {
  EXPECT_EQ(store_->schema_version(), kServerSchemaVersion);
}

TEST_F(SqliteStoreTest, ReopeningKeepsDataAndVersion) {
  ASSERT_TRUE(store_->create_thread(thread("t1")));
  store_.reset();
  store_ = std::make_unique<SqlStore>(db_.connect());
  EXPECT_EQ(store_->schema_version(), kServerSchemaVersion);
  EXPECT_TRUE(store_->get_thread("t1").has_value());
}

TEST_F(SqliteStoreTest, NewerSchemaIsRefused) {
  store_.reset();
  db_.exec("UPDATE tollgate_schema SET version = 99 WHERE component = 'server_store'");
  try {
    SqlStore store(db_.connect());
    FAIL() << "opened a newer schema";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConflict);
  }
}

TEST_F(SqliteStoreTest, CreateThreadTwiceReturnsFalseAndKeepsTheFirst) {
  ASSERT_TRUE(store_->create_thread(thread("t1")));
  ThreadRecord other = thread("t1");
  other.metadata = {{"purpose", "other"}};
  EXPECT_FALSE(store_->create_thread(other));
  EXPECT_EQ(store_->get_thread("t1")->metadata["purpose"], "test");
}

TEST_F(SqliteStoreTest, UpdateThreadRoundTripsStatusValuesAndInterrupts) {
  store_->create_thread(thread("t1"));
  ThreadRecord t = *store_->get_thread("t1");
  EXPECT_TRUE(t.values.is_null());
  t.status = ThreadStatus::kInterrupted;
  t.values = {{"messages", Json::array()}};
  t.interrupts = {{"task", {{{"id", "abc"}, {"value", "q"}}}}};
  store_->update_thread(t);
  ThreadRecord read = *store_->get_thread("t1");
  EXPECT_EQ(read.status, ThreadStatus::kInterrupted);
  EXPECT_EQ(read.values, t.values);
  EXPECT_EQ(read.interrupts, t.interrupts);
}

TEST_F(SqliteStoreTest, DeleteThreadRemovesItsRunsAndEvents) {
  store_->create_thread(thread("t1"));
  RunRecord run;
  run.run_id = "r1";
  run.thread_id = "t1";
  run.assistant_id = "a";
  store_->put_run(run);
  LogEntry e;
  e.event = "metadata";
  e.data = "{}";
  store_->append_run_event("r1", e);
  store_->append_thread_event("t1", e);
  store_->delete_thread("t1");
  EXPECT_FALSE(store_->get_thread("t1"));
  EXPECT_FALSE(store_->get_run("r1"));
  EXPECT_TRUE(store_->run_events("r1").empty());
  EXPECT_TRUE(store_->thread_events("t1").empty());
}

TEST_F(SqliteStoreTest, RunsListNewestFirstAndByStatus) {
  for (int i = 0; i < 3; ++i) {
    RunRecord run =
        run_of("r" + std::to_string(i), "t1", i == 1 ? RunStatus::kRunning : RunStatus::kSuccess);
    run.created_at = i;
    store_->put_run(run);
  }
  auto runs = store_->list_runs("t1");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].run_id, "r2");
  auto running = store_->list_runs_with_status(RunStatus::kRunning);
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].run_id, "r1");
}

TEST_F(SqliteStoreTest, ActiveRunsAreListedThroughTheIndexThatHoldsOnlyThem) {
  // Schema 11: server_runs_active holds pending and running runs, by thread; a restart's
  // listing, a thread's count of them and the replicas' queries name its condition, so they are
  // served by it in each dialect.
  const RunStatus statuses[] = {RunStatus::kPending, RunStatus::kRunning, RunStatus::kSuccess,
                                RunStatus::kError,   RunStatus::kRunning, RunStatus::kInterrupted};
  for (int i = 0; i < 6; ++i) {
    RunRecord run = run_of("r" + std::to_string(i), "t1", statuses[i]);
    run.created_at = 10 - i;
    store_->put_run(run);
  }
  std::vector<std::string> running;
  for (const RunRecord& run : store_->list_runs_with_status(RunStatus::kRunning)) {
    running.push_back(run.run_id);
  }
  EXPECT_EQ(running, (std::vector<std::string>{"r4", "r1"}));  // oldest first
  ASSERT_EQ(store_->list_runs_with_status(RunStatus::kPending).size(), 1u);
  EXPECT_THROW(store_->list_runs_with_status(RunStatus::kSuccess), Error);
  const std::string plan =
      db_.plan("SELECT run_id FROM server_runs WHERE status IN ('pending', 'running')");
  EXPECT_NE(plan.find("server_runs_active"), std::string::npos) << plan;
  const std::string of_thread = db_.plan(
      "SELECT count(*) FROM server_runs WHERE thread_id = 't1' AND status = 'pending' AND "
      "status IN ('pending', 'running')");
  EXPECT_NE(of_thread.find("server_runs_active"), std::string::npos) << of_thread;
}

TEST_F(SqliteStoreTest, ARunsStatusIsIndexedOnceAndOnlyWhileItIsActive) {
  // Schema 11 dropped the index of every run's status by thread and the one of active runs by
  // status: a status change writes one index entry, and an ended run has none.
  const bool postgres = testing::StoreBackend::postgres();
  const std::string indexes = postgres
                                  ? "pg_indexes WHERE schemaname = current_schema() AND indexname"
                                  : "sqlite_schema WHERE type = 'index' AND name";
  EXPECT_EQ(db_.rows(indexes + " IN ('server_runs_by_status', 'server_runs_by_thread_status')"), 0);
  const std::string definition = postgres ? "indexdef" : "sql";
  EXPECT_EQ(db_.rows(indexes + " = 'server_runs_active' AND " + definition +
                     " LIKE '%(thread_id, status)%WHERE%status%pending%running%'"),
            1);
}

TEST_F(SqliteStoreTest, ARunsPageIsNewestFirstFromItsOffset) {
  for (int i = 0; i < 5; ++i) {
    RunRecord run = run_of("r" + std::to_string(i), "t1", RunStatus::kPending);
    run.created_at = i;
    store_->put_run(run);
  }
  auto ids = [](const std::vector<RunRecord>& runs) {
    std::vector<std::string> out;
    for (const RunRecord& run : runs) out.push_back(run.run_id);
    return out;
  };
  EXPECT_EQ(ids(store_->list_runs_page("t1", 2, 1)), (std::vector<std::string>{"r3", "r2"}));
  EXPECT_EQ(ids(store_->list_runs_page("t1", 2, 4)), (std::vector<std::string>{"r0"}));
  EXPECT_TRUE(store_->list_runs_page("t1", 2, 5).empty());
  // A limit past int64 (a client's ?limit=18446744073709551615) means every run.
  EXPECT_EQ(store_->list_runs_page("t1", SIZE_MAX, SIZE_MAX - 1).size(), 0u);
  EXPECT_EQ(store_->list_runs_page("t1", SIZE_MAX, 0).size(), 5u);
}

TEST_F(SqliteStoreTest, TheLatestRunStarterIsFoundPastAPageOfRunsThatNameNone) {
  // Runs stored before runs named their starter are passed over, a page at a time.
  for (int i = 0; i < 20; ++i) {
    RunRecord run = run_of("r" + std::to_string(100 + i), "t1", RunStatus::kPending);
    run.created_at = i;
    if (i == 2) run.kwargs["started_by"] = {{"id", "alice"}, {"roles", {"user"}}};
    store_->put_run(run);
  }
  EXPECT_EQ(latest_run_starter(*store_, "t1").id, "alice");
  EXPECT_TRUE(latest_run_starter(*store_, "t2").empty());
}

TEST_F(SqliteStoreTest, ARunStartersPageIsEachRunsStartedByObjectNewestFirst) {
  const Json alice = {{"id", "alice"},
                      {"name", "Alice \u00e9"},
                      {"roles", {"user", "reviewer"}},
                      {"authenticated", true}};
  const std::vector<Json> started_by = {
      alice, Json(), "bob", Json::array({"x"}), {{"id", "carol"}}};
  for (std::size_t i = 0; i < started_by.size(); ++i) {
    RunRecord run = run_of("r" + std::to_string(i), "t1", RunStatus::kSuccess);
    run.created_at = static_cast<std::int64_t>(i);
    if (!started_by[i].is_null()) run.kwargs["started_by"] = started_by[i];
    store_->put_run(run);
  }
  // Only objects are taken; the page is as list_runs_page's.
  EXPECT_EQ(store_->run_starters_page("t1", 10, 0),
            (std::vector<Json>{{{"id", "carol"}}, Json(), Json(), Json(), alice}));
  EXPECT_EQ(store_->run_starters_page("t1", 2, 3), (std::vector<Json>{Json(), alice}));
  EXPECT_TRUE(store_->run_starters_page("t1", 2, 5).empty());
  EXPECT_TRUE(store_->run_starters_page("t2", 2, 0).empty());
  // The same as the default, which reads the runs whole.
  EXPECT_EQ(store_->run_starters_page("t1", SIZE_MAX, 0),
            store_->ServerStore::run_starters_page("t1", SIZE_MAX, 0));
}

TEST_F(SqliteStoreTest, AThreadsHeadIsTheThreadWithoutItsValues) {
  ThreadRecord t = thread("t1");
  t.status = ThreadStatus::kInterrupted;
  t.values = {{"messages", Json::array({"hi"})}};
  t.interrupts = {{"task", Json::array({{{"id", "i1"}, {"value", 1}}})}};
  t.config = {{"configurable", {{"k", 1}}}};
  ASSERT_TRUE(store_->create_thread(t));
  store_->update_thread(t);
  const std::optional<ThreadRecord> head = store_->get_thread_head("t1");
  ASSERT_TRUE(head.has_value());
  EXPECT_TRUE(head->values.is_null());
  EXPECT_EQ(head->interrupts, t.interrupts);
  EXPECT_EQ(head->metadata, t.metadata);
  EXPECT_EQ(head->config, t.config);
  EXPECT_EQ(head->status, ThreadStatus::kInterrupted);
  EXPECT_EQ(store_->get_thread("t1")->values, t.values);
  EXPECT_FALSE(store_->get_thread_head("t2").has_value());
}

TEST_F(SqliteStoreTest, ThreadEventsKeepChannelAndNamespace) {
  LogEntry e;
  e.seq = 7;
  e.event = "lifecycle";
  e.data = R"({"seq":7})";
  e.id = "synth:r:7";
  e.channel = "lifecycle";
  e.ns = {"child:1"};
  store_->append_thread_event("t1", e);
  auto events = store_->thread_events("t1");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].seq, 7);
  EXPECT_EQ(events[0].id, "synth:r:7");
  EXPECT_EQ(events[0].ns, std::vector<std::string>{"child:1"});
}

TEST_F(SqliteStoreTest, AppendingAnEventDoesNotWaitForTheConnection) {
  if (testing::StoreBackend::postgres()) GTEST_SKIP() << "one shared SQLite connection";
  store_.reset();
  SqliteStore store(db_.path());
  // Another part of the process holds the file's one connection (a commit in progress).
  sql::SharedConnection other = sql::shared_sqlite_file(db_.path(), sql::SqliteSync::kFull,
                                                        std::chrono::milliseconds(10000));
  std::unique_lock held(other.lock);
  LogEntry e;
  e.seq = 1;
  e.event = "values";
  e.data = "{}";
  auto appended = std::async(std::launch::async, [&] {
    store.append_thread_event("t1", e);
    store.append_run_event("r1", e);
  });
  // Waits without bound when appending takes the connection's lock.
  EXPECT_EQ(appended.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  held.unlock();
  appended.wait();
  EXPECT_EQ(store.thread_events("t1").size(), 1u);
  EXPECT_EQ(store.run_events("r1").size(), 1u);
}

TEST_F(SqliteStoreTest, AssistantsRoundTrip) {
  AssistantRecord a;
  a.assistant_id = "a1";
  a.graph_id = "hitl";
  a.name = "hitl";
  a.metadata = {{"created_by", "system"}};
  store_->put_assistant(a);
  auto read = store_->get_assistant("a1");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->graph_id, "hitl");
  EXPECT_FALSE(read->description);
  EXPECT_EQ(store_->list_assistants().size(), 1u);
}

TEST_F(SqliteStoreTest, AssistantReadsSeeTheLatestPutAndDelete) {
  EXPECT_FALSE(store_->get_assistant("a1"));
  AssistantRecord a;
  a.assistant_id = "a1";
  a.graph_id = "hitl";
  a.name = "first";
  store_->put_assistant(a);
  ASSERT_TRUE(store_->get_assistant("a1"));
  a.name = "second";
  store_->put_assistant(a);
  EXPECT_EQ(store_->get_assistant("a1")->name, "second");
  store_->delete_assistant("a1");
  EXPECT_FALSE(store_->get_assistant("a1"));
}

TEST_F(SqliteStoreTest, ThreadReadsBusyWhileOneOfItsRunsIsPendingOrRunning) {
  store_->create_thread(thread("t1"));
  ASSERT_TRUE(store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object()));
  EXPECT_EQ(store_->get_thread("t1")->status, ThreadStatus::kBusy);
  store_->begin_attempt("r1", RunStatus::kRunning, 2);
  EXPECT_EQ(store_->list_threads()[0].status, ThreadStatus::kBusy);
  ThreadOutcome outcome;
  outcome.status = ThreadStatus::kInterrupted;
  store_->end_run(run_of("r1", "t1", RunStatus::kSuccess), true, &outcome);
  EXPECT_EQ(store_->get_thread("t1")->status, ThreadStatus::kInterrupted);
}

TEST_F(SqliteStoreTest, ARunsInsertAndEndCountTheThreadsActiveRunsInTheirUpdate) {
  store_->create_thread(thread("t1"));
  auto active_runs_are = [&](int n) {
    return db_.rows("server_threads WHERE thread_id = 't1' AND active_runs = " + std::to_string(n));
  };
  ASSERT_TRUE(store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object()));
  ASSERT_TRUE(store_->insert_run(run_of("r2", "t1", RunStatus::kPending), Json::object()));
  EXPECT_EQ(active_runs_are(2), 1);
  // A run's end with the thread's outcome counts the other run still pending: busy.
  ThreadOutcome outcome;
  outcome.status = ThreadStatus::kIdle;
  ASSERT_TRUE(store_->end_run(run_of("r1", "t1", RunStatus::kSuccess), true, &outcome));
  EXPECT_EQ(active_runs_are(1), 1);
  EXPECT_EQ(store_->get_thread("t1")->status, ThreadStatus::kBusy);
  // A count the store's stored value got wrong is set right by the next write that counts.
  db_.exec("UPDATE server_threads SET active_runs = 7 WHERE thread_id = 't1'");
  ASSERT_TRUE(store_->end_run(run_of("r2", "t1", RunStatus::kSuccess), true, &outcome));
  EXPECT_EQ(active_runs_are(0), 1);
  EXPECT_EQ(store_->get_thread("t1")->status, ThreadStatus::kIdle);
}

TEST_F(SqliteStoreTest, ThreadValuesWithBytesThatAreNotUtf8AreStoredReplaced) {
  // A tool may hand back any bytes; the run still ends, its text stored as it is streamed.
  store_->create_thread(thread("t1"));
  ASSERT_TRUE(store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object()));
  ThreadOutcome outcome;
  outcome.status = ThreadStatus::kIdle;
  outcome.values = Json{{"out", "ok \xFF\xFE end"}};
  ASSERT_TRUE(store_->end_run(run_of("r1", "t1", RunStatus::kSuccess), true, &outcome));
  EXPECT_EQ(store_->get_thread("t1")->values["out"], "ok \xEF\xBF\xBD\xEF\xBF\xBD end");
}

// A thread made or rewritten with such values (a copy, a state update) stores them the same way.
TEST_F(SqliteStoreTest, AThreadWrittenWithBytesThatAreNotUtf8StoresThemReplaced) {
  ThreadRecord t = thread("t1");
  t.values = Json{{"out", "made \xFF end"}};
  ASSERT_TRUE(store_->create_thread(t));
  EXPECT_EQ(store_->get_thread("t1")->values["out"], "made \xEF\xBF\xBD end");
  t.values = Json{{"out", "updated \xFE end"}};
  store_->update_thread(t);
  EXPECT_EQ(store_->get_thread("t1")->values["out"], "updated \xEF\xBF\xBD end");
}

TEST_F(SqliteStoreTest, InsertRunMergesTheThreadMetadataAndRefusesAGoneThread) {
  store_->create_thread(thread("t1"));
  EXPECT_TRUE(store_->insert_run(run_of("r1", "t1", RunStatus::kPending), {{"graph_id", "hitl"}}));
  auto t = *store_->get_thread("t1");
  EXPECT_EQ(t.metadata["graph_id"], "hitl");
  EXPECT_EQ(t.metadata["purpose"], "test");
  EXPECT_FALSE(store_->insert_run(run_of("r2", "gone", RunStatus::kPending), Json::object()));
  EXPECT_FALSE(store_->get_run("r2"));
}

TEST_F(SqliteStoreTest, BeginAttemptCountsAndSetsTheStatus) {
  store_->create_thread(thread("t1"));
  store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object());
  EXPECT_EQ(store_->begin_attempt("r1", RunStatus::kRunning, 5), 1);
  EXPECT_EQ(store_->begin_attempt("r1", RunStatus::kRunning, 6), 2);
  auto again = store_->get_run("r1");
  EXPECT_EQ(again->attempts, 2);
  EXPECT_EQ(again->status, RunStatus::kRunning);
  EXPECT_EQ(again->updated_at, 6);
  EXPECT_FALSE(store_->begin_attempt("nope", RunStatus::kRunning, 7));
}

TEST_F(SqliteStoreTest, EndRunWritesTheRunAndTheThreadsOutcomeTogether) {
  store_->create_thread(thread("t1"));
  store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object());
  ThreadOutcome outcome;
  outcome.status = ThreadStatus::kError;
  outcome.error = "boom";
  outcome.values = {{"x", 1}};
  outcome.interrupts = Json::object();
  outcome.updated_at = 9;
  EXPECT_TRUE(store_->end_run(run_of("r1", "t1", RunStatus::kError), true, &outcome));
  auto t = *store_->get_thread("t1");
  EXPECT_EQ(t.status, ThreadStatus::kError);
  EXPECT_EQ(t.error, "boom");
  EXPECT_EQ(t.values, Json({{"x", 1}}));
  EXPECT_EQ(t.updated_at, 9);
  EXPECT_EQ(store_->get_run("r1")->status, RunStatus::kError);
}

TEST_F(SqliteStoreTest, EndRunWithoutAnOutcomeLeavesTheThreadAndMayDeleteTheRun) {
  ThreadRecord t = thread("t1");
  t.status = ThreadStatus::kInterrupted;
  t.values = {{"x", 1}};
  store_->create_thread(t);
  store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object());
  EXPECT_TRUE(store_->end_run(run_of("r1", "t1", RunStatus::kError), false, nullptr));
  EXPECT_FALSE(store_->get_run("r1"));
  auto read = *store_->get_thread("t1");
  EXPECT_EQ(read.status, ThreadStatus::kInterrupted);
  EXPECT_EQ(read.values, Json({{"x", 1}}));
}

TEST_F(SqliteStoreTest, EndRunStoresTheStatusAttemptsAndTimeItEndedWith) {
  store_->create_thread(thread("t1"));
  RunRecord run = run_of("r1", "t1", RunStatus::kPending);
  run.kwargs = {{"input", {{"x", 1}}}};
  run.metadata = {{"graph_id", "hitl"}};
  run.created_at = 3;
  run.updated_at = 3;
  store_->insert_run(run, Json::object());
  store_->begin_attempt("r1", RunStatus::kRunning, 4);
  run.status = RunStatus::kSuccess;
  run.attempts = 1;
  run.updated_at = 8;
  ASSERT_TRUE(store_->end_run(run, true, nullptr));
  const RunRecord stored = *store_->get_run("r1");
  EXPECT_EQ(stored.status, RunStatus::kSuccess);
  EXPECT_EQ(stored.attempts, 1);
  EXPECT_EQ(stored.updated_at, 8);
  EXPECT_EQ(stored.created_at, 3);
  EXPECT_EQ(stored.kwargs, run.kwargs);
  EXPECT_EQ(stored.metadata, run.metadata);
  EXPECT_NE(store_->get_thread("t1")->status, ThreadStatus::kBusy);
}

TEST_F(SqliteStoreTest, EndRunOfARunWhoseRowIsGoneWritesItWhole) {
  store_->create_thread(thread("t1"));
  RunRecord run = run_of("r1", "t1", RunStatus::kSuccess);
  run.kwargs = {{"input", {{"x", 1}}}};
  ThreadOutcome outcome;
  outcome.status = ThreadStatus::kIdle;
  ASSERT_TRUE(store_->end_run(run, true, &outcome));
  const RunRecord stored = *store_->get_run("r1");
  EXPECT_EQ(stored.status, RunStatus::kSuccess);
  EXPECT_EQ(stored.kwargs, run.kwargs);
  EXPECT_EQ(store_->get_thread("t1")->status, ThreadStatus::kIdle);
}

TEST_F(SqliteStoreTest, EndRunOfAGoneThreadWritesNothing) {
  ThreadOutcome outcome;
  EXPECT_FALSE(store_->end_run(run_of("r1", "gone", RunStatus::kSuccess), true, &outcome));
  EXPECT_FALSE(store_->get_run("r1"));
}

QueuedNotification notice_of(std::string event_id) {
  QueuedNotification n;
  n.event.id = std::move(event_id);
  n.event.type = "run.finished";
  n.event.created_at = 5;
  n.urls = {"http://127.0.0.1:9/hook"};
  return n;
}

TEST_F(SqliteStoreTest, EndRunStoresItsNotificationsWithItOnce) {
  SqlWebhookQueue queue(db_.connect());  // the webhook tables, in the store's database
  store_->create_thread(thread("t1"));
  store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object());
  std::vector<QueuedNotification> notices = {notice_of("e1")};
  ASSERT_TRUE(store_->end_run(run_of("r1", "t1", RunStatus::kSuccess), true, nullptr, &notices));
  EXPECT_TRUE(notices[0].fresh);
  std::vector<WebhookDelivery> queued = queue.list(std::nullopt, 10);
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued[0].event_id, "e1");
  EXPECT_EQ(queued[0].url, "http://127.0.0.1:9/hook");
  // The same fact told again (an end stored twice): nothing new.
  ASSERT_TRUE(store_->end_run(run_of("r1", "t1", RunStatus::kSuccess), true, nullptr, &notices));
  EXPECT_FALSE(notices[0].fresh);
  EXPECT_EQ(queue.list(std::nullopt, 10).size(), 1u);
}

// A run whose replica was taken for dead and whose run another replica adopted: the first
// one's end of it is not stored; the adopter's is.
TEST_F(SqliteStoreTest, ARunsEndIsStoredOnlyByItsOwner) {
  store_->create_thread(thread("t1"));
  RunRecord run = run_of("r1", "t1", RunStatus::kRunning);
  run.owner = "replica-a";
  ASSERT_TRUE(store_->insert_run(run, Json::object()));
  db_.exec("UPDATE server_runs SET owner = 'replica-b' WHERE run_id = 'r1'");  // adopted
  run.status = RunStatus::kSuccess;
  ASSERT_TRUE(store_->end_run(run, true, nullptr, nullptr));
  EXPECT_EQ(store_->get_run("r1")->status, RunStatus::kRunning);
  run.owner = "replica-b";
  ASSERT_TRUE(store_->end_run(run, true, nullptr, nullptr));
  EXPECT_EQ(store_->get_run("r1")->status, RunStatus::kSuccess);
  // A run its owner ends that is not stored (any more) is written whole, as it ended.
  RunRecord gone = run_of("r2", "t1", RunStatus::kError);
  gone.owner = "replica-a";
  ASSERT_TRUE(store_->end_run(gone, true, nullptr, nullptr));
  ASSERT_TRUE(store_->get_run("r2"));
  EXPECT_EQ(store_->get_run("r2")->status, RunStatus::kError);
  EXPECT_EQ(store_->get_run("r2")->owner, "replica-a");
}

// A pending run of `owner`, due at `not_before`, on thread `thread_id`.
RunRecord owned_run(std::string id, std::string thread_id, std::string owner,
                    std::int64_t created_at, std::int64_t not_before = 0) {
  RunRecord run = run_of(std::move(id), std::move(thread_id), RunStatus::kPending);
  run.owner = std::move(owner);
  run.created_at = created_at;
  run.updated_at = created_at;
  run.not_before = not_before;
  return run;
}

TEST_F(SqliteStoreTest, AClaimTakesUpItsOwnersDueRunAndTheThreadsRollbackPoint) {
  store_->create_thread(thread("t1"));
  ASSERT_TRUE(store_->insert_run(owned_run("r1", "t1", "replica-a", 10), Json::object()));
  db_.exec("UPDATE server_threads SET rollback_to = 'cp-3' WHERE thread_id = 't1'");
  ClaimedRun claimed;
  ASSERT_EQ(store_->claim_run("r1", "t1", "replica-a", 20, claimed), ClaimOutcome::kClaimed);
  EXPECT_EQ(claimed.record.status, RunStatus::kRunning);
  EXPECT_EQ(claimed.record.attempts, 1);
  EXPECT_EQ(claimed.record.updated_at, 20);
  EXPECT_EQ(claimed.rollback_to, "cp-3");
  EXPECT_EQ(store_->get_run("r1")->status, RunStatus::kRunning);
  // The rollback point is taken: a later claim of the thread starts from its latest checkpoint.
  ASSERT_TRUE(store_->insert_run(owned_run("r2", "t1", "replica-a", 30), Json::object()));
  ASSERT_TRUE(store_->end_run(run_of("r1", "t1", RunStatus::kSuccess), true, nullptr, nullptr));
  ClaimedRun next;
  ASSERT_EQ(store_->claim_run("r2", "t1", "replica-a", 40, next), ClaimOutcome::kClaimed);
  EXPECT_EQ(next.rollback_to, "");
}

TEST_F(SqliteStoreTest, AClaimWaitsForItsDueTimeAndForTheThreadsOlderRuns) {
  store_->create_thread(thread("t1"));
  ASSERT_TRUE(store_->insert_run(owned_run("r1", "t1", "replica-a", 10, 100), Json::object()));
  ASSERT_TRUE(store_->insert_run(owned_run("r2", "t1", "replica-a", 20), Json::object()));
  ClaimedRun claimed;
  EXPECT_EQ(store_->claim_run("r1", "t1", "replica-a", 50, claimed), ClaimOutcome::kWaiting);
  EXPECT_EQ(store_->claim_run("r2", "t1", "replica-a", 50, claimed), ClaimOutcome::kWaiting);
  EXPECT_EQ(store_->get_run("r1")->status, RunStatus::kPending);
  EXPECT_EQ(store_->get_run("r2")->status, RunStatus::kPending);
  ASSERT_EQ(store_->claim_run("r1", "t1", "replica-a", 100, claimed), ClaimOutcome::kClaimed);
  // The older run is running: the younger waits until it ended.
  EXPECT_EQ(store_->claim_run("r2", "t1", "replica-a", 110, claimed), ClaimOutcome::kWaiting);
  ASSERT_TRUE(store_->end_run(run_of("r1", "t1", RunStatus::kSuccess), true, nullptr, nullptr));
  EXPECT_EQ(store_->claim_run("r2", "t1", "replica-a", 120, claimed), ClaimOutcome::kClaimed);
}

TEST_F(SqliteStoreTest, AClaimOfARunNoLongerPendingHereFindsItGone) {
  store_->create_thread(thread("t1"));
  store_->create_thread(thread("t2"));
  ASSERT_TRUE(store_->insert_run(owned_run("r1", "t1", "replica-b", 10), Json::object()));
  ASSERT_TRUE(store_->insert_run(owned_run("r2", "t2", "replica-a", 10), Json::object()));
  ClaimedRun claimed;
  // Another replica's (adopted), even when first and due.
  EXPECT_EQ(store_->claim_run("r1", "t1", "replica-a", 20, claimed), ClaimOutcome::kGone);
  EXPECT_EQ(store_->get_run("r1")->status, RunStatus::kPending);
  // Taken up already.
  ASSERT_EQ(store_->claim_run("r2", "t2", "replica-a", 20, claimed), ClaimOutcome::kClaimed);
  EXPECT_EQ(store_->claim_run("r2", "t2", "replica-a", 30, claimed), ClaimOutcome::kGone);
  EXPECT_EQ(store_->get_run("r2")->attempts, 1);
  // Another replica's that is not due yet.
  store_->create_thread(thread("t3"));
  ASSERT_TRUE(store_->insert_run(owned_run("r3", "t3", "replica-b", 10, 100), Json::object()));
  EXPECT_EQ(store_->claim_run("r3", "t3", "replica-a", 20, claimed), ClaimOutcome::kGone);
  // Deleted with its thread; never stored.
  store_->delete_thread("t1");
  EXPECT_EQ(store_->claim_run("r1", "t1", "replica-b", 40, claimed), ClaimOutcome::kGone);
  EXPECT_EQ(store_->claim_run("r9", "t2", "replica-a", 40, claimed), ClaimOutcome::kGone);
}

TEST_F(SqliteStoreTest, InsertRunUnlessBusyInsertsOnAnIdleThreadOnlyAndCountsTheRun) {
  store_->create_thread(thread("t1"));
  EXPECT_EQ(store_->insert_run_unless_busy(run_of("r1", "t1", RunStatus::kPending), Json::object(),
                                           nullptr),
            ReplicaStore::Insert::kInserted);
  EXPECT_EQ(store_->get_thread("t1")->status, ThreadStatus::kBusy);
  EXPECT_EQ(store_->insert_run_unless_busy(run_of("r2", "t1", RunStatus::kPending), Json::object(),
                                           nullptr),
            ReplicaStore::Insert::kThreadBusy);
  EXPECT_FALSE(store_->get_run("r2"));
  EXPECT_EQ(store_->insert_run_unless_busy(run_of("r3", "gone", RunStatus::kPending),
                                           Json::object(), nullptr),
            ReplicaStore::Insert::kThreadGone);
  // Once the run ended the thread is idle again and takes the next.
  ASSERT_TRUE(store_->end_run(run_of("r1", "t1", RunStatus::kSuccess), true, nullptr, nullptr));
  EXPECT_NE(store_->get_thread("t1")->status, ThreadStatus::kBusy);
  EXPECT_EQ(store_->insert_run_unless_busy(run_of("r4", "t1", RunStatus::kPending), Json::object(),
                                           nullptr),
            ReplicaStore::Insert::kInserted);
  EXPECT_EQ(store_->get_thread("t1")->status, ThreadStatus::kBusy);
}

TEST_F(SqliteStoreTest, WithFeedTextsAWritesFreshNoticesAreFedInItsTransactionOnce) {
  SqlWebhookQueue queue(db_.connect());
  store_->set_feed_texts([](const NotificationEvent& e) { return "fed " + e.id; });
  store_->create_thread(thread("t1"));
  std::vector<QueuedNotification> notices = {notice_of("e1")};
  ASSERT_TRUE(
      store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object(), &notices));
  EXPECT_TRUE(notices[0].in_feed);
  // The same fact told again (an end stored twice): not fed again.
  ASSERT_TRUE(store_->end_run(run_of("r1", "t1", RunStatus::kSuccess), true, nullptr, &notices));
  EXPECT_FALSE(notices[0].fresh);
  EXPECT_FALSE(notices[0].in_feed);
  std::vector<QueuedNotification> end = {notice_of("e2")};
  ASSERT_TRUE(store_->end_run(run_of("r1", "t1", RunStatus::kSuccess), true, nullptr, &end));
  const auto feed = store_->feed_after(0, 10);
  ASSERT_EQ(feed.size(), 2u);
  EXPECT_EQ(feed[0].second, "fed e1");
  EXPECT_EQ(feed[1].second, "fed e2");
  // Its follower takes them as numbered, without reading them back.
  EXPECT_EQ(store_->take_own_feed(), feed);
  EXPECT_TRUE(store_->take_own_feed().empty());
}

TEST_F(SqliteStoreTest, AWriteThatFailsFeedsNothing) {
  // No webhook queue was opened on this database: writing the notification fails.
  store_->set_feed_texts([](const NotificationEvent& e) { return "fed " + e.id; });
  store_->create_thread(thread("t1"));
  std::vector<QueuedNotification> notices = {notice_of("e1")};
  EXPECT_ANY_THROW(
      store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object(), &notices));
  EXPECT_TRUE(store_->feed_after(0, 10).empty());
  EXPECT_TRUE(store_->take_own_feed().empty());
}

// A review stream event with id `id`, as the feed's table keeps it.
std::string feed_text(const std::string& id) {
  NotificationEvent event;
  event.id = id;
  event.type = "review.requested";
  return feed_event_text(event);
}

// The ids and numbers of what `feed` published, oldest first.
std::vector<std::pair<std::int64_t, std::string>> published(const ReviewFeed& feed) {
  std::vector<std::pair<std::int64_t, std::string>> out;
  for (const FeedEntryPtr& entry : feed.read_after(0))
    out.emplace_back(entry->seq, entry->event.id);
  return out;
}

TEST_F(SqliteStoreTest, AFollowerPublishesItsStoresEventsAndReadsOnlyWhatItWasNotToldItHas) {
  SqlStore other(db_.connect());  // another replica on the same database
  auto feed = std::make_shared<ReviewFeed>();
  FeedFollower follower(*store_, feed);
  follower.start();
  store_->append_feed({feed_text("a"), feed_text("b")}, 1);
  other.append_feed({feed_text("x")}, 2);
  // Told of its own events (the notification's last number): they continue what it published,
  // so it publishes them as they were numbered and reads nothing back.
  const std::int64_t b = store_->feed_after(0, 10).at(1).first;
  follower.catch_up(b);
  EXPECT_EQ(published(*feed),
            (std::vector<std::pair<std::int64_t, std::string>>{{b - 1, "a"}, {b, "b"}}));
  // Told of the other replica's: it reads them.
  follower.catch_up(b + 1);
  EXPECT_EQ(published(*feed).size(), 3u);
  EXPECT_EQ(published(*feed).back(), (std::pair<std::int64_t, std::string>{b + 1, "x"}));
  // A notification of what it has already reads nothing.
  other.append_feed({feed_text("y")}, 3);
  follower.catch_up(b + 1);
  EXPECT_EQ(published(*feed).size(), 3u);
  // Told nothing (its poll), it reads what is there.
  follower.catch_up();
  EXPECT_EQ(published(*feed).back(), (std::pair<std::int64_t, std::string>{b + 2, "y"}));
}

TEST_F(SqliteStoreTest, AFollowerReadsItsStoresEventsBackWhenAnotherReplicasCameFirst) {
  SqlStore other(db_.connect());
  auto feed = std::make_shared<ReviewFeed>();
  FeedFollower follower(*store_, feed);
  follower.start();
  other.append_feed({feed_text("x")}, 1);
  store_->append_feed({feed_text("a")}, 2);
  const std::int64_t a = store_->feed_after(0, 10).at(1).first;
  follower.catch_up(a);  // its own event, after one it has not read
  const std::vector<std::pair<std::int64_t, std::string>> want = {{a - 1, "x"}, {a, "a"}};
  EXPECT_EQ(published(*feed), want);
  store_->append_feed({feed_text("b")}, 3);
  follower.catch_up(a + 1);
  EXPECT_EQ(published(*feed).back(), (std::pair<std::int64_t, std::string>{a + 1, "b"}));
}

TEST_F(SqliteStoreTest, InsertRunStoresItsNotificationsWithItAndNoneForAGoneThread) {
  SqlWebhookQueue queue(db_.connect());
  std::vector<QueuedNotification> lost = {notice_of("e0")};
  EXPECT_FALSE(
      store_->insert_run(run_of("r0", "gone", RunStatus::kPending), Json::object(), &lost));
  EXPECT_TRUE(queue.list(std::nullopt, 10).empty());
  store_->create_thread(thread("t1"));
  std::vector<QueuedNotification> notices = {notice_of("e1")};
  ASSERT_TRUE(
      store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object(), &notices));
  EXPECT_TRUE(notices[0].fresh);
  std::vector<WebhookDelivery> queued = queue.list(std::nullopt, 10);
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued[0].event_id, "e1");
}

TEST_F(SqliteStoreTest, AThreadOutcomeStoresItsNotificationsWithIt) {
  SqlWebhookQueue queue(db_.connect());
  store_->create_thread(thread("t1"));
  ThreadOutcome outcome;
  outcome.status = ThreadStatus::kInterrupted;
  std::vector<QueuedNotification> notices = {notice_of("e1")};
  ASSERT_TRUE(store_->set_thread_outcome("t1", outcome, &notices));
  EXPECT_TRUE(notices[0].fresh);
  EXPECT_EQ(queue.list(std::nullopt, 10).size(), 1u);
  EXPECT_EQ(store_->get_thread("t1")->status, ThreadStatus::kInterrupted);
}

TEST_F(SqliteStoreTest, ARunsEndIsNotStoredWhenItsNotificationCannotBe) {
  // No webhook queue was opened on this database: writing the notification fails.
  store_->create_thread(thread("t1"));
  store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object());
  ThreadOutcome outcome;
  outcome.status = ThreadStatus::kIdle;
  std::vector<QueuedNotification> notices = {notice_of("e1")};
  EXPECT_ANY_THROW(
      store_->end_run(run_of("r1", "t1", RunStatus::kSuccess), true, &outcome, &notices));
  EXPECT_EQ(store_->get_run("r1")->status, RunStatus::kPending);
  EXPECT_EQ(store_->get_thread("t1")->status, ThreadStatus::kBusy);
}

TEST_F(SqliteStoreTest, StorageOpenedFromOneURLIsOneDatabase) {
  store_.reset();
  EXPECT_TRUE(open_storage(db_.url(), db_.schema()).one_database);
  // Each connection to :memory: is a database of its own: notices are stored separately.
  if (!testing::StoreBackend::postgres()) {
    EXPECT_FALSE(open_storage(":memory:").one_database);
  }
}

TEST_F(SqliteStoreTest, MergeThreadMetadataLeavesEveryOtherColumnAlone) {
  ThreadRecord t = thread("t1");
  t.status = ThreadStatus::kInterrupted;
  t.values = {{"x", 1}};
  t.interrupts = {{"task", Json::array()}};
  store_->create_thread(t);
  auto merged = store_->merge_thread_metadata("t1", {{"owner", "ada"}}, 7);
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged->metadata, Json({{"purpose", "test"}, {"owner", "ada"}}));
  EXPECT_EQ(merged->status, ThreadStatus::kInterrupted);
  EXPECT_EQ(merged->values, t.values);
  EXPECT_EQ(merged->interrupts, t.interrupts);
  EXPECT_EQ(merged->updated_at, 7);
  EXPECT_FALSE(store_->merge_thread_metadata("gone", {{"owner", "ada"}}, 7));
}

// Takes a database of the current schema back to version 12 (a run's events a row each: the
// test adds none in batches).
#define TOLLGATE_BACK_TO_VERSION_12       \
  "DROP TABLE server_run_event_batches; " \
  "UPDATE tollgate_schema SET version = 12 WHERE component = 'server_store'; "

// ... and back to version 11 (a thread's state whole in its row: the test's states are of one
// part).
#define TOLLGATE_BACK_TO_VERSION_11                                                            \
  TOLLGATE_BACK_TO_VERSION_12                                                                  \
  "DROP TABLE server_thread_state_parts; ALTER TABLE server_threads DROP COLUMN state_parts; " \
  "UPDATE tollgate_schema SET version = 11 WHERE component = 'server_store'; "

// ... and back to version 10 (what schema 11 changed, undone).
#define TOLLGATE_BACK_TO_VERSION_10                                                           \
  TOLLGATE_BACK_TO_VERSION_11                                                                 \
  "DROP INDEX server_runs_active; "                                                           \
  "CREATE INDEX server_runs_by_status ON server_runs(status) WHERE status IN ('pending', "    \
  "'running'); CREATE INDEX server_runs_by_thread_status ON server_runs(thread_id, status); " \
  "UPDATE tollgate_schema SET version = 10 WHERE component = 'server_store'; "

// ... and back to version 5 (what schema 6 added, removed).
#define TOLLGATE_BACK_TO_VERSION_5                                                   \
  TOLLGATE_BACK_TO_VERSION_10                                                        \
  "DROP TABLE server_thread_event_batches; DROP INDEX server_runs_ended_by_update; " \
  "CREATE INDEX server_runs_by_update ON server_runs(updated_at); "                  \
  "UPDATE tollgate_schema SET version = 5 WHERE component = 'server_store'; "

// ... and back to version 4 (what schema 5 added, removed).
#define TOLLGATE_BACK_TO_VERSION_4                                                              \
  TOLLGATE_BACK_TO_VERSION_5                                                                    \
  "DROP INDEX server_runs_by_owner; DROP TABLE server_replicas; DROP TABLE server_feed; "       \
  "ALTER TABLE server_runs DROP COLUMN owner; ALTER TABLE server_runs DROP COLUMN not_before; " \
  "ALTER TABLE server_runs DROP COLUMN cancel_request; "                                        \
  "ALTER TABLE server_threads DROP COLUMN rollback_to; "                                        \
  "UPDATE tollgate_schema SET version = 4 WHERE component = 'server_store'; "
constexpr const char* kBackToVersion4 = TOLLGATE_BACK_TO_VERSION_4;

// A state of `n` messages, each with characters of two, three and four bytes in UTF-8, so that
// the parts' ends fall inside characters.
Json long_state(int n) {
  Json messages = Json::array();
  for (int i = 0; i < n; ++i) {
    messages.push_back({{"type", "human"},
                        {"content", "message " + std::to_string(i) +
                                        " caf\u00e9 \u6f22\u5b57 \U0001F600 "
                                        "padding padding padding"}});
  }
  return {{"messages", std::move(messages)}};
}

// A run's end that leaves the thread idle with `values`.
ThreadOutcome idle_outcome(Json values) {
  ThreadOutcome outcome;
  outcome.status = ThreadStatus::kIdle;
  outcome.values = std::move(values);
  outcome.updated_at = 5;
  return outcome;
}

TEST(StatePartsTest, PartsEndOnCharactersAndJoinToTheText) {
  const std::string text = long_state(2000).dump();
  const sql_rows::StateParts parts = sql_rows::split_state(text);
  ASSERT_TRUE(parts.first);
  ASSERT_GT(parts.rest.size(), 2u);
  EXPECT_LE(parts.first->size(), sql_rows::kFirstStatePart);
  std::string joined(*parts.first);
  for (std::string_view part : parts.rest) {
    EXPECT_FALSE(part.empty());
    EXPECT_LE(part.size(), sql_rows::kStatePart);
    EXPECT_NE(static_cast<unsigned char>(part.front()) & 0xC0, 0x80)
        << "a part starts mid-character";
    joined += part;
  }
  EXPECT_EQ(joined, text);
}

// Each part's end that would fall inside a character (here a 3-byte "\u20ac") moves back to
// the character's first byte.
TEST(StatePartsTest, APartNeverEndsInsideACharacter) {
  const std::string euro = "\u20ac";
  ASSERT_EQ(euro.size(), 3u);
  std::string text(sql_rows::kFirstStatePart - 1, 'a');
  text += euro;  // its bytes at kFirstStatePart - 1 .. + 1
  text += std::string(sql_rows::kStatePart - 4, 'b');
  text += euro;  // its second byte at the second part's end
  text += "tail";
  const sql_rows::StateParts parts = sql_rows::split_state(text);
  ASSERT_EQ(parts.rest.size(), 2u);
  EXPECT_EQ(parts.first->size(), sql_rows::kFirstStatePart - 1);
  EXPECT_EQ(parts.rest[0].substr(0, 3), euro);
  EXPECT_EQ(parts.rest[1].substr(0, 3), euro);
  EXPECT_EQ(std::string(*parts.first) + std::string(parts.rest[0]) + std::string(parts.rest[1]),
            text);
}

TEST(StatePartsTest, ATextThatGrewAtItsEndKeepsItsEarlierParts) {
  const std::string text = long_state(1000).dump();
  const std::string grown = text + std::string(5000, 'x');
  const sql_rows::StateParts before = sql_rows::split_state(text);
  const sql_rows::StateParts after = sql_rows::split_state(grown);
  EXPECT_EQ(*after.first, *before.first);
  ASSERT_GE(after.rest.size(), before.rest.size());
  for (std::size_t i = 0; i + 1 < before.rest.size(); ++i) EXPECT_EQ(after.rest[i], before.rest[i]);
}

TEST(StatePartsTest, AShortStateIsOnePartAndNoStateNone) {
  EXPECT_EQ(sql_rows::split_state(std::string_view(R"({"messages":[]})")).count(), 1);
  EXPECT_EQ(*sql_rows::split_state(std::string_view("")).first, "");
  const sql_rows::StateParts none = sql_rows::state_parts_of(std::nullopt);
  EXPECT_FALSE(none.first);
  EXPECT_EQ(none.count(), 1);
}

// A long state is kept in parts: read back whole by every read of the thread, found by a search
// on its values, and its parts past the end of a shorter state are deleted with it.
TEST_F(SqliteStoreTest, ALongStateIsReadWholeFoundByItsValuesAndShrinks) {
  ThreadRecord t = thread("long");
  t.values = long_state(3000);
  ASSERT_TRUE(store_->create_thread(t));
  EXPECT_GT(db_.rows("server_thread_state_parts"), 2);
  EXPECT_EQ(store_->get_thread("long")->values, t.values);
  EXPECT_TRUE(store_->get_thread_head("long")->values.is_null());
  ThreadFilter by_values;
  by_values.values = {{"messages", t.values["messages"]}};
  auto found = store_->search_threads(by_values, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].values, t.values);
  by_values.values = {{"messages", long_state(2999)["messages"]}};
  EXPECT_EQ(store_->count_threads(by_values), 0u);

  const ThreadOutcome shorter = idle_outcome(long_state(10));
  ASSERT_TRUE(store_->set_thread_outcome("long", shorter));
  EXPECT_EQ(db_.rows("server_thread_state_parts"), 0);
  EXPECT_EQ(store_->get_thread("long")->values, shorter.values);

  ThreadRecord again = *store_->get_thread("long");
  again.values = long_state(1500);
  store_->update_thread(again);
  EXPECT_EQ(store_->get_thread("long")->values, again.values);
  store_->delete_thread("long");
  EXPECT_EQ(db_.rows("server_thread_state_parts"), 0);
}

// A run's end writes its thread's state in parts too: a shorter state than the stored one
// leaves no part past its end, a longer one all of its parts (a run of this replica or of none).
TEST_F(SqliteStoreTest, ARunsEndWritesItsStateInPartsLongerOrShorter) {
  for (const std::string owner : {"", "replica-1"}) {
    SCOPED_TRACE("owner '" + owner + "'");
    ThreadRecord t = thread("t-" + owner);
    t.values = long_state(3000);
    ASSERT_TRUE(store_->create_thread(t));
    const std::int64_t long_parts = db_.rows("server_thread_state_parts");
    ASSERT_GT(long_parts, 2);
    RunRecord run = run_of("r-" + owner, t.thread_id, RunStatus::kPending);
    run.owner = owner;
    ASSERT_TRUE(store_->insert_run(run, Json::object()));
    run.status = RunStatus::kSuccess;
    for (int messages : {10, 1500, 3000, 800, 10}) {
      SCOPED_TRACE(std::to_string(messages) + " messages");
      const ThreadOutcome outcome = idle_outcome(long_state(messages));
      ASSERT_TRUE(store_->end_run(run, true, &outcome));
      EXPECT_EQ(store_->get_thread(t.thread_id)->values, outcome.values);
      const std::int64_t parts = sql_rows::split_state(outcome.values.dump()).count();
      EXPECT_EQ(db_.rows("server_thread_state_parts"), parts - 1);
    }
    store_->delete_thread(t.thread_id);
  }
}

// A state that grew at its end writes only its last parts: a part the table holds as it is is not
// written again (counted by a trigger on the table).
TEST_F(SqliteStoreTest, AStateThatGrewWritesOnlyItsChangedParts) {
  if (testing::StoreBackend::postgres()) GTEST_SKIP() << "a SQLite trigger counts the writes";
  ThreadRecord t = thread("t");
  t.values = long_state(2000);
  ASSERT_TRUE(store_->create_thread(t));
  const std::int64_t parts = db_.rows("server_thread_state_parts");
  ASSERT_GT(parts, 3);
  db_.exec(
      "CREATE TABLE part_writes (part INTEGER); "
      "CREATE TRIGGER part_updated AFTER UPDATE ON server_thread_state_parts BEGIN "
      "INSERT INTO part_writes VALUES (new.part); END; "
      "CREATE TRIGGER part_inserted AFTER INSERT ON server_thread_state_parts BEGIN "
      "INSERT INTO part_writes VALUES (new.part); END;");
  const ThreadOutcome grown = idle_outcome(long_state(2010));
  ASSERT_TRUE(store_->set_thread_outcome("t", grown));
  EXPECT_EQ(store_->get_thread("t")->values, grown.values);
  // The last part of before grew (and maybe one more was added); every other is as it was.
  const std::int64_t written = db_.rows("part_writes");
  EXPECT_GE(written, 1);
  EXPECT_LE(written, 2);
  EXPECT_EQ(db_.rows("part_writes WHERE part < " + std::to_string(parts - 1)), 0);
}

// A version-11 database kept each thread's state whole in its row: read as one part, found by
// its values, and written in parts from its next write on.
TEST_F(SqliteStoreTest, AVersion11DatabaseKeepsItsThreadsStates) {
  if (testing::StoreBackend::postgres()) GTEST_SKIP() << "a SQLite file of an older layout";
  ThreadRecord kept = thread("kept");
  kept.values = {{"messages", Json::array({"hello"})}};
  store_->create_thread(kept);
  store_->create_thread(thread("empty"));
  rewrite_closed_database({TOLLGATE_BACK_TO_VERSION_11});
  reopen();
  EXPECT_EQ(store_->schema_version(), kServerSchemaVersion);
  EXPECT_EQ(store_->get_thread("kept")->values, kept.values);
  EXPECT_TRUE(store_->get_thread("empty")->values.is_null());
  ThreadFilter by_values;
  by_values.values = {{"messages", Json::array({"hello"})}};
  auto found = store_->search_threads(by_values, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].thread_id, "kept");
  const ThreadOutcome later = idle_outcome(long_state(1000));
  ASSERT_TRUE(store_->set_thread_outcome("kept", later));
  EXPECT_EQ(store_->get_thread("kept")->values, later.values);
}

// ... and back to version 3 (what schema 4 added, removed).
constexpr const char* kBackToVersion3 = TOLLGATE_BACK_TO_VERSION_4
    "DROP INDEX server_threads_by_read_status; DROP INDEX server_threads_awaiting_review; "
    "ALTER TABLE server_threads DROP COLUMN awaiting_review; "
    "ALTER TABLE server_threads DROP COLUMN read_status; "
    "ALTER TABLE server_threads DROP COLUMN pending_interrupts; "
    "ALTER TABLE server_threads DROP COLUMN active_runs; "
    "CREATE INDEX server_threads_by_status ON server_threads(status, updated_at); "
    "UPDATE tollgate_schema SET version = 3 WHERE component = 'server_store'; ";

// Retention's search for runs that ended before a time reads an index of ended runs only, so
// a run's insert and start move no entry of it.
TEST_F(SqliteStoreTest, RetentionFindsEndedRunsByTheirOwnIndex) {
  if (testing::StoreBackend::postgres()) GTEST_SKIP() << "SQLite's query plan";
  auto connection = db_.connect();
  auto plan = connection->prepare(
      "EXPLAIN QUERY PLAN SELECT run_id FROM server_runs WHERE updated_at < 5 AND status NOT "
      "IN ('pending', 'running')");
  std::string steps;
  while (plan->step()) steps += plan->text(3) + "\n";
  EXPECT_NE(steps.find("USING INDEX server_runs_ended_by_update"), std::string::npos) << steps;
}

TEST_F(SqliteStoreTest, AVersion5DatabaseKeepsItsThreadEventsAndGoesOnInBatches) {
  if (testing::StoreBackend::postgres()) GTEST_SKIP() << "a SQLite file of an older layout";
  rewrite_closed_database({TOLLGATE_BACK_TO_VERSION_5,
                           "INSERT INTO server_thread_events (thread_id, seq, event, data, "
                           "event_id, channel, namespace, appended_at) VALUES ('t1', 1, 'values', "
                           "'{}', '1', 'values', '[]', 5), ('t1', 2, 'updates', '{}', '2', "
                           "'updates', '[\"a\"]', 5)"});
  reopen();
  EXPECT_EQ(store_->schema_version(), kServerSchemaVersion);
  store_->append_thread_event("t1", thread_event(3));
  store_->flush_events();
  const std::vector<LogEntry> read = store_->thread_events("t1");
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].event, "values");
  EXPECT_EQ(read[1].ns, std::vector<std::string>{"a"});
  EXPECT_EQ(read[2].seq, 3);
}

// A version-12 database stored a run's events a row each: read before the batches written
// from then on, and deleted with the run.
TEST_F(SqliteStoreTest, AVersion12DatabaseKeepsItsRunEventsAndGoesOnInBatches) {
  if (testing::StoreBackend::postgres()) GTEST_SKIP() << "a SQLite file of an older layout";
  store_->create_thread(thread("t1"));
  store_->put_run(run_of("r1", "t1", RunStatus::kSuccess));
  rewrite_closed_database({TOLLGATE_BACK_TO_VERSION_12,
                           "INSERT INTO server_run_events (run_id, seq, event, data, event_id) "
                           "VALUES ('r1', 0, 'metadata', '{\"run_id\":\"r1\"}', '0'), "
                           "('r1', 1, 'values', '{}', '1')"});
  reopen();
  EXPECT_EQ(store_->schema_version(), kServerSchemaVersion);
  store_->append_run_event("r1", thread_event(2));
  store_->flush_events();
  EXPECT_EQ(db_.rows("server_run_event_batches"), 1);
  const std::vector<LogEntry> read = store_->run_events("r1");
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[0].event, "metadata");
  EXPECT_EQ(read[0].data, R"({"run_id":"r1"})");
  EXPECT_EQ(read[1].seq, 1);
  EXPECT_EQ(read[2].seq, 2);
  EXPECT_EQ(store_->run_events("r1", 1).size(), 1u);
  store_->delete_run("r1");
  EXPECT_EQ(db_.rows("server_run_events"), 0);
  EXPECT_EQ(db_.rows("server_run_event_batches"), 0);
}

TEST_F(SqliteStoreTest, AVersion4DatabaseGainsRunOwnersAndKeepsItsPendingRuns) {
  if (testing::StoreBackend::postgres()) GTEST_SKIP() << "a SQLite file of an older layout";
  store_->create_thread(thread("t1"));
  rewrite_closed_database({kBackToVersion4,
                           "INSERT INTO server_runs (run_id, thread_id, assistant_id, metadata, "
                           "status, kwargs, multitask_strategy, created_at, updated_at, attempts) "
                           "VALUES ('r1', 't1', 'a', '{}', 'pending', '{}', 'reject', 1, 1, 0)"});
  reopen();
  EXPECT_EQ(store_->schema_version(), kServerSchemaVersion);
  auto run = store_->get_run("r1");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, RunStatus::kPending);
  EXPECT_EQ(run->owner, "");
  EXPECT_EQ(run->not_before, 0);
}

TEST_F(SqliteStoreTest, AVersion1FileGainsRunAttempts) {
  if (testing::StoreBackend::postgres()) GTEST_SKIP() << "a SQLite file of an older layout";
  rewrite_closed_database({kBackToVersion3,
                           "DROP INDEX server_threads_by_created; DROP INDEX server_threads_by_updated; "
                           "DROP INDEX server_threads_by_status; DROP INDEX server_threads_by_owner; "
                           "DROP INDEX server_runs_by_thread_status; DROP INDEX server_threads_by_ttl; "
                           "DROP INDEX server_thread_events_by_time; DROP INDEX server_runs_by_update; "
                           "ALTER TABLE server_threads DROP COLUMN ttl_ms; "
                           "ALTER TABLE server_thread_events DROP COLUMN appended_at; "
                           "ALTER TABLE server_runs DROP COLUMN attempts; UPDATE tollgate_schema SET "
                           "version = 1 WHERE component = 'server_store'; INSERT INTO server_runs "
                           "(run_id, thread_id, assistant_id, metadata, status, kwargs, "
                           "multitask_strategy, created_at, updated_at) VALUES ('r1', 't1', 'a', "
                           "'{}', 'running', '{}', 'reject', 1, 1)"});
  reopen();
  EXPECT_EQ(store_->schema_version(), kServerSchemaVersion);
  EXPECT_EQ(store_->get_run("r1")->attempts, 0);
}

TEST_F(SqliteStoreTest, AVersion3DatabaseGainsTheBusyAndAwaitingReviewColumnsOfItsThreads) {
  ThreadRecord paused = thread("paused");
  paused.status = ThreadStatus::kInterrupted;
  paused.interrupts = {{"task", Json::array({{{"value", "review"}}})}};
  store_->create_thread(paused);
  store_->create_thread(thread("running"));
  store_->create_thread(thread("idle"));
  // A run a version-3 server was executing, and a paused thread whose resume is queued.
  rewrite_closed_database({kBackToVersion3,
                           "INSERT INTO server_runs (run_id, thread_id, assistant_id, metadata, "
                           "status, kwargs, multitask_strategy, created_at, updated_at) VALUES "
                           "('r1', 'running', 'a', '{}', 'running', '{}', 'reject', 1, 1), "
                           "('r2', 'paused', 'a', '{}', 'pending', '{}', 'reject', 1, 1), "
                           "('r3', 'idle', 'a', '{}', 'success', '{}', 'reject', 1, 1)"});
  reopen();
  EXPECT_EQ(store_->schema_version(), kServerSchemaVersion);
  ThreadFilter busy;
  busy.status = ThreadStatus::kBusy;
  EXPECT_EQ(store_->count_threads(busy), 2u);
  ThreadFilter reviewer;
  reviewer.visible = ThreadVisibility{false, "", true};
  auto waiting = store_->search_threads(reviewer, {});
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_EQ(waiting[0].thread_id, "paused");
  EXPECT_EQ(waiting[0].status, ThreadStatus::kBusy);
  store_->end_run(run_of("r2", "paused", RunStatus::kSuccess), true, nullptr);
  ThreadFilter interrupted;
  interrupted.status = ThreadStatus::kInterrupted;
  EXPECT_EQ(store_->count_threads(interrupted), 1u);
}

TEST_F(SqliteStoreTest, EveryWriteOfARunKeepsItsThreadsBusyStatus) {
  store_->create_thread(thread("t1"));
  ThreadFilter busy;
  busy.status = ThreadStatus::kBusy;
  store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object());
  EXPECT_EQ(store_->count_threads(busy), 1u);
  store_->put_run(run_of("r1", "t1", RunStatus::kSuccess));
  EXPECT_EQ(store_->count_threads(busy), 0u);
  store_->put_run(run_of("r2", "t1", RunStatus::kPending));
  EXPECT_EQ(store_->count_threads(busy), 1u);
  store_->delete_run("r2");
  EXPECT_EQ(store_->count_threads(busy), 0u);
  store_->put_run(run_of("r3", "t1", RunStatus::kInterrupted));
  store_->begin_attempt("r3", RunStatus::kRunning, 2);
  EXPECT_EQ(store_->count_threads(busy), 1u);
  store_->end_run(run_of("r3", "t1", RunStatus::kError), false, nullptr);
  EXPECT_EQ(store_->count_threads(busy), 0u);
  EXPECT_EQ(store_->get_thread("t1")->status, ThreadStatus::kIdle);
}

TEST_F(SqliteStoreTest, AReviewerSeesAThreadWhileItsInterruptsAreListedEvenWhenBusy) {
  ThreadRecord t = thread("t1");
  t.status = ThreadStatus::kInterrupted;
  t.interrupts = {{"task", Json::array({{{"value", "review"}}})}};
  store_->create_thread(t);
  ThreadFilter reviewer;
  reviewer.visible = ThreadVisibility{false, "", true};
  store_->insert_run(run_of("r1", "t1", RunStatus::kPending), Json::object());
  EXPECT_EQ(store_->count_threads(reviewer), 1u);
  ThreadOutcome answered;
  answered.status = ThreadStatus::kIdle;
  answered.values = Json::object();
  answered.interrupts = {{"task", Json::array()}};
  store_->end_run(run_of("r1", "t1", RunStatus::kSuccess), true, &answered);
  EXPECT_EQ(store_->count_threads(reviewer), 0u);
  t.interrupts = {{"other", Json::array({{{"value", "again"}}})}};
  t.status = ThreadStatus::kIdle;
  store_->update_thread(t);
  EXPECT_EQ(store_->count_threads(reviewer), 1u);
}

TEST_F(SqliteStoreTest, ThreadIdsWithStoredStatusReadTheStoredColumn) {
  ThreadRecord t = thread("t1");
  t.status = ThreadStatus::kBusy;
  store_->create_thread(t);
  store_->create_thread(thread("t2"));
  EXPECT_EQ(store_->thread_ids_with_stored_status(ThreadStatus::kBusy),
            std::vector<std::string>{"t1"});
}

LogEntry values_event() {
  LogEntry e;
  e.seq = 1;
  e.event = "values";
  e.data = "{}";
  return e;
}

TEST_F(SqliteStoreTest, QueuedEventsCommitWithTheNextWrite) {
  LogEntry e = values_event();
  store_->append_run_event("r1", e);
  store_->append_thread_event("t1", e);
  EXPECT_EQ(db_.rows("server_thread_event_batches"), 0);
  RunRecord run;
  run.run_id = "r1";
  run.thread_id = "t1";
  run.assistant_id = "a";
  store_->put_run(run);
  EXPECT_EQ(db_.rows("server_thread_event_batches"), 1);
  EXPECT_EQ(db_.rows("server_run_event_batches"), 1);
}

TEST_F(SqliteStoreTest, QueuedEventsAreWrittenWhenTheStoreCloses) {
  LogEntry e = values_event();
  store_->append_thread_event("t1", e);
  store_.reset();
  EXPECT_EQ(db_.rows("server_thread_event_batches"), 1);
  store_ = std::make_unique<SqlStore>(db_.connect());
  EXPECT_EQ(store_->thread_events("t1").size(), 1u);
}

TEST_F(SqliteStoreTest, AThreadsEventsOfOneWriteAreOneRowAndReadBackWhole) {
  std::vector<LogEntry> events;
  for (std::int64_t seq = 1; seq <= 40; ++seq) {
    events.push_back(thread_event(seq, seq % 3 == 0 ? std::vector<std::string>{"agent:1", "x|y"}
                                                    : std::vector<std::string>{}));
    store_->append_thread_event("t1", events.back());
  }
  store_->flush_events();
  EXPECT_EQ(db_.rows("server_thread_event_batches"), 1);
  store_.reset();  // read from the file, not the queue
  store_ = std::make_unique<SqlStore>(db_.connect());
  testing::expect_same_events(store_->thread_events("t1"), events);
  testing::expect_same_events(store_->thread_events("t1", 37),
                              std::vector<LogEntry>(events.begin() + 37, events.end()));
}

TEST_F(SqliteStoreTest, ARunsEventsOfOneWriteAreOneRowAndReadBackWhole) {
  std::vector<LogEntry> events;
  for (std::int64_t seq = 0; seq < 40; ++seq) {
    LogEntry e = thread_event(seq);  // a run's events have no channel nor namespace
    e.channel.clear();
    if (seq == 0) e.event = "metadata";
    events.push_back(e);
    store_->append_run_event("r1", e);
  }
  store_->append_run_event("r2", values_event());
  store_->flush_events();
  EXPECT_EQ(db_.rows("server_run_event_batches WHERE run_id = 'r1'"), 1);
  EXPECT_EQ(db_.rows("server_run_event_batches WHERE run_id = 'r2'"), 1);
  store_.reset();  // read from the file, not the queue
  store_ = std::make_unique<SqlStore>(db_.connect());
  testing::expect_same_events(store_->run_events("r1"), events);
  testing::expect_same_events(store_->run_events("r1", 36),
                              std::vector<LogEntry>(events.begin() + 37, events.end()));
  EXPECT_EQ(store_->run_events("r2").size(), 1u);
}

TEST_F(SqliteStoreTest, AThreadsEventsReadFromBatchesAfterTheRowsOfAnOlderSchema) {
  // Rows stored one an event (schema 5) come first, the batches after them.
  db_.exec(R"(INSERT INTO server_thread_events (thread_id, seq, event, data, event_id, channel,
                namespace, appended_at) VALUES ('t1', 1, 'values', '{}', '1', 'values', '[]', 0),
                ('t1', 2, 'values', '{}', '2', 'values', '["a"]', 0))");
  store_->append_thread_event("t1", thread_event(3));
  store_->flush_events();
  store_->append_thread_event("t1", thread_event(4));
  store_->flush_events();
  const std::vector<LogEntry> read = store_->thread_events("t1");
  ASSERT_EQ(read.size(), 4u);
  for (std::int64_t i = 0; i < 4; ++i) EXPECT_EQ(read[static_cast<std::size_t>(i)].seq, i + 1);
  EXPECT_EQ(read[1].ns, std::vector<std::string>{"a"});
  EXPECT_EQ(store_->thread_events("t1", 2).size(), 2u);
}

TEST_F(SqliteStoreTest, AReadServesQueuedEventsAfterTheStoredOnesWithoutWriting) {
  store_->append_thread_event("t1", thread_event(1));
  store_->append_run_event("r1", thread_event(1));
  store_->flush_events();
  store_->append_thread_event("t1", thread_event(2));
  store_->append_thread_event("t2", thread_event(1));
  store_->append_run_event("r1", thread_event(2));
  const std::vector<LogEntry> thread = store_->thread_events("t1");
  ASSERT_EQ(thread.size(), 2u);
  EXPECT_EQ(thread[0].seq, 1);
  EXPECT_EQ(thread[1].seq, 2);
  EXPECT_EQ(store_->thread_events("t1", 1).size(), 1u);
  EXPECT_EQ(store_->run_events("r1").size(), 2u);
  EXPECT_EQ(store_->run_events("r1", 1).size(), 1u);
  // Nothing of the queue was written by the reads (t2's events among them).
  EXPECT_EQ(db_.rows("server_thread_event_batches"), 1);
  EXPECT_EQ(db_.rows("server_run_event_batches"), 1);
  store_->flush_events();
  EXPECT_EQ(db_.rows("server_thread_event_batches"), 3);
  EXPECT_EQ(db_.rows("server_run_event_batches"), 2);
  EXPECT_EQ(store_->thread_events("t1").size(), 2u);
}

TEST_F(SqliteStoreTest, AQueuedEventWithTheSeqOfAStoredOneIsReadInstead) {
  store_->append_thread_event("t1", thread_event(1));
  store_->flush_events();
  LogEntry again = thread_event(1);
  again.data = R"({"again":true})";
  store_->append_thread_event("t1", again);
  const std::vector<LogEntry> read = store_->thread_events("t1");
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].data, again.data);
}

TEST_F(SqliteStoreTest, AHeldThreadsQueuedEventsAreNotReadUntilReleased) {
  store_->append_thread_event("t1", thread_event(1));
  store_->hold_thread_events("t1");
  store_->append_thread_event("t1", thread_event(2));
  EXPECT_EQ(store_->thread_events("t1").size(), 1u);
  store_->release_thread_events("t1");
  EXPECT_EQ(store_->thread_events("t1").size(), 2u);
}

TEST_F(SqliteStoreTest, TheFeedKeepsItsEventsInTheOrderAppendedNumberedUpward) {
  std::vector<std::string> many;
  for (int i = 0; i < 20; ++i) many.push_back("e" + std::to_string(i));
  store_->append_feed({"a", "b", "c"}, 5);
  store_->append_feed({"d"}, 6);
  store_->append_feed(many, 7);  // more than one statement's rows
  const auto feed = store_->feed_after(0, 100);
  ASSERT_EQ(feed.size(), 24u);
  std::vector<std::string> events;
  for (std::size_t i = 0; i < feed.size(); ++i) {
    events.push_back(feed[i].second);
    if (i > 0) {
      EXPECT_GT(feed[i].first, feed[i - 1].first);
    }
  }
  std::vector<std::string> want = {"a", "b", "c", "d"};
  want.insert(want.end(), many.begin(), many.end());
  EXPECT_EQ(events, want);
  const auto after_b = store_->feed_after(feed[1].first, 2);
  ASSERT_EQ(after_b.size(), 2u);
  EXPECT_EQ(after_b[0].second, "c");
  EXPECT_EQ(after_b[1].second, "d");
}

// A thread's stored events, or a run's.
std::vector<LogEntry> stored_events(SqlStore& store, bool of_thread, const std::string& owner) {
  return of_thread ? store.thread_events(owner) : store.run_events(owner);
}

void append_event(SqlStore& store, bool of_thread, const std::string& owner, const LogEntry& e) {
  of_thread ? store.append_thread_event(owner, e) : store.append_run_event(owner, e);
}

TEST_F(SqliteStoreTest, OfTwoStoredEventsWithOneSeqTheLaterIsRead) {
  for (const bool of_thread : {true, false}) {
    SCOPED_TRACE(of_thread ? "a thread's events" : "a run's events");
    const std::string owner = of_thread ? "t1" : "r1";
    append_event(*store_, of_thread, owner, thread_event(1));
    append_event(*store_, of_thread, owner, thread_event(2));
    store_->flush_events();
    LogEntry again = thread_event(2);
    again.data = R"({"again":true})";
    append_event(*store_, of_thread, owner, again);
    append_event(*store_, of_thread, owner, thread_event(3));
    store_->flush_events();
    const std::vector<LogEntry> read = stored_events(*store_, of_thread, owner);
    ASSERT_EQ(read.size(), 3u);
    EXPECT_EQ(read[1].data, again.data);
    EXPECT_EQ(read[2].seq, 3);
  }
}

TEST_F(SqliteStoreTest, AThreadsEventsAreStoredWithoutTheirEnvelopesAndReadBackAsTheyWereSent) {
  std::vector<LogEntryPtr> sent;
  {
    ThreadStreams streams(*store_);
    const std::shared_ptr<EventLog> reader = streams.log("t1");
    streams.emit("t1", "lifecycle", {}, Json{{"event", "running"}}, "", "r1");
    streams.emit("t1", "updates", {}, Json{{"model", {{"answer", "caf\u00e9 \"quoted\""}}}},
                 "model");
    streams.emit("t1", "messages", {"model:1", "tools|2"}, Json::array({"chunk", 2}));
    streams.emit("t1", "custom", {}, Json{{"name", "progress"}, {"done", 0.5}});
    sent = reader->read(0, 100, nullptr);
  }
  ASSERT_EQ(sent.size(), 4u);
  reopen();  // written when the store closes; read back from the database alone
  const std::unique_ptr<sql::Connection> connection = db_.connect();
  std::unique_ptr<sql::Statement> row =
      connection->prepare("SELECT events FROM server_thread_event_batches");
  ASSERT_TRUE(row->step());
  const std::string stored = row->text(0);
  EXPECT_EQ(stored.rfind("e\n", 0), 0u) << stored;
  EXPECT_EQ(stored.find("event_id"), std::string::npos) << stored;
  std::size_t sent_bytes = 0;
  for (const LogEntryPtr& e : sent) sent_bytes += e->data.size();
  EXPECT_LT(stored.size(), sent_bytes);
  const std::vector<LogEntry> read = store_->thread_events("t1");
  ASSERT_EQ(read.size(), sent.size());
  for (std::size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].data, sent[i]->data) << i;
    EXPECT_EQ(read[i].id, sent[i]->id) << i;
    EXPECT_EQ(read[i].ns, sent[i]->ns) << i;
    EXPECT_EQ(read[i].channel, sent[i]->channel) << i;
  }
}

TEST_F(SqliteStoreTest, AMalformedStoredBatchIsAnErrorNamingItsThreadOrRun) {
  db_.exec(
      "INSERT INTO server_thread_event_batches (thread_id, last_seq, appended_at, events) "
      "VALUES ('t1', 1, 0, '1 6 2 1 6 0\nvalues{}')");
  db_.exec(
      "INSERT INTO server_run_event_batches (run_id, last_seq, events) "
      "VALUES ('r1', 1, '1 6 2 1 0 0\nvalues{}')");
  for (const bool of_thread : {true, false}) {
    const std::string named = of_thread ? "thread t1" : "run r1";
    try {
      stored_events(*store_, of_thread, of_thread ? "t1" : "r1");
      ADD_FAILURE() << "no error reading " << named;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tollgate::server

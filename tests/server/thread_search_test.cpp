// ServerStore::search_threads / count_threads on a real database (SQLite; PostgreSQL in
// server_postgres_test, store_backend.h): each filter, sort key and page of POST
// /threads/search, done by the store.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "server/sql_store.h"
#include "server/store_backend.h"
#include "server/thread_query.h"

namespace tollgate::server {
namespace {

class ThreadSearchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TOLLGATE_REQUIRE_STORE_BACKEND();
    store_ = std::make_unique<SqlStore>(db_.connect());
  }

  // A thread created at `at` (and updated at 100 - at: the reverse order).
  void add(const std::string& id, std::int64_t at, Json metadata = Json::object(),
           ThreadStatus status = ThreadStatus::kIdle, Json values = Json()) {
    ThreadRecord t;
    t.thread_id = id;
    t.created_at = at;
    t.updated_at = 100 - at;
    t.metadata = std::move(metadata);
    t.status = status;
    t.values = std::move(values);
    ASSERT_TRUE(store_->create_thread(t));
  }
  void start_run(const std::string& run_id, const std::string& thread_id) {
    RunRecord r;
    r.run_id = run_id;
    r.thread_id = thread_id;
    r.assistant_id = "a";
    r.status = RunStatus::kRunning;
    ASSERT_TRUE(store_->insert_run(r, Json::object()));
  }
  std::vector<std::string> ids(const ThreadFilter& filter, const ThreadPage& page = {}) {
    std::vector<std::string> out;
    for (const ThreadRecord& t : store_->search_threads(filter, page)) out.push_back(t.thread_id);
    return out;
  }

  // The plan of counting the threads `filter` finds.
  std::string plan_of(const ThreadFilter& filter) const {
    const sql::Dialect dialect =
        testing::StoreBackend::postgres() ? sql::Dialect::kPostgres : sql::Dialect::kSqlite;
    const ThreadFilterSql where = thread_filter_sql(filter, dialect);
    return db_.plan("SELECT count(*) FROM server_threads " + where.where, where.args);
  }

  testing::StoreBackend db_{"thread-search"};
  std::unique_ptr<SqlStore> store_;
};

using Ids = std::vector<std::string>;

TEST_F(ThreadSearchTest, DefaultOrderIsNewestCreatedFirst) {
  add("a", 1);
  add("b", 3);
  add("c", 2);
  EXPECT_EQ(ids({}), (Ids{"b", "c", "a"}));
}

TEST_F(ThreadSearchTest, StatusFilterReadsBusyFromActiveRuns) {
  add("idle", 1);
  add("paused", 2, Json::object(), ThreadStatus::kInterrupted);
  add("running", 3);
  start_run("r", "running");
  ThreadFilter filter;
  filter.status = ThreadStatus::kBusy;
  EXPECT_EQ(ids(filter), (Ids{"running"}));
  filter.status = ThreadStatus::kIdle;
  EXPECT_EQ(ids(filter), (Ids{"idle"}));
  filter.status = ThreadStatus::kInterrupted;
  EXPECT_EQ(ids(filter), (Ids{"paused"}));
}

TEST_F(ThreadSearchTest, MetadataFilterIsTopLevelContainmentOfEachType) {
  add("a", 1, {{"graph_id", "agent"}, {"n", 1}, {"flag", true}, {"tags", {"x", "y"}}});
  add("b", 2, {{"graph_id", "other"}, {"n", 2}, {"flag", false}});
  ThreadFilter filter;
  filter.metadata = {{"graph_id", "agent"}};
  EXPECT_EQ(ids(filter), (Ids{"a"}));
  filter.metadata = {{"n", 2.0}};
  EXPECT_EQ(ids(filter), (Ids{"b"}));
  filter.metadata = {{"flag", true}, {"tags", {"x", "y"}}};
  EXPECT_EQ(ids(filter), (Ids{"a"}));
  filter.metadata = {{"graph_id", "agent"}, {"n", 2}};
  EXPECT_EQ(ids(filter), Ids{});
  filter.metadata = {{"missing", nullptr}};
  EXPECT_EQ(ids(filter), Ids{});
}

TEST_F(ThreadSearchTest, ValuesFilterMatchesStoredValuesOnly) {
  add("with", 1, Json::object(), ThreadStatus::kIdle, {{"topic", "mail"}});
  add("without", 2);
  ThreadFilter filter;
  filter.values = {{"topic", "mail"}};
  EXPECT_EQ(ids(filter), (Ids{"with"}));
}

TEST_F(ThreadSearchTest, IdsFilterKeepsOnlyTheNamedThreads) {
  add("a", 1);
  add("b", 2);
  add("c", 3);
  ThreadFilter filter;
  filter.ids = {"a", "c", "unknown"};
  EXPECT_EQ(ids(filter), (Ids{"c", "a"}));
}

TEST_F(ThreadSearchTest, SortsByEachKeyInEitherOrder) {
  add("b", 1, Json::object(), ThreadStatus::kInterrupted);
  add("a", 2, Json::object(), ThreadStatus::kError);
  add("c", 3, Json::object(), ThreadStatus::kIdle);
  EXPECT_EQ(ids({}, {"thread_id", true, 10, 0}), (Ids{"a", "b", "c"}));
  EXPECT_EQ(ids({}, {"thread_id", false, 10, 0}), (Ids{"c", "b", "a"}));
  EXPECT_EQ(ids({}, {"updated_at", true, 10, 0}), (Ids{"c", "a", "b"}));
  EXPECT_EQ(ids({}, {"created_at", true, 10, 0}), (Ids{"b", "a", "c"}));
  EXPECT_EQ(ids({}, {"status", true, 10, 0}), (Ids{"a", "c", "b"}));
}

TEST_F(ThreadSearchTest, PagesWithLimitAndOffsetAndCountsAll) {
  for (int i = 0; i < 5; ++i) add("t" + std::to_string(i), i);
  EXPECT_EQ(ids({}, {"created_at", true, 2, 1}), (Ids{"t1", "t2"}));
  EXPECT_EQ(ids({}, {"created_at", true, 2, 4}), (Ids{"t4"}));
  EXPECT_EQ(store_->count_threads({}), 5u);
}

TEST_F(ThreadSearchTest, CountAppliesTheFilter) {
  add("a", 1, {{"k", "v"}});
  add("b", 2, {{"k", "w"}});
  ThreadFilter filter;
  filter.metadata = {{"k", "v"}};
  EXPECT_EQ(store_->count_threads(filter), 1u);
}

TEST_F(ThreadSearchTest, AUserSeesOwnThreadsAndAReviewerThoseWaitingForReview) {
  add("mine", 1, {{"owner", "ada"}});
  add("theirs", 2, {{"owner", "bob"}});
  add("paused", 3, {{"owner", "bob"}}, ThreadStatus::kInterrupted);
  ThreadFilter filter;
  filter.visible = ThreadVisibility{false, "ada", false};
  EXPECT_EQ(ids(filter), (Ids{"mine"}));
  filter.visible.reviewer = true;
  EXPECT_EQ(ids(filter), (Ids{"paused", "mine"}));
  filter.visible = ThreadVisibility{false, "", false};
  EXPECT_EQ(ids(filter), Ids{});
}

TEST_F(ThreadSearchTest, AUsersThreadsAreFoundThroughTheIndexOnOwners) {
  // The index holds the threads that have an owner only; a user's term (a comparison) must
  // still be served by it, in each dialect.
  add("mine", 1, {{"owner", "ada"}});
  add("nobodys", 2);
  add("theirs", 3, {{"owner", "bob"}});
  ThreadFilter filter;
  filter.visible = ThreadVisibility{false, "ada", false};
  EXPECT_EQ(ids(filter), (Ids{"mine"}));
  EXPECT_EQ(store_->count_threads(filter), 1u);

  const std::string plan = plan_of(filter);
  EXPECT_NE(plan.find("server_threads_by_owner"), std::string::npos) << plan;
}

TEST_F(ThreadSearchTest, AReviewersWaitingThreadsAreFoundThroughTheIndexOfThoseAwaitingReview) {
  // The index holds the threads awaiting review only; a reviewer's term must still be served
  // by it, next to the owner's, in each dialect.
  add("mine", 1, {{"owner", "ada"}});
  add("waiting", 2, {{"owner", "bob"}}, ThreadStatus::kInterrupted);
  add("idle", 3, {{"owner", "bob"}});
  ThreadFilter filter;
  filter.visible = ThreadVisibility{false, "ada", true};
  EXPECT_EQ(ids(filter), (Ids{"waiting", "mine"}));
  EXPECT_EQ(store_->count_threads(filter), 2u);
  const std::string plan = plan_of(filter);
  EXPECT_NE(plan.find("server_threads_awaiting_review"), std::string::npos) << plan;
}

TEST_F(ThreadSearchTest, AReviewersPagesOfOwnAndWaitingThreadsFollowOneOrderWithoutRepeats) {
  // Updated at 100 - created: "w3" is the newest update, "o1" the oldest.
  add("o1", 9, {{"owner", "ada"}});
  add("w1", 8, {{"owner", "bob"}}, ThreadStatus::kInterrupted);
  add("both", 7, {{"owner", "ada"}}, ThreadStatus::kInterrupted);
  add("o2", 6, {{"owner", "ada"}});
  add("w2", 5, {{"owner", "bob"}}, ThreadStatus::kInterrupted);
  add("other", 4, {{"owner", "bob"}});
  add("w3", 3, {{"owner", "bob"}}, ThreadStatus::kInterrupted);
  ThreadFilter filter;
  filter.visible = ThreadVisibility{false, "ada", true};
  const Ids all{"w3", "w2", "o2", "both", "w1", "o1"};
  EXPECT_EQ(ids(filter, {"updated_at", false, 10, 0}), all);
  EXPECT_EQ(ids(filter, {"updated_at", false, 2, 2}), (Ids{"o2", "both"}));
  EXPECT_EQ(ids(filter, {"updated_at", false, 3, 4}), (Ids{"w1", "o1"}));
  EXPECT_EQ(ids(filter, {"created_at", true, 3, 1}), (Ids{"w2", "o2", "both"}));
  EXPECT_EQ(store_->count_threads(filter), all.size());
}

TEST_F(ThreadSearchTest, AReviewersInboxHoldsEveryInterruptedThread) {
  add("mine", 1, {{"owner", "ada"}}, ThreadStatus::kInterrupted);
  add("theirs", 2, {{"owner", "bob"}}, ThreadStatus::kInterrupted);
  add("idle", 3, {{"owner", "ada"}});
  ThreadFilter filter;
  filter.status = ThreadStatus::kInterrupted;
  filter.visible = ThreadVisibility{false, "ada", true};
  EXPECT_EQ(ids(filter), (Ids{"theirs", "mine"}));
  EXPECT_EQ(store_->count_threads(filter), 2u);
  filter.visible.reviewer = false;
  EXPECT_EQ(ids(filter), (Ids{"mine"}));
}

}  // namespace
}  // namespace tollgate::server

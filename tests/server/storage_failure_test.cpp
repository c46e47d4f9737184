// Storage failing under a running server (a full disk): the runs it hits fail with 503, the
// workers and the process live on, reads keep being answered, and once writes succeed again
// everything works without a restart. And storage slow to make one thread's write: the other
// threads' runs go on meanwhile. The store is the real SqliteStore behind a double whose writes
// fail or wait on demand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "server/api.h"
#include "server/hooked_store.h"
#include "server/http_server.h"
#include "server/http_test_client.h"
#include "server/ids.h"
#include "server/run_manager.h"
#include "server/server_fixture.h"
#include "server/sql_review_store.h"
#include "server/sql_store.h"
#include "server/thread_streams.h"
#include "tollgate/error.h"
#include "tollgate/memory_saver.h"

namespace tollgate::server {
namespace {

using testing::http_call;

// The real SqliteStore, whose writes throw Error(kUnavailable) "database or disk is full" while
// `full` is set, and whose insert of a run of the thread `hold_inserts_of` names waits until
// release(); reads always pass.
class FaultyStore : public testing::HookedStore {
 public:
  explicit FaultyStore(const std::string& path)
      : HookedStore(path, [this](std::string_view write, const std::string& thread_id) {
          if (full) throw Error::Unavailable("server database: step: database or disk is full");
          if (write == "insert_run") hold(thread_id);
        }) {}
  std::atomic<bool> full{false};

  void hold_inserts_of(const std::string& thread_id) {
    std::lock_guard lock(mutex_);
    held_thread_ = thread_id;
  }
  // Whether an insert is waiting within `patience`.
  bool insert_held(std::chrono::seconds patience) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, patience, [&] { return holding_; });
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      held_thread_.clear();
    }
    changed_.notify_all();
  }
  bool released() {
    std::lock_guard lock(mutex_);
    return held_thread_.empty();
  }

 private:
  void hold(const std::string& thread_id) {
    std::unique_lock lock(mutex_);
    if (held_thread_.empty() || thread_id != held_thread_) return;
    holding_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return held_thread_.empty(); });
    holding_ = false;
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string held_thread_;
  bool holding_ = false;
};

// The server's parts (as Server::start wires them) over the FaultyStore.
class StorageFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::filesystem::temp_directory_path() /
          ("tollgate_storage_failure_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    remove_db();
    store_ = std::make_unique<FaultyStore>(db_.string());
    streams_ = std::make_unique<ThreadStreams>(*store_);
    GraphMap graphs;
    const GraphRegistry registry = testing::test_graphs(gate_);
    for (const auto& [graph_id, entry] : registry.entries()) {
      graphs.emplace(graph_id, entry.factory(saver_));
      AssistantRecord assistant;
      assistant.assistant_id = system_assistant_id(graph_id);
      assistant.graph_id = graph_id;
      assistant.name = graph_id;
      store_->put_assistant(assistant);
    }
    // One worker: a gated run holds it, so a run queued behind it starts when the test says.
    runs_ = std::make_unique<RunManager>(*store_, *streams_, std::move(graphs), 1);
    // As Server::start wires it: decisions claim their review records.
    reviews_ = std::make_unique<SqliteReviewStore>(db_.string());
    runs_->set_review_store(reviews_.get());
    api_ = std::make_unique<ApiContext>(ApiContext{*store_, *runs_, *streams_, saver_, nullptr, false, nullptr, nullptr, std::nullopt});
    add_assistant_routes(router_, *api_);
    add_thread_routes(router_, *api_);
    add_run_routes(router_, *api_);
    add_protocol_routes(router_, *api_);
    runs_->start();
    HttpServerOptions options;
    options.heartbeat_seconds = 0;
    http_ = std::make_unique<HttpServer>(router_, options);
    http_->start();
  }
  void TearDown() override {
    gate_->open = true;
    store_->full = false;
    store_->release();
    http_.reset();
    runs_.reset();
    reviews_.reset();
    api_.reset();
    streams_.reset();
    store_.reset();
    remove_db();
  }
  void remove_db() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_.string() + suffix);
  }
  testing::ClientResponse call(const std::string& method, const std::string& target,
                               const Json& body = Json()) {
    return http_call(http_->port(), method, target, body.is_null() ? "" : body.dump());
  }
  std::string new_thread() {
    return call("POST", "/threads", Json::object()).json()["thread_id"].get<std::string>();
  }
  std::string paused_thread() {
    std::string thread = new_thread();
    auto paused = call("POST", "/threads/" + thread + "/runs/wait",
                       {{"assistant_id", "hitl"}, {"input", Json::object()}});
    EXPECT_EQ(paused.status, 200) << paused.body;
    return thread;
  }
  // Approves `paused` while a gated run (on a new thread, `busy`) holds the only worker, then
  // lets the resume start with writes failing, so that its first write fails; answers what the
  // client got. Writes succeed again once it returns.
  testing::ClientResponse resume_whose_first_write_fails(const std::string& paused,
                                                         std::string& busy) {
    busy = new_thread();
    EXPECT_EQ(call("POST", "/threads/" + busy + "/runs",
                   {{"assistant_id", "gated"}, {"input", Json::object()}})
                  .status,
              200);
    testing::ClientResponse resumed;
    std::thread client([&] {
      resumed = call("POST", "/threads/" + paused + "/runs/wait",
                     {{"assistant_id", "hitl"}, {"command", {{"resume", "approve"}}}});
    });
    for (int i = 0; i < 1000 && call("GET", "/threads/" + paused).json()["status"] != "busy"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    store_->full = true;
    gate_->open = true;  // the gated run ends, the resume starts: its first write fails
    client.join();
    store_->full = false;
    return resumed;
  }
  // Polls (no timing is asserted) until the thread reads `status`.
  bool eventually_status(const std::string& thread, const std::string& status) {
    for (int i = 0; i < 1000; ++i) {
      if (call("GET", "/threads/" + thread).json()["status"] == status) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  std::filesystem::path db_;
  std::shared_ptr<testing::Gate> gate_ = std::make_shared<testing::Gate>();
  std::shared_ptr<Saver> saver_ = make_memory_saver();
  std::unique_ptr<FaultyStore> store_;
  std::unique_ptr<ThreadStreams> streams_;
  std::unique_ptr<RunManager> runs_;
  std::unique_ptr<SqliteReviewStore> reviews_;
  std::unique_ptr<ApiContext> api_;
  Router router_;
  std::unique_ptr<HttpServer> http_;
};

TEST_F(StorageFailureTest, WhileWritesFailAResumeIs503AndReadsAreStillAnswered) {
  std::string thread = paused_thread();
  store_->full = true;
  auto resumed = call("POST", "/threads/" + thread + "/runs/wait",
                      {{"assistant_id", "hitl"}, {"command", {{"resume", "approve"}}}});
  EXPECT_EQ(resumed.status, 503) << resumed.body;
  auto read = call("GET", "/threads/" + thread);
  EXPECT_EQ(read.status, 200);
  EXPECT_EQ(read.json()["status"], "interrupted");
  EXPECT_EQ(call("GET", "/threads/" + thread + "/state").status, 200);
  EXPECT_EQ(call("GET", "/threads/" + thread + "/runs").status, 200);
  EXPECT_EQ(call("POST", "/threads/search", Json::object()).status, 200);
}

TEST_F(StorageFailureTest, ARunWhoseFirstWriteFailsAnswers503AndLeavesItsPausedThreadAnswerable) {
  std::string paused = paused_thread();
  std::string busy;
  auto resumed = resume_whose_first_write_fails(paused, busy);
  EXPECT_EQ(resumed.status, 503) << resumed.body;
  ASSERT_TRUE(eventually_status(paused, "interrupted"));
  ASSERT_TRUE(eventually_status(busy, "idle"));
  auto again = call("POST", "/threads/" + paused + "/runs/wait",
                    {{"assistant_id", "hitl"}, {"command", {{"resume", "approve"}}}});
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.json()["decision"], "approve");
}

// The decision was accepted (its review claimed) and then failed with 503 before it was taken:
// the review is pending again, so the next decision is not refused as already accepted.
TEST_F(StorageFailureTest, AResumeThatFailedWith503BeforeItWasTakenLeavesTheReviewPending) {
  std::string paused = paused_thread();
  std::string busy;
  ASSERT_EQ(resume_whose_first_write_fails(paused, busy).status, 503);
  ASSERT_TRUE(eventually_status(paused, "interrupted"));
  const std::vector<ReviewRecord> records = reviews_->list(paused);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].status, ReviewStatus::kPending);
}

TEST_F(StorageFailureTest, TheEndOfARunIsStoredOnceSpaceIsBackWithoutARestart) {
  std::string thread = new_thread();
  auto run = call("POST", "/threads/" + thread + "/runs",
                  {{"assistant_id", "gated"}, {"input", Json::object()}});
  ASSERT_EQ(run.status, 200) << run.body;
  const std::string run_path =
      "/threads/" + thread + "/runs/" + run.json()["run_id"].get<std::string>();
  for (int i = 0; i < 1000 && gate_->entered == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GT(gate_->entered, 0);
  store_->full = true;
  gate_->open = true;
  EXPECT_EQ(call("GET", run_path + "/join").status, 503);
  EXPECT_EQ(call("GET", "/threads/" + thread).status, 200);
  store_->full = false;
  ASSERT_TRUE(eventually_status(thread, "idle"));
  EXPECT_EQ(call("GET", run_path).json()["status"], "success");
  auto next = call("POST", "/threads/" + thread + "/runs/wait",
                   {{"assistant_id", "gated"}, {"input", Json::object()}});
  EXPECT_EQ(next.status, 200) << next.body;
}

TEST_F(StorageFailureTest, ANewRunWhileWritesFailIs503) {
  std::string thread = new_thread();
  store_->full = true;
  auto response = call("POST", "/threads/" + thread + "/runs/wait",
                       {{"assistant_id", "gated"}, {"input", Json::object()}});
  EXPECT_EQ(response.status, 503) << response.body;
  store_->full = false;
  gate_->open = true;
  EXPECT_EQ(call("POST", "/threads/" + thread + "/runs/wait",
                 {{"assistant_id", "gated"}, {"input", Json::object()}})
                .status,
            200);
}

TEST_F(StorageFailureTest, ARunInsertTheStorageHoldsHoldsBackNoOtherThreadsRun) {
  const std::string slow = new_thread();
  const std::string other = new_thread();
  store_->hold_inserts_of(slow);
  testing::ClientResponse slow_run;
  std::thread slow_client([&] {
    slow_run = call("POST", "/threads/" + slow + "/runs/wait",
                    {{"assistant_id", "hitl"}, {"input", Json::object()}});
  });
  ASSERT_TRUE(store_->insert_held(std::chrono::seconds(60)));
  // Meanwhile another thread's run is submitted, executed and answered.
  std::atomic<bool> other_done{false};
  bool answered_while_held = false;
  testing::ClientResponse other_run;
  std::thread other_client([&] {
    other_run = call("POST", "/threads/" + other + "/runs/wait",
                     {{"assistant_id", "hitl"}, {"input", Json::object()}});
    answered_while_held = !store_->released();
    other_done = true;
  });
  // Released after the other run is answered, or after a minute so that a failure cannot hang.
  for (int i = 0; i < 6000 && !other_done; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  store_->release();
  other_client.join();
  slow_client.join();
  EXPECT_TRUE(answered_while_held) << "the other thread's run waited for the held insert";
  EXPECT_EQ(other_run.status, 200) << other_run.body;
  EXPECT_EQ(slow_run.status, 200) << slow_run.body;
  EXPECT_EQ(call("GET", "/threads/" + other).json()["status"], "interrupted");
  EXPECT_EQ(call("GET", "/threads/" + slow).json()["status"], "interrupted");
}

}  // namespace
}  // namespace tollgate::server

// Storage failing under a running server (a full disk): the runs it hits fail with 503, the
// workers and the process live on, reads keep being answered, and once writes succeed again
// everything works without a restart. The store is the real SqliteStore behind a double whose
// writes fail on demand.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "server/api.h"
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

// A SqliteStore whose writes throw Error(kUnavailable) "database or disk is full" while
// `full` is set; reads always pass.
class DiskFullStore : public ServerStore {
  template <typename Write>
  auto write(Write body) {
    if (full) throw Error::Unavailable("server database: step: database or disk is full");
    return body();
  }

 public:
  explicit DiskFullStore(const std::string& path) : store_(path) {}
  std::atomic<bool> full{false};

  void put_assistant(const AssistantRecord& a) override {
    write([&] { store_.put_assistant(a); });
  }
  std::optional<AssistantRecord> get_assistant(const std::string& id) override {
    return store_.get_assistant(id);
  }
  std::vector<AssistantRecord> list_assistants() override { return store_.list_assistants(); }
  void delete_assistant(const std::string& id) override {
    write([&] { store_.delete_assistant(id); });
  }
  bool create_thread(const ThreadRecord& t) override {
    return write([&] { return store_.create_thread(t); });
  }
  std::optional<ThreadRecord> get_thread_head(const std::string& id) override {
    return store_.get_thread_head(id);
  }
  std::optional<ThreadRecord> get_thread(const std::string& id) override {
    return store_.get_thread(id);
  }
  void update_thread(const ThreadRecord& t) override {
    write([&] { store_.update_thread(t); });
  }
  std::optional<ThreadRecord> merge_thread_metadata(const std::string& id, const Json& metadata,
                                                    std::int64_t at) override {
    return write([&] { return store_.merge_thread_metadata(id, metadata, at); });
  }
  bool set_thread_outcome(const std::string& id, const ThreadOutcome& outcome,
                          std::vector<QueuedNotification>* notices) override {
    return write([&] { return store_.set_thread_outcome(id, outcome, notices); });
  }
  std::vector<ThreadRecord> list_threads() override { return store_.list_threads(); }
  std::vector<ThreadRecord> search_threads(const ThreadFilter& filter,
                                           const ThreadPage& page) override {
    return store_.search_threads(filter, page);
  }
  std::size_t count_threads(const ThreadFilter& filter) override {
    return store_.count_threads(filter);
  }
  std::vector<std::string> thread_ids_with_stored_status(ThreadStatus status) override {
    return store_.thread_ids_with_stored_status(status);
  }
  void delete_thread(const std::string& id) override {
    write([&] { store_.delete_thread(id); });
  }
  bool set_thread_ttl(const std::string& id, std::optional<std::int64_t> ttl_ms) override {
    return write([&] { return store_.set_thread_ttl(id, ttl_ms); });
  }
  std::vector<std::string> expired_threads(std::int64_t now, std::size_t limit) override {
    return store_.expired_threads(now, limit);
  }
  std::vector<std::string> idle_threads_updated_since(std::int64_t since) override {
    return store_.idle_threads_updated_since(since);
  }
  std::size_t prune_events(std::int64_t before) override {
    return write([&] { return store_.prune_events(before); });
  }
  void put_run(const RunRecord& r) override {
    write([&] { store_.put_run(r); });
  }
  bool insert_run(const RunRecord& r, const Json& metadata,
                  std::vector<QueuedNotification>* notices) override {
    return write([&] { return store_.insert_run(r, metadata, notices); });
  }
  std::optional<int> begin_attempt(const std::string& id, RunStatus status,
                                   std::int64_t at) override {
    return write([&] { return store_.begin_attempt(id, status, at); });
  }
  bool end_run(const RunRecord& r, bool keep, const ThreadOutcome* thread,
               std::vector<QueuedNotification>* notices) override {
    return write([&] { return store_.end_run(r, keep, thread, notices); });
  }
  std::optional<RunRecord> get_run(const std::string& id) override { return store_.get_run(id); }
  std::vector<RunRecord> list_runs(const std::string& id) override { return store_.list_runs(id); }
  std::vector<RunRecord> list_runs_page(const std::string& id, std::size_t limit,
                                        std::size_t offset) override {
    return store_.list_runs_page(id, limit, offset);
  }
  std::vector<RunRecord> list_runs_with_status(RunStatus status) override {
    return store_.list_runs_with_status(status);
  }
  void delete_run(const std::string& id) override {
    write([&] { store_.delete_run(id); });
  }
  void append_run_event(const std::string& id, LogEntryPtr e) override {
    store_.append_run_event(id, e);  // queued; never fails
  }
  std::vector<LogEntry> run_events(const std::string& id, std::int64_t after) override {
    return store_.run_events(id, after);
  }
  void append_thread_event(const std::string& id, LogEntryPtr e) override {
    store_.append_thread_event(id, e);
  }
  std::int64_t last_thread_event_seq(const std::string& id) override {
    return store_.last_thread_event_seq(id);
  }
  std::vector<LogEntry> thread_events(const std::string& id, std::int64_t after,
                                      std::int64_t* last_seq) override {
    return store_.thread_events(id, after, last_seq);
  }

 private:
  SqliteStore store_;
};

// The server's parts (as Server::start wires them) over the DiskFullStore.
class StorageFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::filesystem::temp_directory_path() /
          ("tollgate_storage_failure_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    remove_db();
    store_ = std::make_unique<DiskFullStore>(db_.string());
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
  std::unique_ptr<DiskFullStore> store_;
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

}  // namespace
}  // namespace tollgate::server

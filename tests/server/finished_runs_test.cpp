// The finished runs the run manager keeps in memory for joins and answers: the newest, bounded
// by count and by the bytes of their events, and one let go still answers from the store.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "server/run_manager.h"
#include "server/sql_store.h"
#include "server/thread_streams.h"
#include "tollgate/memory_saver.h"

namespace tollgate::server {
namespace {

// One node that writes a 100 KB text: each run's values events hold it.
std::shared_ptr<const CompiledGraph> big_state_graph() {
  StateSchema schema;
  schema.last_value("text");
  StateGraph g(schema);
  g.add_node("write", [](const State&, Runtime&) -> NodeResult {
    return Json{{"text", std::string(100 * 1024, 'x')}};
  });
  g.add_edge(START, "write").add_edge("write", END);
  CompileOptions options;
  options.checkpointer = make_memory_saver();
  options.name = "big";
  return g.compile(options);
}

class FinishedRunsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tollgate_finished_runs_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    remove();
    store_ = std::make_unique<SqliteStore>(path_.string());
    streams_ = std::make_unique<ThreadStreams>(*store_);
    AssistantRecord assistant;
    assistant.assistant_id = "assistant-1";
    assistant.graph_id = "big";
    store_->put_assistant(assistant);
    runs_ =
        std::make_unique<RunManager>(*store_, *streams_, GraphMap{{"big", big_state_graph()}}, 1);
    runs_->start();
  }
  void TearDown() override {
    runs_.reset();
    streams_.reset();
    store_.reset();
    remove();
  }
  void remove() {
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path_.string() + suffix);
  }
  // A run on a thread of its own, waited for until it ended.
  RunRecord run_to_end(int i) {
    ThreadRecord thread;
    thread.thread_id = "thread-" + std::to_string(i);
    store_->create_thread(thread);
    RunRequest request;
    request.thread_id = thread.thread_id;
    request.assistant_id = "assistant-1";
    request.input = Json::object();
    const RunRecord run = runs_->submit(request);
    while (!runs_->result(run.run_id)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return run;
  }

  std::filesystem::path path_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<ThreadStreams> streams_;
  std::unique_ptr<RunManager> runs_;
};

TEST_F(FinishedRunsTest, TheOldestGoOnceTheirEventsPassTheBytesKept) {
  runs_->set_finished_bytes_kept(std::size_t{1} << 20);  // ~5 runs of ~200 KB of events each
  std::vector<RunRecord> ran;
  for (int i = 0; i < 24; ++i) ran.push_back(run_to_end(i));
  // The newest 16 whatever their size, none of the others.
  EXPECT_EQ(runs_->finished_runs_kept(), 16u);
  // One let go still has its events and its answer, from the store.
  std::shared_ptr<EventLog> events = runs_->events(ran.front().run_id);
  ASSERT_NE(events, nullptr);
  EXPECT_TRUE(events->closed());
  EXPECT_GT(events->size(), 0u);
  std::shared_ptr<const std::string> result = runs_->result(ran.front().run_id);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(Json::parse(*result)["text"].get<std::string>().size(), 100u * 1024);
}

TEST_F(FinishedRunsTest, UnderTheBytesKeptTheyAreKeptByCount) {
  for (int i = 0; i < 24; ++i) run_to_end(i);
  EXPECT_EQ(runs_->finished_runs_kept(), 24u);
}

}  // namespace
}  // namespace tollgate::server

// Crash safety of the SQLite saver: a child process writes checkpoints and writes in a loop
// and is killed with SIGKILL at a random moment; the file must then hold a complete, readable
// history whose latest checkpoint a new process can continue from.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "checkpoint/saver_test_util.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate::testing {
namespace {

constexpr int kWritesPerStep = 3;

// The child: writes forever, reporting each completed step (checkpoint + its writes) on `fd`.
[[noreturn]] void write_forever(const std::string& path, int fd) {
  try {
    auto saver = open_sqlite_saver(path);
    MessageThread thread(*saver, "t");
    for (int i = 0;; ++i) {
      CheckpointConfig config = thread.append(message(i));
      std::vector<std::pair<std::string, Json>> writes;
      for (int w = 0; w < kWritesPerStep; ++w)
        writes.emplace_back("channel", Json{{"step", i}, {"w", w}});
      saver->put_writes(config, writes, "task-" + std::to_string(i));
      const char done = 1;
      if (write(fd, &done, 1) != 1) _exit(3);
    }
  } catch (...) {
    _exit(2);
  }
}

class SqliteCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tollgate-crash-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string dir_;
};

TEST_F(SqliteCrashTest, KilledWriterLeavesACompleteHistoryThatCanBeContinued) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int round = 0; round < 3; ++round) {
    const std::string path = dir_ + "/crash-" + std::to_string(round) + ".db";
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(pipe_fds[0]);
      write_forever(path, pipe_fds[1]);
    }
    close(pipe_fds[1]);
    // Let the child complete a random number of steps, then kill it mid-way through more.
    const int target = std::uniform_int_distribution<int>(5, 300)(rng);
    int completed = 0;
    char buffer[64];
    while (completed < target) {
      const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
      ASSERT_GT(n, 0) << "the writer died on its own";
      completed += static_cast<int>(n);
    }
    usleep(std::uniform_int_distribution<useconds_t>(0, 3000)(rng));
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    close(pipe_fds[0]);
    ASSERT_TRUE(WIFSIGNALED(status));

    auto saver = open_sqlite_saver(path);
    auto latest = saver->get_tuple({"t", "", ""});
    ASSERT_TRUE(latest);
    const int step = latest->metadata.at("step").get<int>();
    EXPECT_GE(step, completed - 1);
    // Complete: every message of every step, and the step's writes all or none.
    Json expected = Json::array();
    for (int i = 0; i <= step; ++i) expected.push_back(message(i));
    EXPECT_EQ(*latest->checkpoint.channel_values.at("messages"), expected);
    EXPECT_EQ(*latest->checkpoint.channel_values.at("step"), step);
    EXPECT_TRUE(latest->pending_writes.empty() || latest->pending_writes.size() == kWritesPerStep);
    if (step == completed - 1) {
      EXPECT_EQ(latest->pending_writes.size(), std::size_t{kWritesPerStep});
    }
    ListQuery query;
    query.thread_id = "t";
    auto history = saver->list(query);
    ASSERT_EQ(history.size(), static_cast<std::size_t>(step + 1));
    for (const CheckpointTuple& tuple : history) {
      const int s = tuple.metadata.at("step").get<int>();
      ASSERT_EQ(tuple.checkpoint.channel_values.at("messages")->size(),
                static_cast<std::size_t>(s + 1));
      if (s < step) {
        ASSERT_EQ(tuple.pending_writes.size(), std::size_t{kWritesPerStep}) << "step " << s;
      }
    }

    // put continues from the latest checkpoint.
    MessageThread thread(*saver, "t");
    thread.fork_from(latest->config, expected, step + 1);
    CheckpointConfig next = thread.append(message(step + 1));
    expected.push_back(message(step + 1));
    auto continued = saver->get_tuple(next);
    ASSERT_TRUE(continued);
    EXPECT_EQ(*continued->checkpoint.channel_values.at("messages"), expected);
    EXPECT_EQ(continued->parent_config, latest->config);
  }
}

}  // namespace
}  // namespace tollgate::testing

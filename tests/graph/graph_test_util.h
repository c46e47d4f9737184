// Shared helpers of the graph tests: a fixture parameterised over the savers, and small
// builders for configs and logs.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tollgate/error.h"
#include "tollgate/graph.h"
#include "tollgate/memory_saver.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate::testing {

enum class SaverKind { kMemory, kSqlite };

// A thread-safe list of what nodes did, in order.
class Log {
 public:
  void add(std::string line) {
    std::lock_guard lock(mutex_);
    lines_.push_back(std::move(line));
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  std::size_t count(const std::string& line) const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& l : lines_) n += l == line ? 1 : 0;
    return n;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

inline RunConfig on_thread(const std::string& thread_id) {
  RunConfig config;
  config.thread_id = thread_id;
  return config;
}

// Compile options with a checkpointer and static breakpoints.
inline CompileOptions options(std::shared_ptr<Saver> saver, std::vector<std::string> before = {},
                              std::vector<std::string> after = {}) {
  CompileOptions result;
  result.checkpointer = std::move(saver);
  result.interrupt_before = std::move(before);
  result.interrupt_after = std::move(after);
  return result;
}

inline Command resume(Json value) {
  Command command;
  command.resume = std::move(value);
  return command;
}

inline Command resume_map(std::map<std::string, Json> answers) {
  Command command;
  command.resume_map = std::move(answers);
  return command;
}

// Runs `fn` and returns the tollgate::Error it throws (fails the test if it throws none).
template <typename Fn>
Error expect_error(Fn&& fn) {
  try {
    fn();
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "expected a tollgate::Error";
  return Error(ErrorCode::kInternal, "no error");
}

class SaverTest : public ::testing::TestWithParam<SaverKind> {
 protected:
  void SetUp() override {
    if (GetParam() == SaverKind::kMemory) {
      saver_ = make_memory_saver();
    } else {
      static std::atomic<int> counter{0};
      path_ = "/tmp/tollgate_graph_test_" + std::to_string(::getpid()) + "_" +
              std::to_string(counter++) + ".db";
      saver_ = open_sqlite_saver(path_);
    }
  }
  void TearDown() override {
    saver_.reset();
    if (!path_.empty()) {
      std::remove(path_.c_str());
      std::remove((path_ + "-wal").c_str());
      std::remove((path_ + "-shm").c_str());
    }
  }

  std::shared_ptr<Saver> saver_;
  std::string path_;
};

inline std::string saver_name(const ::testing::TestParamInfo<SaverKind>& info) {
  return info.param == SaverKind::kMemory ? "Memory" : "Sqlite";
}

#define TOLLGATE_INSTANTIATE_SAVERS(Suite)                                                  \
  INSTANTIATE_TEST_SUITE_P(Savers, Suite,                                                   \
                           ::testing::Values(::tollgate::testing::SaverKind::kMemory,       \
                                             ::tollgate::testing::SaverKind::kSqlite),      \
                           ::tollgate::testing::saver_name)

}  // namespace tollgate::testing

// A scratch directory per test for the SQL layer's tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include "tollgate/error.h"

namespace tollgate::sql {

class ScratchFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "tollgate-sql-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::string path(const std::string& name = "test.db") const { return dir_ + "/" + name; }

  std::string dir_;
};

// The Error `operation` throws (a test failure, and an Internal error, when it throws none).
inline Error error_of(const std::function<void()>& operation) {
  try {
    operation();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error::Internal("no error");
}

inline ErrorCode code_of(const std::function<void()>& operation) {
  return error_of(operation).code();
}

}  // namespace tollgate::sql

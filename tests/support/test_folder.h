// A folder of the running test's own, for tests that touch the file system:
//   TestFolder folder("demo");   // <tmp>/tollgate-demo-<pid>-<test name>, new and empty
//   folder.path() / "sandbox"
// The path is canonical (symlinks in the temp folder resolved), so tests may compare it with
// what the code under test resolves. The folder and everything in it go with the object.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

namespace tollgate::testing {

class TestFolder {
 public:
  explicit TestFolder(const std::string& prefix) {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    // A parameterised test's name is "Name/0": the '/' would make the folder a child of a
    // folder nobody removes.
    std::string name = test != nullptr ? test->name() : "none";
    std::replace(name.begin(), name.end(), '/', '_');
    path_ = std::filesystem::temp_directory_path() /
            ("tollgate-" + prefix + "-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
    path_ = std::filesystem::canonical(path_);
  }
  ~TestFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TestFolder(const TestFolder&) = delete;
  TestFolder& operator=(const TestFolder&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tollgate::testing

// sandbox_relative_path: one spelling per file inside the sandbox, nothing for a path outside it.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_folder.h"
#include "tollgate/when_rules.h"

namespace tollgate {
namespace {
namespace fs = std::filesystem;

std::optional<std::string> as_text(const std::string& path) {
  return sandbox_relative_path(path, {});
}

TEST(SandboxPath, TheFourSpellingsOfOneFileAreOnePath) {
  for (const char* path : {"secrets/k", "./secrets/k", "secrets//k", "a/../secrets/k"}) {
    EXPECT_EQ(as_text(path), "secrets/k") << path;
  }
}

TEST(SandboxPath, ATrailingSlashIsDropped) {
  EXPECT_EQ(as_text("secrets/"), "secrets");
}

TEST(SandboxPath, TheSandboxItselfIsTheEmptyPath) {
  EXPECT_EQ(as_text("."), "");
  EXPECT_EQ(as_text("a/.."), "");
}

TEST(SandboxPath, DotDotEscapesAreRefused) {
  EXPECT_EQ(as_text(".."), std::nullopt);
  EXPECT_EQ(as_text("../secrets/k"), std::nullopt);
  EXPECT_EQ(as_text("a/../../secrets/k"), std::nullopt);
  EXPECT_EQ(as_text("./../k"), std::nullopt);
}

TEST(SandboxPath, AnEmptyPathIsRefused) {
  EXPECT_EQ(as_text(""), std::nullopt);
}

TEST(SandboxPath, WithoutASandboxEveryAbsolutePathIsOutside) {
  EXPECT_EQ(as_text("/secrets/k"), std::nullopt);
}

class SandboxPathOnDisk : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(sandbox_ / "secrets"); }

  testing::TestFolder folder_{"sandbox-path"};
  const fs::path root_ = folder_.path();
  const fs::path sandbox_ = root_ / "sandbox";
};

TEST_F(SandboxPathOnDisk, AnAbsolutePathInsideTheSandboxBecomesRelative) {
  EXPECT_EQ(sandbox_relative_path((sandbox_ / "secrets" / "k").string(), sandbox_), "secrets/k");
  EXPECT_EQ(sandbox_relative_path((sandbox_ / "secrets/../secrets//k").string(), sandbox_),
            "secrets/k");
}

TEST_F(SandboxPathOnDisk, RelativeSpellingsAgreeWithTheAbsoluteOne) {
  for (const char* path : {"secrets/k", "./secrets/k", "secrets//k", "a/../secrets/k"}) {
    EXPECT_EQ(sandbox_relative_path(path, sandbox_), "secrets/k") << path;
  }
}

TEST_F(SandboxPathOnDisk, AnAbsolutePathOutsideTheSandboxIsRefused) {
  EXPECT_EQ(sandbox_relative_path((root_ / "k").string(), sandbox_), std::nullopt);
  EXPECT_EQ(sandbox_relative_path((sandbox_ / ".." / "k").string(), sandbox_), std::nullopt);
}

TEST_F(SandboxPathOnDisk, DotDotOutOfTheSandboxIsRefused) {
  EXPECT_EQ(sandbox_relative_path("../k", sandbox_), std::nullopt);
  EXPECT_EQ(sandbox_relative_path("secrets/../../k", sandbox_), std::nullopt);
}

TEST_F(SandboxPathOnDisk, ASymlinkInsideIsFollowed) {
  fs::create_directory_symlink(sandbox_ / "secrets", sandbox_ / "alias");
  EXPECT_EQ(sandbox_relative_path("alias/k", sandbox_), "secrets/k");
}

TEST_F(SandboxPathOnDisk, ASymlinkLeadingOutIsRefused) {
  fs::create_directory_symlink(root_, sandbox_ / "out");
  EXPECT_EQ(sandbox_relative_path("out/k", sandbox_), std::nullopt);
}

}  // namespace
}  // namespace tollgate

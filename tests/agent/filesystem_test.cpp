// The deep agent's filesystem: path normalisation, glob matching, permission rules, the
// review policy they imply, the confined directory backend and the tools' answers — path
// attacks included.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tollgate/error.h"
#include "tollgate/filesystem.h"

namespace tollgate {
namespace {

namespace fs = std::filesystem;

Json run(const std::vector<Tool>& tools, const std::string& name, const Json& args) {
  const Tool* tool = find_tool(tools, name);
  EXPECT_NE(tool, nullptr) << name;
  return tool->invoke(args, ToolContext{});
}

std::string content(const Json& result) { return result.value("content", ""); }

bool reviews(const InterruptOn& policy, const std::string& tool, const Json& args) {
  const auto it = policy.find(tool);
  if (it == policy.end()) return false;
  const Json call{{"id", "c"}, {"name", tool}, {"args", args}};
  return it->second.config.when(ToolCallReview{call, nullptr, nullptr});
}

// --------------------------------------------------------------------------- paths

TEST(VirtualPath, NormalisesEverySpellingToOne) {
  EXPECT_EQ(normalize_virtual_path("//secrets/k"), "/secrets/k");
  EXPECT_EQ(normalize_virtual_path("/./secrets/k"), "/secrets/k");
  EXPECT_EQ(normalize_virtual_path("secrets//k/"), "/secrets/k");
  EXPECT_EQ(normalize_virtual_path("\\secrets\\k"), "/secrets/k");
  EXPECT_EQ(normalize_virtual_path(""), "/");
  EXPECT_EQ(normalize_virtual_path("."), "/");
}

TEST(VirtualPath, RefusesTraversalHomeAndDrivePaths) {
  EXPECT_THROW(normalize_virtual_path("/secrets/../secrets/k"), Error);
  EXPECT_THROW(normalize_virtual_path("../etc/passwd"), Error);
  EXPECT_THROW(normalize_virtual_path("~/k"), Error);
  EXPECT_THROW(normalize_virtual_path("C:/Windows"), Error);
  try {
    normalize_virtual_path("/a/../b");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "Path traversal not allowed: /a/../b");
  }
}

TEST(GlobMatch, DoubleStarBracesClassesAndDotNames) {
  EXPECT_TRUE(glob_match("/secrets/k", "/secrets/**"));
  EXPECT_TRUE(glob_match("/secrets/a/b/c", "/secrets/**"));
  EXPECT_TRUE(glob_match("/secrets", "/secrets/**"));
  EXPECT_FALSE(glob_match("/secretsx/k", "/secrets/**"));
  EXPECT_TRUE(glob_match("/a/x.yaml", "/a/*.{yml,yaml}"));
  EXPECT_TRUE(glob_match("/a/f1.txt", "/a/f[0-9].txt"));
  EXPECT_FALSE(glob_match("/a/fx.txt", "/a/f[!a-z].txt"));
  EXPECT_TRUE(glob_match("/secrets/.env", "/secrets/**"));          // rules fail closed
  EXPECT_FALSE(glob_match(".env", "*", /*match_dot_names=*/false));  // listings do not
  EXPECT_TRUE(glob_match(".env", ".*", false));
}

TEST(GlobMatch, ManyDoubleStarsStayCheap) {
  const std::string path = "/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/b";
  EXPECT_FALSE(glob_match(path, "/**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/c"));
}

// --------------------------------------------------------------------- permissions

TEST(FilesystemPermission, RefusesRelativeTraversalAndHomePaths) {
  EXPECT_THROW(FilesystemPermission({"write"}, {"secrets/**"}, "deny"), Error);
  EXPECT_THROW(FilesystemPermission({"write"}, {"/secrets/../x"}, "deny"), Error);
  EXPECT_THROW(FilesystemPermission({"write"}, {"/~/x"}, "deny"), Error);
  EXPECT_THROW(FilesystemPermission({"execute"}, {"/x"}, "deny"), Error);
  EXPECT_THROW(FilesystemPermission({"read"}, {"/x"}, "block"), Error);
  EXPECT_THROW(FilesystemPermission({}, {"/x"}, "deny"), Error);
}

TEST(FilesystemPermission, FirstMatchingRuleWinsAndNoMatchAllows) {
  const std::vector<FilesystemPermission> rules{
      FilesystemPermission({"read"}, {"/secrets/public/**"}, "allow"),
      FilesystemPermission({"read", "write"}, {"/secrets/**"}, "deny")};
  using Op = FilesystemOperation;
  EXPECT_EQ(check_permission(rules, Op::kRead, "/secrets/public/a"), PermissionMode::kAllow);
  EXPECT_EQ(check_permission(rules, Op::kWrite, "/secrets/public/a"), PermissionMode::kDeny);
  EXPECT_EQ(check_permission(rules, Op::kRead, "/secrets/k"), PermissionMode::kDeny);
  EXPECT_EQ(check_permission(rules, Op::kRead, "/notes.txt"), PermissionMode::kAllow);
}

TEST(FilesystemPermission, ParsesRulesAndNamesTheBadEntry) {
  const auto rules = parse_filesystem_permissions(
      Json::parse(R"([{"operations":["write"],"paths":["/secrets/**"],"mode":"interrupt"}])"));
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].mode(), PermissionMode::kInterrupt);
  try {
    parse_filesystem_permissions(Json::parse(R"([{"operations":["read"],"paths":["x"]}])"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "permissions[0]: Permission path must start with '/': 'x'");
  }
}

TEST(PermissionReview, ExactToolsPauseOnlyOnAnInterruptPath) {
  const InterruptOn policy = interrupt_on_from_permissions(
      {FilesystemPermission({"write"}, {"/secrets/**"}, "interrupt")});
  EXPECT_TRUE(reviews(policy, "write_file", {{"file_path", "/secrets/key.txt"}}));
  EXPECT_TRUE(reviews(policy, "write_file", {{"file_path", "//secrets/key.txt"}}));
  EXPECT_TRUE(reviews(policy, "edit_file", {{"file_path", "/./secrets/key.txt"}}));
  EXPECT_FALSE(reviews(policy, "write_file", {{"file_path", "/notes.txt"}}));
  EXPECT_EQ(policy.count("read_file"), 0u);  // no read rule interrupts
  EXPECT_EQ(policy.at("write_file").config.allowed_decisions,
            (std::vector<std::string>{"approve", "edit", "reject", "respond"}));
}

TEST(PermissionReview, AnEarlierDenyRuleWinsOverAnInterrupt) {
  const InterruptOn policy = interrupt_on_from_permissions(
      {FilesystemPermission({"write"}, {"/secrets/locked/**"}, "deny"),
       FilesystemPermission({"write"}, {"/secrets/**"}, "interrupt")});
  EXPECT_FALSE(reviews(policy, "write_file", {{"file_path", "/secrets/locked/k"}}));
  EXPECT_TRUE(reviews(policy, "write_file", {{"file_path", "/secrets/k"}}));
}

TEST(PermissionReview, BulkToolsPauseWhenTheirSubtreeOverlaps) {
  const InterruptOn policy = interrupt_on_from_permissions(
      {FilesystemPermission({"read", "write"}, {"/secrets/**"}, "interrupt")});
  EXPECT_TRUE(reviews(policy, "ls", {{"path", "/"}}));
  EXPECT_TRUE(reviews(policy, "ls", {{"path", "."}}));
  EXPECT_TRUE(reviews(policy, "ls", {{"path", "/secrets/sub"}}));
  EXPECT_FALSE(reviews(policy, "ls", {{"path", "/secret"}}));
  EXPECT_TRUE(reviews(policy, "grep", {{"pattern", "k"}}));  // no path: anywhere
  EXPECT_TRUE(reviews(policy, "glob", {{"pattern", "/secrets/*"}, {"path", "/workspace"}}));
  EXPECT_TRUE(reviews(policy, "glob", {{"pattern", "../**"}, {"path", "/workspace"}}));
  EXPECT_FALSE(reviews(policy, "glob", {{"pattern", "*.md"}, {"path", "/workspace"}}));
  EXPECT_TRUE(reviews(policy, "delete", {{"file_path", "/"}}));
  EXPECT_FALSE(reviews(policy, "delete", {{"file_path", "/workspace/a"}}));
}

// ------------------------------------------------------------- directory backend

class DirectoryFilesystem : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::path(::testing::TempDir()) / ("tollgate_fs_" + std::to_string(::getpid()));
    fs::remove_all(base_);
    root_ = base_ / "root";
    outside_ = base_ / "outside";
    fs::create_directories(root_ / "secrets");
    fs::create_directories(root_ / "work");
    fs::create_directories(outside_);
    write(root_ / "secrets" / "k", "the key");
    write(root_ / "work" / "notes.txt", "alpha\nbeta key\n");
    write(outside_ / "passwd", "root:x:0:0");
    tools_ = make_filesystem_tools(
        make_directory_backend(root_.string()),
        {FilesystemPermission({"read", "write"}, {"/secrets/**"}, "deny")});
  }
  void TearDown() override { fs::remove_all(base_); }

  static void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

  fs::path base_, root_, outside_;
  std::vector<Tool> tools_;
};

TEST_F(DirectoryFilesystem, ReadsWritesEditsAndDeletesInsideTheRoot) {
  EXPECT_EQ(content(run(tools_, "read_file", {{"file_path", "/work/notes.txt"}})),
            "1  alpha\n2  beta key");
  EXPECT_EQ(content(run(tools_, "write_file", {{"file_path", "/work/new/a.txt"}, {"content", "x"}})),
            "Updated file /work/new/a.txt");
  EXPECT_EQ(content(run(tools_, "edit_file", {{"file_path", "/work/new/a.txt"},
                                             {"old_string", "x"}, {"new_string", "y"}})),
            "Successfully replaced 1 instance(s) of the string in '/work/new/a.txt'");
  EXPECT_EQ(content(run(tools_, "ls", {{"path", "/work"}})), "['/work/new/', '/work/notes.txt']");
  EXPECT_EQ(content(run(tools_, "delete", {{"file_path", "/work/new"}})), "Deleted /work/new");
  EXPECT_FALSE(fs::exists(root_ / "work" / "new"));
}

TEST_F(DirectoryFilesystem, EverySpellingOfADeniedPathIsDenied) {
  EXPECT_EQ(content(run(tools_, "read_file", {{"file_path", "/secrets/k"}})),
            "Error: permission denied for read on /secrets/k");
  EXPECT_EQ(content(run(tools_, "read_file", {{"file_path", "//secrets/k"}})),
            "Error: permission denied for read on /secrets/k");
  EXPECT_EQ(content(run(tools_, "read_file", {{"file_path", "/./secrets/k"}})),
            "Error: permission denied for read on /secrets/k");
  EXPECT_EQ(content(run(tools_, "read_file", {{"file_path", "/secrets/../secrets/k"}})),
            "Error: Path traversal not allowed: /secrets/../secrets/k");
  EXPECT_EQ(content(run(tools_, "write_file", {{"file_path", "/secrets/k"}, {"content", "x"}})),
            "Error: permission denied for write on /secrets/k");
  EXPECT_EQ(content(run(tools_, "delete", {{"file_path", "/"}})),
            "Error: permission denied for write on / (matches deny rule(s): /secrets/**)");
}

TEST_F(DirectoryFilesystem, ListingsAndSearchesLeaveDeniedPathsOut) {
  EXPECT_EQ(content(run(tools_, "ls", {{"path", "/"}})), "['/work/']");
  EXPECT_EQ(content(run(tools_, "glob", {{"pattern", "*"}})), "['/work/notes.txt']");
  EXPECT_EQ(content(run(tools_, "grep", {{"pattern", "key"}})), "/work/notes.txt");
  EXPECT_EQ(content(run(tools_, "grep", {{"pattern", "key"}, {"output_mode", "content"}})),
            "/work/notes.txt:\n  2: beta key");
}

TEST_F(DirectoryFilesystem, GlobRefusesPatternsThatClimbOut) {
  EXPECT_EQ(content(run(tools_, "glob", {{"pattern", "../**"}, {"path", "/work"}})),
            "Error: Path traversal not allowed: ../**");
}

TEST_F(DirectoryFilesystem, ASymlinkIntoADeniedDirectoryIsRefused) {
  fs::create_symlink(root_ / "secrets", root_ / "work" / "link");
  fs::create_symlink(root_ / "secrets" / "k", root_ / "work" / "k");
  EXPECT_EQ(content(run(tools_, "read_file", {{"file_path", "/work/link/k"}})),
            "Error: Refusing to follow a symbolic link: /work/link");
  EXPECT_EQ(content(run(tools_, "read_file", {{"file_path", "/work/k"}})),
            "Error: Refusing to follow a symbolic link: /work/k");
  EXPECT_EQ(content(run(tools_, "ls", {{"path", "/work"}})), "['/work/notes.txt']");
  EXPECT_EQ(content(run(tools_, "grep", {{"pattern", "key"}, {"path", "/work"}})),
            "/work/notes.txt");
}

TEST_F(DirectoryFilesystem, ADanglingSymlinkOutsideTheRootIsNeverCreatedThrough) {
  fs::create_symlink(outside_ / "created-by-agent", root_ / "work" / "dangling");
  EXPECT_EQ(content(run(tools_, "write_file", {{"file_path", "/work/dangling"}, {"content", "x"}})),
            "Error: Refusing to follow a symbolic link: /work/dangling");
  EXPECT_FALSE(fs::exists(outside_ / "created-by-agent"));
  fs::create_symlink(outside_, root_ / "work" / "out");
  EXPECT_EQ(content(run(tools_, "write_file", {{"file_path", "/work/out/x"}, {"content", "x"}})),
            "Error: Refusing to follow a symbolic link: /work/out");
  EXPECT_FALSE(fs::exists(outside_ / "x"));
  EXPECT_EQ(content(run(tools_, "read_file", {{"file_path", "/work/out/passwd"}})),
            "Error: Refusing to follow a symbolic link: /work/out");
}

TEST_F(DirectoryFilesystem, DeletingADirectoryRemovesALinkButNotItsTarget) {
  fs::create_directories(root_ / "work" / "tmp");
  fs::create_symlink(outside_, root_ / "work" / "tmp" / "out");
  EXPECT_EQ(content(run(tools_, "delete", {{"file_path", "/work/tmp"}})), "Deleted /work/tmp");
  EXPECT_TRUE(fs::exists(outside_ / "passwd"));
}

TEST_F(DirectoryFilesystem, MissingFilesAndBadEditsAnswerInTheReferenceWords) {
  EXPECT_EQ(content(run(tools_, "read_file", {{"file_path", "/nope.txt"}})),
            "Error: File '/nope.txt' not found");
  EXPECT_EQ(content(run(tools_, "edit_file", {{"file_path", "/work/notes.txt"},
                                             {"old_string", "zeta"}, {"new_string", "x"}})),
            "Error: String not found in file: 'zeta'");
  write(root_ / "work" / "twice.txt", "a a");
  EXPECT_EQ(content(run(tools_, "edit_file", {{"file_path", "/work/twice.txt"},
                                             {"old_string", "a"}, {"new_string", "b"}})),
            "Error: String 'a' appears 2 times in file. Use replace_all=True to replace all "
            "instances, or provide a more specific string with surrounding context.");
  EXPECT_EQ(content(run(tools_, "read_file", {{"file_path", "/work/notes.txt"}, {"offset", 1},
                                             {"limit", 1}})),
            "2  beta key");
  EXPECT_EQ(content(run(tools_, "read_file", {{"file_path", "/work/notes.txt"}, {"limit", 1}})),
            "1  alpha\n\n[Read 1 line (lines 1-1 of 2 total). 1 line remaining from offset 1.]");
}

}  // namespace
}  // namespace tollgate

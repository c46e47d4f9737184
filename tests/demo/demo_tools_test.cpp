// Demo tools: sandbox confinement, the outbox, the demo database and the demo policy.
#include "demo/demo_tools.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "support/test_folder.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"
#include "tollgate/middleware.h"

namespace tollgate {
namespace {
namespace fs = std::filesystem;

class DemoToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = std::make_unique<DemoEnvironment>(root_);
    tools_ = env_->tools();
  }

  Json call(const std::string& name, Json args) {
    return run_tool_call(make_tool_call(name, std::move(args), "call_1"), tools_, {});
  }
  static bool is_error(const Json& message) { return message.value("status", "") == "error"; }
  static std::string content(const Json& message) { return message["content"].get<std::string>(); }

  int outbox_rows(const std::string& to) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(env_->outbox().c_str(), &db), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM outbox WHERE to_address = ?", -1, &stmt, nullptr);
    sqlite3_bind_text(stmt, 1, to.c_str(), -1, SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(stmt), SQLITE_ROW);
    const int n = sqlite3_column_int(stmt, 0);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return n;
  }

  testing::TestFolder folder_{"demo"};
  const fs::path root_ = folder_.path();
  std::unique_ptr<DemoEnvironment> env_;
  std::vector<Tool> tools_;
};

TEST_F(DemoToolsTest, EnvironmentCreatesSandboxWithNotes) {
  EXPECT_TRUE(fs::is_regular_file(env_->sandbox() / "notes.txt"));
  EXPECT_TRUE(fs::is_regular_file(env_->database()));
  EXPECT_TRUE(fs::is_regular_file(env_->outbox()));
}

TEST_F(DemoToolsTest, EveryToolHasAnObjectSchema) {
  std::vector<std::string> names;
  for (const auto& tool : tools_) {
    names.push_back(tool.name());
    EXPECT_EQ(tool.args_schema()["type"], "object") << tool.name();
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"weather_search", "send_email", "read_file", "write_file",
                                      "delete_file", "execute_sql", "ask_user", "book_flight"}));
}

TEST_F(DemoToolsTest, WeatherIsDeterministicPerCity) {
  const Json a = call("weather_search", {{"city", "Paris"}});
  const Json b = call("weather_search", {{"city", "Paris"}});
  EXPECT_FALSE(is_error(a));
  EXPECT_EQ(content(a), content(b));
  EXPECT_NE(content(a).find("Paris"), std::string::npos);
}

TEST_F(DemoToolsTest, SendEmailWritesOutboxRow) {
  const Json result =
      call("send_email", {{"to", "bob@acme.io"}, {"subject", "Hi"}, {"body", "Hello Bob"}});
  EXPECT_FALSE(is_error(result)) << result.dump();
  EXPECT_EQ(outbox_rows("bob@acme.io"), 1);
}

TEST_F(DemoToolsTest, SendEmailTwiceWithTheSameIdempotencyKeyStoresOneRowAndAnswersTheFirst) {
  const Json args = {{"to", "bob@acme.io"}, {"subject", "Hi"}, {"body", "Hello Bob"}};
  const Json first = call("send_email", args);
  const Json again = call("send_email", args);  // the same call: the same key
  EXPECT_EQ(outbox_rows("bob@acme.io"), 1);
  EXPECT_EQ(content(again), content(first));
  run_tool_call(make_tool_call("send_email", args, "call_2"), tools_, {});  // another call
  EXPECT_EQ(outbox_rows("bob@acme.io"), 2);
}

TEST_F(DemoToolsTest, ASqlWriteTwiceWithTheSameIdempotencyKeyRunsOnce) {
  const Json insert = {{"query", "INSERT INTO orders(user_id, item, amount_cents, status) VALUES "
                                 "(1, 'Punched cards', 100, 'pending')"}};
  const Json first = call("execute_sql", insert);
  const Json again = call("execute_sql", insert);
  EXPECT_EQ(content(again), content(first));
  const Json count =
      call("execute_sql", {{"query", "SELECT COUNT(*) FROM orders WHERE item = 'Punched cards'"}});
  EXPECT_NE(content(count).find("[[1]]"), std::string::npos) << content(count);
}

TEST_F(DemoToolsTest, SendEmailRefusesAddressWithoutAt) {
  const Json result = call("send_email", {{"to", "bob"}, {"subject", "Hi"}, {"body", "x"}});
  EXPECT_TRUE(is_error(result));
  EXPECT_EQ(outbox_rows("bob"), 0);
}

TEST_F(DemoToolsTest, WriteThenReadThenDeleteFileInSandbox) {
  EXPECT_FALSE(is_error(call("write_file", {{"path", "sub/a.txt"}, {"content", "hi there"}})));
  EXPECT_EQ(content(call("read_file", {{"path", "sub/a.txt"}})), "hi there");
  EXPECT_FALSE(is_error(call("delete_file", {{"path", "sub/a.txt"}})));
  EXPECT_FALSE(fs::exists(env_->sandbox() / "sub/a.txt"));
}

TEST_F(DemoToolsTest, DotDotPathIsRefused) {
  const Json result = call("read_file", {{"path", "../outbox.db"}});
  EXPECT_TRUE(is_error(result));
  EXPECT_NE(content(result).find("'..' is not allowed"), std::string::npos);
}

TEST_F(DemoToolsTest, AbsolutePathOutsideSandboxIsRefused) {
  const Json result =
      call("write_file", {{"path", (root_ / "escape.txt").string()}, {"content", "x"}});
  EXPECT_TRUE(is_error(result));
  EXPECT_NE(content(result).find("outside the sandbox"), std::string::npos);
  EXPECT_FALSE(fs::exists(root_ / "escape.txt"));
}

TEST_F(DemoToolsTest, AbsolutePathInsideSandboxIsAccepted) {
  const Json result = call("read_file", {{"path", (env_->sandbox() / "notes.txt").string()}});
  EXPECT_FALSE(is_error(result)) << result.dump();
}

TEST_F(DemoToolsTest, SymlinkLeavingSandboxIsRefused) {
  fs::create_directory_symlink(root_, env_->sandbox() / "out");
  const Json result = call("write_file", {{"path", "out/escape.txt"}, {"content", "x"}});
  EXPECT_TRUE(is_error(result));
  EXPECT_NE(content(result).find("outside the sandbox"), std::string::npos);
  EXPECT_FALSE(fs::exists(root_ / "escape.txt"));
}

TEST_F(DemoToolsTest, FileSymlinkLeavingSandboxIsNotDeleted) {
  std::ofstream(root_ / "precious.txt") << "keep";
  fs::create_symlink(root_ / "precious.txt", env_->sandbox() / "link.txt");
  EXPECT_TRUE(is_error(call("delete_file", {{"path", "link.txt"}})));
  EXPECT_TRUE(fs::exists(root_ / "precious.txt"));
}

TEST_F(DemoToolsTest, ExecuteSqlReadsSeededUsers) {
  const Json result = call("execute_sql", {{"query", "SELECT COUNT(*) FROM users"}});
  EXPECT_FALSE(is_error(result)) << result.dump();
  EXPECT_EQ(Json::parse(content(result))["rows"], Json::parse("[[4]]"));
}

TEST_F(DemoToolsTest, ExecuteSqlWriteChangesRows) {
  const Json result =
      call("execute_sql", {{"query", "DELETE FROM orders WHERE status = 'cancelled'"}});
  EXPECT_EQ(content(result), "OK: 1 row(s) changed.");
}

TEST_F(DemoToolsTest, DeletedDemoRowsStayDeletedWhenTheEnvironmentOpensAgain) {
  call("execute_sql", {{"query", "DELETE FROM orders WHERE status = 'cancelled'"}});
  env_ = std::make_unique<DemoEnvironment>(root_);
  tools_ = env_->tools();
  const Json result =
      call("execute_sql", {{"query", "SELECT COUNT(*) FROM orders WHERE status = 'cancelled'"}});
  EXPECT_EQ(Json::parse(content(result))["rows"], Json::parse("[[0]]")) << result.dump();
}

TEST_F(DemoToolsTest, ExecuteSqlReportsSqlErrors) {
  const Json result = call("execute_sql", {{"query", "SELEKT 1"}});
  EXPECT_TRUE(is_error(result));
  EXPECT_NE(content(result).find("SQL error"), std::string::npos);
}

TEST(DemoPolicy, GatesSqlWritesOnly) {
  HitlPolicy policy(demo_policy());
  const Json read = make_tool_call("execute_sql", {{"query", "SELECT 1"}}, "a");
  const Json write = make_tool_call("execute_sql", {{"query", "DELETE FROM users"}}, "b");
  EXPECT_FALSE(policy.review_for({read, nullptr, nullptr}).has_value());
  EXPECT_TRUE(policy.review_for({write, nullptr, nullptr}).has_value());
}

TEST(DemoPolicy, SendEmailAllowsAllFourDecisionsAndDescribesRecipient) {
  HitlPolicy policy(demo_policy());
  const Json mail =
      make_tool_call("send_email", {{"to", "a@b.c"}, {"subject", "S"}, {"body", "B"}}, "a");
  EXPECT_EQ(policy.review_for({mail, nullptr, nullptr})->size(), 4U);
  EXPECT_EQ(policy.describe({mail, nullptr, nullptr}),
            "Send an email to a@b.c with the subject \"S\"?");
}

TEST(DemoPolicy, ReadsAndWeatherRunFreely) {
  HitlPolicy policy(demo_policy());
  EXPECT_FALSE(policy.gates_tool("read_file"));
  EXPECT_FALSE(policy.gates_tool("weather_search"));
}

TEST_F(DemoToolsTest, DemoPolicyNamesOnlyDemoTools) {
  EXPECT_NO_THROW(make_human_in_the_loop(demo_policy(), tools_));
}

}  // namespace
}  // namespace tollgate

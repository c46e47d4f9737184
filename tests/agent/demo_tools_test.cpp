// Demo tools: sandbox confinement, the outbox, SQL write detection, the demo policy and the
// policy file.
#include "tollgate/demo_tools.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tollgate/error.h"
#include "tollgate/messages.h"

namespace tollgate {
namespace {
namespace fs = std::filesystem;

class DemoToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("tollgate-demo-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    env_ = std::make_unique<DemoEnvironment>(root_);
    tools_ = env_->tools();
  }
  void TearDown() override { fs::remove_all(root_); }

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

  fs::path root_;
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
                                      "delete_file", "execute_sql", "ask_user"}));
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

struct SqlCase {
  const char* query;
  bool writes;
};

TEST(IsSqlWrite, DetectionTable) {
  const SqlCase cases[] = {
      {"SELECT * FROM users", false},
      {"  select count(*) from orders;", false},
      {"SELECT replace(name, 'a', 'b') FROM users", false},
      {"SELECT 'DELETE FROM users' AS text", false},
      {"-- DELETE FROM users\nSELECT 1", false},
      {"/* DROP TABLE users; */ SELECT 1", false},
      {"WITH t AS (SELECT 1) SELECT * FROM t", false},
      {"EXPLAIN QUERY PLAN SELECT * FROM users", false},
      {"PRAGMA table_info(users)", false},
      {"PRAGMA user_version", false},
      {"", false},
      {"-- only a comment", false},
      {"INSERT INTO users VALUES (9, 'x', 'x@y', 'z')", true},
      {"update users set city = 'Paris'", true},
      {"DELETE FROM orders", true},
      {"REPLACE INTO users VALUES (1, 'a', 'b', 'c')", true},
      {"CREATE TABLE t (x)", true},
      {"DROP TABLE users", true},
      {"ALTER TABLE users ADD COLUMN age", true},
      {"ATTACH DATABASE 'x.db' AS x", true},
      {"VACUUM", true},
      {"WITH old AS (SELECT id FROM orders) DELETE FROM orders WHERE id IN old", true},
      {"SELECT 1; DELETE FROM users", true},
      {"SELECT 1 /* ; */; DROP TABLE users -- bye", true},
      {"PRAGMA user_version = 7", true},
      {"PRAGMA main.journal_mode = DELETE", true},
      {"PRAGMA wal_checkpoint", true},
      {"BEGIN; UPDATE users SET name = 'x'; COMMIT;", true},
      {"FROBNICATE users", true},
  };
  for (const auto& c : cases) EXPECT_EQ(is_sql_write(c.query), c.writes) << c.query;
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

TEST(PolicyFile, ParsesRulesAndTemplates) {
  const Json file = Json::parse(R"({
    "interrupt_on": {
      "execute_sql": {"allowed_decisions": ["approve", "reject"], "when": {"sql_writes": true}},
      "send_email": {"when": {"arg": "to", "not_matches": ".*@example\\.com$"},
                     "description": "Send mail to {to}?"},
      "delete_file": true}})");
  HitlPolicy policy(parse_policy(file));
  const Json inside = make_tool_call("send_email", {{"to", "a@example.com"}}, "a");
  const Json outside = make_tool_call("send_email", {{"to", "a@evil.com"}}, "b");
  EXPECT_FALSE(policy.review_for({inside, nullptr, nullptr}).has_value());
  EXPECT_EQ(policy.review_for({outside, nullptr, nullptr})->size(), 4U);
  EXPECT_EQ(policy.describe({outside, nullptr, nullptr}), "Send mail to a@evil.com?");
  const Json write = make_tool_call("execute_sql", {{"query", "DROP TABLE x"}}, "c");
  EXPECT_EQ(policy.review_for({write, nullptr, nullptr})->size(), 2U);
}

TEST(PolicyFile, AnyRuleReviewsWhenOneMatches) {
  HitlPolicy policy(parse_policy(Json::parse(
      R"({"write_file": {"when": {"any": [{"arg": "path", "starts_with": "etc/"},
                                          {"arg": "path", "contains": "secret"}]}}})")));
  EXPECT_TRUE(policy.review_for(
      {make_tool_call("write_file", {{"path", "a/secret"}}, "a"), nullptr, nullptr}));
  EXPECT_FALSE(
      policy.review_for({make_tool_call("write_file", {{"path", "a/b"}}, "b"), nullptr, nullptr}));
}

void expect_policy_error(const char* json, const std::string& fragment) {
  try {
    parse_policy(Json::parse(json));
    ADD_FAILURE() << "no error for " << json;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(PolicyFile, UnknownDecisionNamesTool) {
  expect_policy_error(R"({"interrupt_on": {"send_email": {"allowed_decisions": ["aprove"]}}})",
                      "'send_email'");
}

TEST(PolicyFile, EmptyDecisionsFailClosed) {
  expect_policy_error(R"({"send_email": {"allowed_decisions": []}})", "allowed_decisions");
}

TEST(PolicyFile, UnknownConfigKeyNamesField) {
  expect_policy_error(R"({"send_email": {"alowed_decisions": ["approve"]}})",
                      "interrupt_on.send_email: unknown key 'alowed_decisions'");
}

TEST(PolicyFile, UnknownWhenOperatorNamesField) {
  expect_policy_error(R"({"send_email": {"when": {"arg": "to", "ends_with": "x"}}})",
                      "interrupt_on.send_email.when: unknown key 'ends_with'");
}

TEST(PolicyFile, BadRegexNamesField) {
  expect_policy_error(R"({"send_email": {"when": {"arg": "to", "matches": "(("}}})",
                      "interrupt_on.send_email.when: 'matches' is not a valid regular expression");
}

TEST(PolicyFile, SqlWritesMustBeBoolean) {
  expect_policy_error(R"({"execute_sql": {"when": {"sql_writes": "yes"}}})",
                      "interrupt_on.execute_sql.when: 'sql_writes' must be true or false");
}

TEST(PolicyFile, EntryMustBeBoolOrObject) {
  expect_policy_error(R"({"interrupt_on": {"send_email": "yes"}})",
                      "interrupt_on.send_email: must be true, false or an object");
}

TEST(PolicyFile, UnknownTopLevelKeyIsRefused) {
  expect_policy_error(R"({"interrupt_on": {}, "interupt_mode": "x"})",
                      "unknown key 'interupt_mode'");
}

TEST(PolicyFile, MissingFileIsReported) {
  try {
    load_policy_file("/nonexistent/policy.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/policy.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace tollgate

// `tollgate chat --non-interactive` in separate processes: a thread paused in one process is
// decided in the next, and the approved email lands in the outbox.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_folder.h"
#include "tollgate/json.h"

namespace tollgate {
namespace {
namespace fs = std::filesystem;

class ChatCommandTest : public ::testing::Test {
 protected:
  // Runs one `tollgate chat` process with `lines` on stdin; returns its JSON output lines.
  std::vector<Json> chat(const std::vector<std::string>& lines, const std::string& extra = "") {
    const fs::path in = dir_ / "in.jsonl";
    const fs::path out = dir_ / "out.jsonl";
    {
      std::ofstream f(in);
      for (const auto& l : lines) f << l << "\n";
    }
    const std::string cmd =
        std::string("'") + TOLLGATE_BINARY + "' chat --non-interactive --model demo --db '" +
        (dir_ / "chat.db").string() + "' --workdir '" + (dir_ / "work").string() +
        "' --thread t1 " + extra + " < '" + in.string() + "' > '" + out.string() + "' 2> '" +
        (dir_ / "err.txt").string() + "'";
    exit_code_ = std::system(cmd.c_str());
    std::vector<Json> result;
    std::ifstream f(out);
    std::string line;
    while (std::getline(f, line)) result.push_back(Json::parse(line));
    return result;
  }

  static std::vector<Json> of_type(const std::vector<Json>& lines, const std::string& type) {
    std::vector<Json> out;
    for (const auto& l : lines)
      if (l.value("type", "") == type) out.push_back(l);
    return out;
  }

  int outbox_rows() {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2((dir_ / "work" / "outbox.db").c_str(), &db, SQLITE_OPEN_READONLY,
                        nullptr) != SQLITE_OK) {
      sqlite3_close(db);
      return -1;
    }
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM outbox WHERE to_address = 'bob@acme.io'", -1,
                       &stmt, nullptr);
    const int n = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int(stmt, 0) : -1;
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return n;
  }

  testing::TestFolder folder_{"chat"};
  const fs::path dir_ = folder_.path();
  int exit_code_ = -1;
};

constexpr const char* kAsk =
    R"({"input": "Send an email to bob@acme.io about the quarterly report"})";

TEST_F(ChatCommandTest, EmailRequestPausesWithSendEmailActionAndNoOutboxRow) {
  const auto out = chat({kAsk});
  ASSERT_EQ(exit_code_, 0);
  const auto interrupts = of_type(out, "interrupt");
  ASSERT_EQ(interrupts.size(), 1U);
  const Json& action = interrupts[0]["value"]["action_requests"][0];
  EXPECT_EQ(action["name"], "send_email");
  EXPECT_EQ(action["args"]["to"], "bob@acme.io");
  EXPECT_EQ(of_type(out, "status").back()["status"], "paused");
  EXPECT_EQ(outbox_rows(), 0);
}

TEST_F(ChatCommandTest, SecondProcessShowsPendingActionThenApprovalSendsEmail) {
  chat({kAsk});
  ASSERT_EQ(exit_code_, 0);
  const auto out = chat({R"({"decisions": [{"type": "approve"}]})"});
  ASSERT_EQ(exit_code_, 0);
  ASSERT_GE(out.size(), 3U);
  EXPECT_EQ(out[0]["type"], "thread");
  EXPECT_EQ(out[1]["type"], "interrupt");  // the pending action is shown first
  const auto messages = of_type(out, "message");
  ASSERT_FALSE(messages.empty());
  const Json& last = messages.back()["message"];
  EXPECT_EQ(last["type"], "ai");
  EXPECT_NE(last["content"].get<std::string>().find("send_email"), std::string::npos);
  EXPECT_EQ(of_type(out, "status").back()["status"], "done");
  EXPECT_EQ(outbox_rows(), 1);
}

TEST_F(ChatCommandTest, RejectionInSecondProcessLeavesOutboxEmpty) {
  chat({kAsk});
  const auto out = chat({R"({"decisions": [{"type": "reject", "message": "not now"}]})"});
  ASSERT_EQ(exit_code_, 0);
  EXPECT_EQ(of_type(out, "status").back()["status"], "done");
  EXPECT_EQ(outbox_rows(), 0);
}

TEST_F(ChatCommandTest, InputWhilePausedIsRefusedAndThreadStaysPaused) {
  const auto out = chat({kAsk, R"({"input": "hello"})"});
  const auto errors = of_type(out, "error");
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors[0]["code"], "conflict");
  EXPECT_EQ(outbox_rows(), 0);
}

TEST_F(ChatCommandTest, WrongNumberOfDecisionsIsAnErrorAndKeepsThreadPaused) {
  chat({kAsk});
  const auto out = chat({R"({"decisions": [{"type": "approve"}, {"type": "approve"}]})"});
  ASSERT_EQ(of_type(out, "error").size(), 1U);
  EXPECT_EQ(outbox_rows(), 0);
  const auto again = chat({});
  EXPECT_EQ(of_type(again, "interrupt").size(), 1U);
}

TEST_F(ChatCommandTest, BadPolicyFileFailsWithFieldName) {
  std::ofstream(dir_ / "policy.json") << R"({"send_email": {"allowed_decisions": ["aprove"]}})";
  chat({}, "--policy '" + (dir_ / "policy.json").string() + "'");
  EXPECT_NE(exit_code_, 0);
  std::ifstream err(dir_ / "err.txt");
  std::stringstream text;
  text << err.rdbuf();
  EXPECT_NE(text.str().find("send_email"), std::string::npos) << text.str();
}

TEST_F(ChatCommandTest, PolicyFileNamingAnUnknownToolFailsWithTheKnownOnes) {
  std::ofstream(dir_ / "policy.json") << R"({"interrupt_on": {"send_mail": true}})";
  chat({}, "--policy '" + (dir_ / "policy.json").string() + "'");
  EXPECT_NE(exit_code_, 0);
  std::ifstream err(dir_ / "err.txt");
  std::stringstream text;
  text << err.rdbuf();
  EXPECT_NE(text.str().find("interrupt_on.send_mail: unknown tool 'send_mail' (the agent's tools: "
                            "ask_user, book_flight, delete_file, execute_sql, read_file, send_email, "
                            "weather_search, write_file)"),
            std::string::npos)
      << text.str();
}

TEST_F(ChatCommandTest, PolicyFilePathRuleGatesAFileInTheSandbox) {
  std::ofstream(dir_ / "policy.json")
      << R"({"interrupt_on": {"delete_file": {"when": {"arg": "path", "path_glob": "a/*.txt"}}}})";
  const auto out = chat({R"({"input": "please delete a//notes.txt"})"},
                        "--policy '" + (dir_ / "policy.json").string() + "'");
  ASSERT_EQ(exit_code_, 0);
  const auto interrupts = of_type(out, "interrupt");
  ASSERT_EQ(interrupts.size(), 1U);
  EXPECT_EQ(interrupts[0]["value"]["action_requests"][0]["args"]["path"], "a//notes.txt");
}

}  // namespace
}  // namespace tollgate

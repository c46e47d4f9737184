// A database file of the layout before tollgate_schema (data/legacy_database.sql, made by that
// code) opens and migrates without loss: the checkpoint saver, the server store and the audit
// log each move their version into tollgate_schema, keep every row, and a thread paused then
// resumes. A file of that layout with a newer version is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/audit_log.h"
#include "server/sql_store.h"
#include "sql/migrations.h"
#include "sql/sql_test_util.h"
#include "sql/sqlite_connection.h"
#include "tollgate/error.h"
#include "tollgate/graph.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate::server {
namespace {

// The graph that wrote the fixture's checkpoints.
std::shared_ptr<CompiledGraph> review_graph(std::shared_ptr<Saver> saver) {
  StateSchema schema;
  schema.append("log");
  schema.last_value("answer");
  StateGraph graph(schema);
  graph.add_node("prepare", [](const State&, Runtime&) -> NodeResult {
    return Json{{"log", {"prepared"}}};
  });
  graph.add_node("ask", [](const State&, Runtime& runtime) -> NodeResult {
    Json answer = runtime.interrupt(Json{{"question", "send it?"}});
    return Json{{"answer", answer}, {"log", {"asked"}}};
  });
  graph.add_node("finish", [](const State& state, Runtime&) -> NodeResult {
    return Json{{"log", {"finished:" + state["answer"].get<std::string>()}}};
  });
  graph.add_edge(START, "prepare");
  graph.add_edge("prepare", "ask");
  graph.add_edge("ask", "finish");
  graph.add_edge("finish", END);
  CompileOptions options;
  options.checkpointer = std::move(saver);
  return graph.compile(std::move(options));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class LegacyDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("tollgate_legacy_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
                .string();
    remove();
  }
  void TearDown() override { remove(); }
  void remove() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }
  void load_fixture() {
    sql::SqliteConnection connection(path_);
    connection.exec(
        read_file(std::string(TOLLGATE_SOURCE_DIR) + "/tests/server/data/legacy_database.sql"));
  }
  int version_of(std::string_view component) {
    sql::SqliteConnection connection(path_);
    return sql::schema_version(connection, component);
  }
  bool has_table(std::string_view table) {
    sql::SqliteConnection connection(path_);
    return sql::table_exists(connection, table);
  }
  std::string path_;
};

TEST_F(LegacyDatabaseTest, EachComponentMovesItsVersionIntoTheSharedTable) {
  load_fixture();
  { SqliteStore store(path_); }
  { AuditLog log(path_); }
  { auto saver = open_sqlite_saver(path_); }
  EXPECT_EQ(version_of("checkpoints"), kSqliteSchemaVersion);
  EXPECT_EQ(version_of("server_store"), kServerSchemaVersion);
  EXPECT_EQ(version_of("audit_log"), 2);  // 1: the log, 2: its hash chain
  EXPECT_FALSE(has_table("schema_version"));
  EXPECT_FALSE(has_table("server_schema"));
}

TEST_F(LegacyDatabaseTest, TheServerStoreKeepsEveryRow) {
  load_fixture();
  SqliteStore store(path_);
  auto thread = store.get_thread("legacy-paused");
  ASSERT_TRUE(thread);
  EXPECT_EQ(thread->status, ThreadStatus::kInterrupted);
  EXPECT_EQ(thread->values, (Json{{"log", {"start", "prepared"}}}));
  EXPECT_EQ(thread->interrupts["task-1"][0]["id"], "i-1");
  ASSERT_TRUE(store.get_run("run-1"));
  EXPECT_EQ(store.get_run("run-1")->status, RunStatus::kInterrupted);
  EXPECT_EQ(store.run_events("run-1").size(), 1u);
  ASSERT_EQ(store.thread_events("legacy-paused").size(), 1u);
  EXPECT_EQ(store.thread_events("legacy-paused")[0].channel, "values");
  ASSERT_TRUE(store.get_assistant("assistant-1"));
  EXPECT_EQ(store.get_assistant("assistant-1")->graph_id, "review");
}

TEST_F(LegacyDatabaseTest, TheAuditLogKeepsEveryEntryAndAppendsAfterThem) {
  load_fixture();
  AuditLog log(path_);
  auto entries = log.list({});
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].outcome, "pending");
  EXPECT_EQ(entries[0].thread_id, "legacy-paused");
  EXPECT_EQ(entries[1].outcome, "applied");
  EXPECT_EQ(entries[1].decided, (Json{{"resume", "yes"}}));
  AuditEntry entry;
  entry.thread_id = "legacy-paused";
  // Opening chained the old rows and gave the settled one its outcome entry (id 3).
  EXPECT_EQ(log.append(entry), 4);
  EXPECT_TRUE(log.verify().intact);
}

TEST_F(LegacyDatabaseTest, TheCheckpointsReadBackWholeAndAPausedThreadResumes) {
  load_fixture();
  auto graph = review_graph(open_sqlite_saver(path_));
  RunConfig done;
  done.thread_id = "legacy-done";
  EXPECT_EQ(graph->get_state(done).values.to_json(),
            (Json{{"log", {"start", "prepared", "asked", "finished:yes"}}, {"answer", "yes"}}));
  EXPECT_EQ(graph->get_state_history(done).size(), 5u);

  RunConfig paused;
  paused.thread_id = "legacy-paused";
  ASSERT_EQ(graph->get_state(paused).interrupts.size(), 1u);
  Command later;
  later.resume = "later";
  RunResult result = graph->invoke(later, paused);
  EXPECT_FALSE(result.paused);
  EXPECT_EQ(result.values.to_json(),
            (Json{{"log", {"start", "prepared", "asked", "finished:later"}}, {"answer", "later"}}));
}

TEST_F(LegacyDatabaseTest, AFormerCheckpointVersionNewerThanTheBuildIsRefused) {
  {
    sql::SqliteConnection connection(path_);
    connection.exec(
        "CREATE TABLE schema_version (version INTEGER NOT NULL);"
        "INSERT INTO schema_version VALUES (99)");
  }
  EXPECT_EQ(sql::code_of([&] { open_sqlite_saver(path_); }), ErrorCode::kConflict);
  EXPECT_TRUE(has_table("schema_version"));
}

TEST_F(LegacyDatabaseTest, AFormerServerStoreVersionNewerThanTheBuildIsRefused) {
  {
    sql::SqliteConnection connection(path_);
    connection.exec(
        "CREATE TABLE server_schema (version INTEGER NOT NULL);"
        "INSERT INTO server_schema VALUES (99)");
  }
  EXPECT_EQ(sql::code_of([&] { SqliteStore store(path_); }), ErrorCode::kConflict);
  EXPECT_TRUE(has_table("server_schema"));
}

}  // namespace
}  // namespace tollgate::server

#include "tollgate/sqlite_saver.h"

#include <gtest/gtest.h>

#include <thread>

#include "checkpoint/saver_conformance.h"
#include "checkpoint/saver_test_util.h"
#include "checkpoint/sqlite_schema.h"
#include "checkpoint/value_store.h"
#include "sql/migrations.h"
#include "sql/sqlite_connection.h"
#include "tollgate/error.h"

namespace tollgate::testing {

const SaverFactory kSqliteFactory{
    "sqlite", [](const std::string& dir) { return open_sqlite_saver(dir + "/tollgate.db"); },
    [](Saver& saver) { return saver.stats().bytes_written; }};

INSTANTIATE_SAVER_CONFORMANCE(Sqlite, kSqliteFactory);

namespace {

class SqliteSaverTest : public SaverFixture, public ::testing::Test {
 protected:
  void SetUp() override { make_saver(kSqliteFactory); }
  void TearDown() override { drop_saver(); }
  std::string path() const { return scratch_dir() + "/tollgate.db"; }
};

TEST_F(SqliteSaverTest, ReopenedFileKeepsCheckpointsAndWrites) {
  Checkpoint checkpoint = make_checkpoint(-1, {{"messages", Json::array({"hi"})}});
  CheckpointConfig config = saver_->put({"t", "", ""}, checkpoint, Json{{"source", "input"}},
                                        checkpoint.channel_versions);
  saver_->put_writes(config, {{"messages", "x"}}, "task");
  saver_.reset();
  auto reopened = open_sqlite_saver(path());
  auto tuple = reopened->get_tuple({"t", "", ""});
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->checkpoint, checkpoint);
  EXPECT_EQ(tuple->pending_writes.size(), 1u);
}

TEST_F(SqliteSaverTest, NewFileGetsTheCurrentSchemaVersion) {
  sql::SqliteConnection connection(path());
  EXPECT_EQ(sql::schema_version(connection, "checkpoints"), kSqliteSchemaVersion);
}

TEST_F(SqliteSaverTest, FileOfAnEarlierSchemaVersionIsMigratedOnOpen) {
  saver_.reset();
  const std::string old_path = scratch_dir() + "/v1.db";
  {
    // A version-1 file holding a write (version 1 had no writes.task_path).
    sql::SqliteConnection connection(old_path);
    sql::migrate(connection, checkpoint_internal::sqlite_checkpoint_schema(), 1);
    ASSERT_EQ(sql::schema_version(connection, "checkpoints"), 1);
    sql::SqliteStatement insert(
        connection,
        "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, "
        "value) VALUES ('t', '', 'c1', 'task', 0, 'x', ?)");
    insert.bind_blob(1, checkpoint_internal::encode_value(Json("old"))).run();
  }
  auto saver = open_sqlite_saver(old_path);
  saver->put_writes({"t", "", "c1"}, {{"y", "new"}}, "task-2", "path");
  Checkpoint checkpoint = make_checkpoint(-1, {{"a", 1}});
  checkpoint.id = "c1";
  saver->put({"t", "", ""}, checkpoint, Json::object(), checkpoint.channel_versions);
  auto tuple = saver->get_tuple({"t", "", "c1"});
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->checkpoint, checkpoint);
  EXPECT_EQ(tuple->pending_writes,
            (std::vector<PendingWrite>{{"task", "x", "old"}, {"task-2", "y", "new"}}));
  sql::SqliteConnection connection(old_path);
  EXPECT_EQ(sql::schema_version(connection, "checkpoints"), kSqliteSchemaVersion);
}

// A step's ordinary writes are one row; a special channel's write a row of its own.
TEST_F(SqliteSaverTest, ARunOfATasksWritesIsOneRow) {
  Checkpoint checkpoint = make_checkpoint(-1);
  CheckpointConfig config =
      saver_->put({"t", "", ""}, checkpoint, Json::object(), checkpoint.channel_versions);
  saver_->put_writes(config,
                     {{"jump_to", nullptr},
                      {"messages", Json::array({"hi"})},
                      {"branch:to:tools", nullptr},
                      {std::string(kInterruptChannel), Json::array({"why"})}},
                     "task");
  sql::SqliteConnection connection(path());
  sql::SqliteStatement rows(connection,
                            "SELECT idx, span, channel FROM writes ORDER BY task_id, idx");
  ASSERT_TRUE(rows.step());
  EXPECT_EQ(rows.integer(0), *special_write_index(kInterruptChannel));
  EXPECT_EQ(rows.integer(1), 1);
  ASSERT_TRUE(rows.step());
  EXPECT_EQ(rows.integer(0), 0);
  EXPECT_EQ(rows.integer(1), 3);
  EXPECT_EQ(rows.text(2), "");
  EXPECT_FALSE(rows.step());
}

TEST_F(SqliteSaverTest, FileOfANewerSchemaVersionIsRefused) {
  saver_.reset();
  {
    sql::SqliteConnection connection(path());
    connection.exec("UPDATE tollgate_schema SET version = 99 WHERE component = 'checkpoints'");
  }
  try {
    open_sqlite_saver(path());
    FAIL() << "opened a newer schema";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConflict);
    EXPECT_NE(std::string(e.what()).find("version 99"), std::string::npos) << e.what();
  }
}

TEST_F(SqliteSaverTest, AnAgentsCheckpointRowsStayInTheirPages) {
  // The channels and nodes of the HITL agent, metadata as the server stamps it: the row must
  // stay under the ~1,000 bytes SQLite keeps of an index B-tree cell in a 4 KiB page (format 1
  // headers, ~840 bytes, put each row partly in an overflow page of its own).
  const std::vector<std::string> channels = {"__start__",
                                             "branch:to:HumanInTheLoopMiddleware.after_model",
                                             "branch:to:PatchToolCallsMiddleware.before_agent",
                                             "branch:to:model",
                                             "branch:to:tools",
                                             "hitl_edited_tool_calls",
                                             "jump_to",
                                             "messages"};
  const std::vector<std::string> nodes = {"__input__", "HumanInTheLoopMiddleware.after_model",
                                          "PatchToolCallsMiddleware.before_agent", "model",
                                          "tools"};
  const std::string thread_id = "01a23ba1-f853-70c1-b34c-65e8565c9d87";
  const Json metadata = {{"assistant_id", "25226edc-db8e-5a6e-9ca6-12d3466bf3a1"},
                         {"created_by", "system"},
                         {"graph_id", "bench"},
                         {"parents", Json::object()},
                         {"run_id", "01a23ba1-f861-7035-84cb-33bb078ee5ee"},
                         {"source", "loop"},
                         {"thread_id", thread_id}};
  CheckpointConfig parent{thread_id, "", ""};
  for (std::int64_t step = 0; step < 24; ++step) {
    std::map<std::string, Json> values;
    ChannelVersions versions;
    for (std::size_t i = 0; i < channels.size(); ++i) {
      // Each step writes half of the channels: the refs name several checkpoints.
      values.emplace(channels[i], Json::array({step}));
      versions.emplace(channels[i], step * 2 + static_cast<std::int64_t>(i % 2));
    }
    Checkpoint checkpoint = make_checkpoint(step, values, versions);
    checkpoint.versions_seen.clear();
    for (const std::string& node : nodes) {
      checkpoint.versions_seen[node] = {{channels[1], step}, {channels[7], step}};
    }
    checkpoint.updated_channels = {channels[3], channels[6], channels[7]};
    parent = saver_->put(parent, checkpoint, metadata, checkpoint.channel_versions);
  }
  sql::SqliteConnection file(path());
  auto overflow = file.prepare(
      "SELECT count(*) FROM dbstat WHERE name = 'checkpoints' AND pagetype = 'overflow'");
  ASSERT_TRUE(overflow->step());
  EXPECT_EQ(overflow->integer(0), 0);
  auto tuple = saver_->get_tuple(parent);
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->checkpoint.versions_seen.size(), nodes.size());
}

TEST_F(SqliteSaverTest, UnopenablePathIsUnavailable) {
  try {
    open_sqlite_saver(scratch_dir() + "/no/such/dir/x.db");
    FAIL() << "opened an impossible path";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
  }
}

TEST_F(SqliteSaverTest, TwoConnectionsShareOneFile) {
  auto other = open_sqlite_saver(path());
  Checkpoint checkpoint = make_checkpoint(-1, {{"a", 1}});
  CheckpointConfig config =
      saver_->put({"t", "", ""}, checkpoint, Json::object(), checkpoint.channel_versions);
  other->put_writes(config, {{"a", 2}}, "task");
  auto tuple = saver_->get_tuple(config);
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->pending_writes.size(), 1u);
}

TEST_F(SqliteSaverTest, MetadataFilterMatchesKeysContainingDotsLiterally) {
  saver_->put({"t", "", ""}, make_checkpoint(-1), Json{{"a.b", 1}, {"a", {{"b", 2}}}}, {});
  ListQuery query;
  query.filter = Json{{"a.b", 1}};
  EXPECT_EQ(saver_->list(query).size(), 1u);
  query.filter = Json{{"a.b", 2}};
  EXPECT_TRUE(saver_->list(query).empty());
}

TEST_F(SqliteSaverTest, AFailedPutLeavesNothingBehind) {
  {
    sql::SqliteConnection connection(path());
    connection.exec(
        "CREATE TRIGGER poison BEFORE INSERT ON channel_values WHEN NEW.channel = 'poison' "
        "BEGIN SELECT RAISE(ABORT, 'poisoned value'); END");
  }
  // Values too big to be kept in the header: each is a row of channel_values.
  const Json big = "a value of more than fifteen bytes";
  Checkpoint checkpoint = make_checkpoint(-1, {{"fine", big}, {"poison", big}});
  EXPECT_THROW(saver_->put({"t", "", ""}, checkpoint, Json::object(), checkpoint.channel_versions),
               Error);
  EXPECT_FALSE(saver_->get_tuple({"t", "", ""}).has_value());
  // The connection is usable afterwards.
  Checkpoint good = make_checkpoint(-1, {{"fine", big}});
  saver_->put({"t", "", ""}, good, Json::object(), good.channel_versions);
  EXPECT_EQ(saver_->get_tuple({"t", "", ""})->checkpoint, good);
}

TEST_F(SqliteSaverTest, MetadataThatIsNotValidUtf8IsRejected) {
  try {
    saver_->put({"t", "", ""}, make_checkpoint(-1), Json{{"bad", std::string("\xff\xfe")}}, {});
    FAIL() << "stored invalid UTF-8";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("metadata"), std::string::npos) << e.what();
  }
}

TEST_F(SqliteSaverTest, ConcurrentWritersOnTwoConnectionsWaitForEachOther) {
  auto other = open_sqlite_saver(path());
  auto write_thread = [](Saver& saver, const std::string& thread_id) {
    MessageThread thread(saver, thread_id);
    for (int i = 0; i < 40; ++i) {
      CheckpointConfig config = thread.append(message(i));
      saver.put_writes(config, {{"x", i}}, "task");
    }
  };
  std::thread first([&] { write_thread(*saver_, "a"); });
  std::thread second([&] { write_thread(*other, "b"); });
  first.join();
  second.join();
  for (const char* thread_id : {"a", "b"}) {
    ListQuery query;
    query.thread_id = thread_id;
    EXPECT_EQ(saver_->list(query).size(), 40u) << thread_id;
  }
}

// A connection remembers the checkpoint it put last to skip reading it back as the next
// parent; a change by another connection must invalidate that.
TEST_F(SqliteSaverTest, AParentDeletedByAnotherConnectionIsNotTrusted) {
  auto other = open_sqlite_saver(path());
  Checkpoint first = make_checkpoint(-1, {{"messages", Json::array({"a"})}});
  CheckpointConfig config =
      saver_->put({"t", "", ""}, first, Json::object(), first.channel_versions,
                  {{"messages", ListDelta{0, Json::array({"a"})}}});
  other->delete_thread("t");
  Checkpoint second =
      make_checkpoint(0, {{"messages", Json::array({"a", "b"})}}, {{"messages", 2}});
  config = saver_->put(config, second, Json::object(), {{"messages", 2}},
                       {{"messages", ListDelta{1, Json::array({"b"})}}});
  EXPECT_EQ(other->get_tuple(config)->checkpoint, second);
}

}  // namespace
}  // namespace tollgate::testing

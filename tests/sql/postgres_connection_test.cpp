// The PostgreSQL backend of the SQL layer against a real server (label postgres).
#include "sql/postgres_connection.h"

#include <gtest/gtest.h>

#include <array>
#include <thread>
#include <vector>

#include "sql/migrations.h"
#include "sql/sql_test_util.h"
#include "support/postgres_test_server.h"

namespace tollgate::sql {
namespace {

using testing::ScratchSchema;
using testing::test_postgres_url;

class PostgresConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TOLLGATE_REQUIRE_POSTGRES();
    schema_ = std::make_unique<ScratchSchema>();
    connection_ = open();
    connection_->exec("CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT, data BYTEA)");
  }
  void TearDown() override {
    connection_.reset();
    schema_.reset();
  }
  std::unique_ptr<PostgresConnection> open() const {
    return std::make_unique<PostgresConnection>(test_postgres_url(),
                                                PostgresOptions{schema_->name()});
  }
  std::int64_t count_items(PostgresConnection& connection) const {
    PostgresStatement count(connection, "SELECT count(*) FROM items");
    EXPECT_TRUE(count.step());
    return count.integer(0);
  }
  // Ends this test's connection from another session, as an administrator or a failover would.
  void terminate_backend(PostgresConnection& victim) const {
    PostgresConnection admin(test_postgres_url());
    PostgresStatement kill(admin, "SELECT pg_terminate_backend($1, 10000)");
    kill.bind(1, std::int64_t{victim.backend_pid()});
    ASSERT_TRUE(kill.step());
  }

  std::unique_ptr<ScratchSchema> schema_;
  std::unique_ptr<PostgresConnection> connection_;
};

TEST_F(PostgresConnectionTest, BoundTextIntegersBytesAndNullsReadBack) {
  const std::array<std::uint8_t, 4> bytes = {0, 1, 0xFF, 7};
  PostgresStatement insert(*connection_, "INSERT INTO items (id, name, data) VALUES ($1, $2, $3)");
  EXPECT_EQ(insert.bind(1, std::int64_t{-5}).bind(2, "five").bind_blob(3, bytes).run(), 1);
  insert.reset();
  EXPECT_EQ(insert.bind(1, std::int64_t{1} << 40).bind_null(2).bind_null(3).run(), 1);

  PostgresStatement select(*connection_, "SELECT id, name, data FROM items ORDER BY id");
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.integer(0), -5);
  EXPECT_EQ(select.text(1), "five");
  const auto data = select.blob(2);
  EXPECT_EQ(std::vector<std::uint8_t>(data.begin(), data.end()),
            std::vector<std::uint8_t>(bytes.begin(), bytes.end()));
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.integer(0), std::int64_t{1} << 40);
  EXPECT_TRUE(select.is_null(1));
  EXPECT_TRUE(select.is_null(2));
  EXPECT_FALSE(select.step());
}

TEST_F(PostgresConnectionTest, IntegersOfEverySizeAndBooleansRead) {
  PostgresStatement select(*connection_,
                           "SELECT (-2)::int2, (-70000)::int4, 5000000000::int8, true, false");
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.integer(0), -2);
  EXPECT_EQ(select.integer(1), -70000);
  EXPECT_EQ(select.integer(2), 5000000000);
  EXPECT_EQ(select.integer(3), 1);
  EXPECT_EQ(select.integer(4), 0);
}

TEST_F(PostgresConnectionTest, EveryTransactionLeftUncommittedIsRolledBack) {
  for (int i = 0; i < 3; ++i) {  // BEGIN and COMMIT are cached statements: each use counts
    {
      Transaction transaction(*connection_, TransactionKind::kWrite);
      connection_->exec("INSERT INTO items (id) VALUES (" + std::to_string(2 * i) + ")");
    }
    EXPECT_EQ(count_items(*connection_), i);
    {
      Transaction transaction(*connection_, TransactionKind::kWrite);
      connection_->exec("INSERT INTO items (id) VALUES (" + std::to_string(2 * i + 1) + ")");
      transaction.commit();
    }
    EXPECT_EQ(count_items(*connection_), i + 1);
  }
}

TEST_F(PostgresConnectionTest, ReadTransactionSeesOneSnapshot) {
  auto other = open();
  Transaction transaction(*connection_, TransactionKind::kRead);
  EXPECT_EQ(count_items(*connection_), 0);
  other->exec("INSERT INTO items (id) VALUES (1)");
  EXPECT_EQ(count_items(*connection_), 0);
  transaction.commit();
  EXPECT_EQ(count_items(*connection_), 1);
}

TEST_F(PostgresConnectionTest, ReadTransactionRefusesWrites) {
  Transaction transaction(*connection_, TransactionKind::kRead);
  EXPECT_EQ(code_of([&] { connection_->exec("INSERT INTO items (id) VALUES (1)"); }),
            ErrorCode::kInternal);
}

TEST_F(PostgresConnectionTest, PipelineReturnsTheRowsEachStatementChanged) {
  PostgresStatement insert(*connection_, "INSERT INTO items (id) VALUES ($1)");
  PostgresStatement update(*connection_, "UPDATE items SET name = 'x'");
  PostgresPipeline pipeline(*connection_);
  insert.bind(1, std::int64_t{1});
  pipeline.add(insert);
  insert.bind(1, std::int64_t{2});
  pipeline.add(insert);
  pipeline.add(update);
  EXPECT_EQ(pipeline.finish(), (std::vector<int>{1, 1, 2}));
  EXPECT_EQ(count_items(*connection_), 2);
}

TEST_F(PostgresConnectionTest, PipelineWithAFailingStatementWritesNothing) {
  PostgresStatement insert(*connection_, "INSERT INTO items (id) VALUES ($1)");
  {
    PostgresPipeline pipeline(*connection_);
    insert.bind(1, std::int64_t{1});
    pipeline.add(insert);
    insert.bind(1, std::int64_t{1});  // a duplicate key
    pipeline.add(insert);
    EXPECT_EQ(code_of([&] { pipeline.finish(); }), ErrorCode::kInternal);
  }
  EXPECT_EQ(count_items(*connection_), 0);
  insert.bind(1, std::int64_t{3});
  EXPECT_EQ(insert.run(), 1);  // the connection is usable afterwards
}

TEST_F(PostgresConnectionTest, PipelineInsideATransactionCommitsWithIt) {
  PostgresStatement insert(*connection_, "INSERT INTO items (id) VALUES ($1)");
  {
    Transaction transaction(*connection_, TransactionKind::kWrite);
    PostgresPipeline pipeline(*connection_);
    insert.bind(1, std::int64_t{1});
    pipeline.add(insert);
    pipeline.finish();
  }
  EXPECT_EQ(count_items(*connection_), 0);
}

TEST_F(PostgresConnectionTest, CommitAfterRunsTheLastStatementThenCommits) {
  PostgresStatement insert(*connection_, "INSERT INTO items (id) VALUES ($1)");
  {
    Transaction transaction(*connection_, TransactionKind::kWrite);
    insert.bind(1, std::int64_t{1});
    EXPECT_EQ(insert.run(), 1);
    insert.reset();
    insert.bind(1, std::int64_t{2});
    transaction.commit_after(insert);
    EXPECT_FALSE(connection_->in_transaction());
  }
  auto other = open();
  EXPECT_EQ(count_items(*other), 2);  // committed: another session sees both rows
  insert.bind(1, std::int64_t{3});
  EXPECT_EQ(insert.run(), 1);  // the statement was reset and is reusable
}

TEST_F(PostgresConnectionTest, CommitAfterAsTheOnlyStatementSendsTheBeginWithIt) {
  PostgresStatement insert(*connection_, "INSERT INTO items (id) VALUES ($1)");
  {
    Transaction transaction(*connection_, TransactionKind::kWrite);
    insert.bind(1, std::int64_t{1});
    transaction.commit_after(insert);
  }
  auto other = open();
  EXPECT_EQ(count_items(*other), 1);
}

TEST_F(PostgresConnectionTest, CommitAfterAFailingLastStatementKeepsNothing) {
  PostgresStatement insert(*connection_, "INSERT INTO items (id) VALUES ($1)");
  {
    Transaction transaction(*connection_, TransactionKind::kWrite);
    insert.bind(1, std::int64_t{1});
    EXPECT_EQ(insert.run(), 1);
    insert.reset();
    insert.bind(1, std::int64_t{1});  // a duplicate key: the COMMIT sent with it is skipped
    EXPECT_EQ(code_of([&] { transaction.commit_after(insert); }), ErrorCode::kInternal);
  }  // rolled back here
  EXPECT_FALSE(connection_->in_transaction());
  EXPECT_EQ(count_items(*connection_), 0);
  insert.reset();
  insert.bind(1, std::int64_t{4});
  EXPECT_EQ(insert.run(), 1);  // the connection is usable afterwards
  EXPECT_EQ(count_items(*connection_), 1);
}

TEST_F(PostgresConnectionTest, SyntaxErrorIsInternalAndNamesTheStatement) {
  const Error error = error_of([&] { PostgresStatement(*connection_, "SELEC 1").step(); });
  EXPECT_EQ(error.code(), ErrorCode::kInternal);
  EXPECT_NE(std::string(error.what()).find("SELEC 1"), std::string::npos) << error.what();
}

TEST_F(PostgresConnectionTest, TerminatedConnectionFailsAsUnavailableThenReconnects) {
  PostgresStatement insert(*connection_, "INSERT INTO items (id) VALUES ($1)");
  insert.bind(1, std::int64_t{1}).run();
  insert.reset();
  terminate_backend(*connection_);
  const Error error = error_of([&] { insert.bind(1, std::int64_t{2}).run(); });
  EXPECT_EQ(error.code(), ErrorCode::kUnavailable);
  EXPECT_NE(std::string(error.what()).find("lost"), std::string::npos) << error.what();
  insert.reset();
  EXPECT_EQ(insert.bind(1, std::int64_t{3}).run(), 1);  // prepared again on the new session
  EXPECT_EQ(count_items(*connection_), 2);
}

// The compression of a value of `items`.name, by id ("" when stored uncompressed).
std::string name_compression(PostgresConnection& connection, std::int64_t id) {
  PostgresStatement s(connection,
                      "SELECT coalesce(pg_column_compression(name), '') FROM items WHERE id = $1");
  s.bind(1, id);
  EXPECT_TRUE(s.step());
  return s.text(0);
}

TEST_F(PostgresConnectionTest, LargeValuesAreCompressedByLz4AlsoAfterAReconnect) {
  PostgresStatement insert(*connection_, "INSERT INTO items (id, name) VALUES ($1, $2)");
  std::string large;
  for (int i = 0; large.size() < 16 * 1024; ++i)
    large += "{\"event\":\"values\",\"n\":" + std::to_string(i) + "}\n";
  insert.bind(1, std::int64_t{1}).bind(2, large).run();
  insert.reset();
  EXPECT_EQ(name_compression(*connection_, 1), "lz4");
  terminate_backend(*connection_);
  EXPECT_EQ(error_of([&] { insert.bind(1, std::int64_t{2}).bind(2, large).run(); }).code(),
            ErrorCode::kUnavailable);
  insert.reset();
  insert.bind(1, std::int64_t{3}).bind(2, large).run();
  EXPECT_EQ(name_compression(*connection_, 3), "lz4");
}

TEST_F(PostgresConnectionTest, ConnectionTerminatedWhileIdleBeginsTheNextTransaction) {
  terminate_backend(*connection_);
  Transaction transaction(*connection_, TransactionKind::kWrite);
  connection_->exec("INSERT INTO items (id) VALUES (1)");
  transaction.commit();
  EXPECT_EQ(count_items(*connection_), 1);
}

TEST_F(PostgresConnectionTest, ATransactionsFirstStatementRunsInsideIt) {
  PostgresStatement insert(*connection_, "INSERT INTO items (id) VALUES ($1)");
  {
    Transaction transaction(*connection_, TransactionKind::kWrite);
    EXPECT_EQ(insert.bind(1, std::int64_t{1}).run(), 1);  // sent with the BEGIN
  }
  EXPECT_EQ(count_items(*connection_), 0);
  Transaction read(*connection_, TransactionKind::kRead);
  PostgresStatement isolation(*connection_, "SHOW transaction_isolation");
  ASSERT_TRUE(isolation.step());
  EXPECT_EQ(isolation.text(0), "repeatable read");
}

TEST_F(PostgresConnectionTest, ConnectionTerminatedWhileIdleRunsTheFirstStatementWithItsValues) {
  terminate_backend(*connection_);
  PostgresStatement insert(*connection_, "INSERT INTO items (id, name) VALUES ($1, $2)");
  Transaction transaction(*connection_, TransactionKind::kWrite);
  EXPECT_EQ(insert.bind(1, std::int64_t{7}).bind(2, "seven").run(), 1);
  transaction.commit();
  PostgresStatement name(*connection_, "SELECT name FROM items WHERE id = 7");
  ASSERT_TRUE(name.step());
  EXPECT_EQ(name.text(0), "seven");
}

TEST_F(PostgresConnectionTest, ATransactionWithoutStatementsSendsNothing) {
  const int pid = connection_->backend_pid();
  terminate_backend(*connection_);
  {
    Transaction transaction(*connection_, TransactionKind::kWrite);
    transaction.commit();  // nothing to send: the broken session is not even noticed
  }
  { Transaction rolled_back(*connection_, TransactionKind::kRead); }
  EXPECT_EQ(connection_->backend_pid(), pid);
  // Found gone by the first statement sent (outside a transaction: it fails, as ever).
  EXPECT_EQ(code_of([&] { PostgresStatement(*connection_, "SELECT 1").step(); }),
            ErrorCode::kUnavailable);
}

TEST_F(PostgresConnectionTest, ConnectionTerminatedInATransactionFailsItAndKeepsNothing) {
  {
    Transaction transaction(*connection_, TransactionKind::kWrite);
    connection_->exec("INSERT INTO items (id) VALUES (1)");
    terminate_backend(*connection_);
    EXPECT_EQ(code_of([&] { connection_->exec("INSERT INTO items (id) VALUES (2)"); }),
              ErrorCode::kUnavailable);
  }
  EXPECT_EQ(count_items(*connection_), 0);
}

TEST_F(PostgresConnectionTest, PipelineOnATerminatedConnectionFailsAsUnavailable) {
  PostgresStatement insert(*connection_, "INSERT INTO items (id) VALUES ($1)");
  terminate_backend(*connection_);
  {
    PostgresPipeline pipeline(*connection_);
    insert.bind(1, std::int64_t{1});
    pipeline.add(insert);
    EXPECT_EQ(code_of([&] { pipeline.finish(); }), ErrorCode::kUnavailable);
  }
  insert.bind(1, std::int64_t{2});
  EXPECT_EQ(insert.run(), 1);
  EXPECT_EQ(count_items(*connection_), 1);
}

TEST_F(PostgresConnectionTest, SessionCanCommitWithoutWaitingForTheFlush) {
  auto show = [](PostgresConnection& connection) {
    PostgresStatement query(connection, "SHOW synchronous_commit");
    EXPECT_TRUE(query.step());
    return query.text(0);
  };
  PostgresConnection asynchronous(test_postgres_url(), {.schema = "", .synchronous_commit = false});
  EXPECT_EQ(show(asynchronous), "off");
  PostgresConnection server_default(test_postgres_url());
  EXPECT_EQ(show(server_default), "on");  // scripts/pg.sh keeps PostgreSQL's default
}

TEST(PostgresConnectionUrl, UnreachableServerIsUnavailableAndNamesIt) {
  // Port 1 on loopback: nothing listens there.
  const Error error = error_of([] { PostgresConnection("postgres://u@127.0.0.1:1/db"); });
  EXPECT_EQ(error.code(), ErrorCode::kUnavailable);
  EXPECT_NE(std::string(error.what()).find("127.0.0.1:1/db"), std::string::npos) << error.what();
}

TEST(PostgresConnectionUrl, UrlOfAnotherSchemeIsRefused) {
  const Error error = error_of([] { PostgresConnection("mysql://u@127.0.0.1/db"); });
  EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(std::string(error.what()).find("postgres://"), std::string::npos) << error.what();
}

TEST(PostgresConnectionUrl, PasswordNeverAppearsInErrors) {
  const Error error = error_of([] { PostgresConnection("postgres://u:s3cret@127.0.0.1:1/db"); });
  EXPECT_EQ(std::string(error.what()).find("s3cret"), std::string::npos) << error.what();
}

constexpr std::array<Migration, 2> kMigrations = {{
    {"CREATE TABLE a (x INTEGER)", "CREATE TABLE a (x INTEGER)"},
    {"ALTER TABLE a ADD COLUMN y INTEGER", "ALTER TABLE a ADD COLUMN y INTEGER"},
}};
const Schema kSchema{"test_component", kMigrations};

TEST_F(PostgresConnectionTest, MigrationRecordsItsVersionAndRunsOnce) {
  migrate(*connection_, kSchema);
  migrate(*connection_, kSchema);
  EXPECT_EQ(schema_version(*connection_, "test_component"), 2);
  EXPECT_TRUE(table_exists(*connection_, "a"));
  EXPECT_FALSE(table_exists(*connection_, "b"));
}

TEST_F(PostgresConnectionTest, MigrationToALaterVersionRunsOnlyTheMissingSteps) {
  migrate(*connection_, kSchema, 1);
  EXPECT_EQ(schema_version(*connection_, "test_component"), 1);
  migrate(*connection_, kSchema);
  EXPECT_EQ(schema_version(*connection_, "test_component"), 2);
  connection_->exec("INSERT INTO a (x, y) VALUES (1, 2)");
}

TEST_F(PostgresConnectionTest, SchemaNewerThanTheBuildIsRefused) {
  migrate(*connection_, kSchema);
  EXPECT_EQ(code_of([&] { migrate(*connection_, kSchema, 1); }), ErrorCode::kConflict);
}

TEST_F(PostgresConnectionTest, ConcurrentMigrationsOfANewSchemaBothSucceed) {
  std::vector<std::unique_ptr<PostgresConnection>> connections;
  for (int i = 0; i < 4; ++i) connections.push_back(open());
  std::vector<std::thread> threads;
  std::vector<int> failures(connections.size(), 0);
  for (std::size_t i = 0; i < connections.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        migrate(*connections[i], kSchema);
      } catch (const Error&) {
        failures[i] = 1;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, std::vector<int>(connections.size(), 0));
  EXPECT_EQ(schema_version(*connection_, "test_component"), 2);
}

}  // namespace
}  // namespace tollgate::sql

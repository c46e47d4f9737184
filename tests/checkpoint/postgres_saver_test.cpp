// The PostgreSQL saver against a real server (label postgres): the conformance suite, each case
// in a schema of its own, then what only this saver has (schema set-up by several processes,
// a server that drops or refuses connections).
#include "tollgate/postgres_saver.h"

#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "checkpoint/postgres_schema.h"
#include "checkpoint/saver_conformance.h"
#include "checkpoint/saver_test_util.h"
#include "sql/migrations.h"
#include "support/postgres_test_server.h"
#include "tollgate/error.h"

namespace tollgate::testing {
namespace {

// Skips every test of this program when no server was given.
class RequirePostgres : public ::testing::Environment {
 public:
  void SetUp() override { TOLLGATE_REQUIRE_POSTGRES(); }
};
[[maybe_unused]] auto* const kRequirePostgres =
    ::testing::AddGlobalTestEnvironment(new RequirePostgres);

// The schema of the saver the factory made last; dropped when the next one is made or when the
// test program ends (each case runs in its own process under ctest).
std::unique_ptr<ScratchSchema>& factory_schema() {
  static std::unique_ptr<ScratchSchema> schema;
  return schema;
}

}  // namespace

const SaverFactory kPostgresFactory{
    "postgres",
    [](const std::string&) {
      factory_schema() = std::make_unique<ScratchSchema>();
      return open_postgres_saver(test_postgres_url(), {.schema = factory_schema()->name()});
    },
    [](Saver& saver) { return saver.stats().bytes_written; }};

INSTANTIATE_SAVER_CONFORMANCE(Postgres, kPostgresFactory);

namespace {

class PostgresSaverTest : public ::testing::Test {
 protected:
  std::shared_ptr<Saver> open() const {
    return open_postgres_saver(test_postgres_url(), {.schema = schema_.name()});
  }
  std::unique_ptr<sql::PostgresConnection> connect() const {
    return std::make_unique<sql::PostgresConnection>(test_postgres_url(),
                                                     sql::PostgresOptions{schema_.name()});
  }
  ScratchSchema schema_;
};

CheckpointConfig put_one(Saver& saver, const std::string& thread_id) {
  Checkpoint checkpoint = make_checkpoint(-1, {{"messages", Json::array({"hi"})}});
  return saver.put({thread_id, "", ""}, checkpoint, Json{{"source", "input"}},
                   checkpoint.channel_versions);
}

TEST_F(PostgresSaverTest, NewSchemaGetsTheCurrentVersion) {
  auto saver = open();
  EXPECT_EQ(sql::schema_version(*connect(), "checkpoints"), kPostgresSchemaVersion);
}

TEST_F(PostgresSaverTest, ReopenedSaverKeepsCheckpointsAndWrites) {
  Checkpoint checkpoint = make_checkpoint(-1, {{"messages", Json::array({"hi"})}});
  {
    auto saver = open();
    CheckpointConfig config = saver->put({"t", "", ""}, checkpoint, Json{{"source", "input"}},
                                         checkpoint.channel_versions);
    saver->put_writes(config, {{"messages", "x"}}, "task");
  }
  auto reopened = open();  // sets up again: nothing to do
  auto tuple = reopened->get_tuple({"t", "", ""});
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->checkpoint, checkpoint);
  EXPECT_EQ(tuple->pending_writes.size(), 1u);
}

TEST_F(PostgresSaverTest, SaversOpeningANewSchemaAtOnceAllSucceed) {
  ScratchSchema fresh;
  const std::string name = fresh.name() + "_new";  // not created yet: the savers create it
  std::vector<std::thread> threads;
  std::vector<std::string> failures(4);
  for (std::size_t i = 0; i < failures.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        open_postgres_saver(test_postgres_url(), {.schema = name});
      } catch (const Error& e) {
        failures[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, std::vector<std::string>(failures.size()));
  sql::PostgresConnection admin(test_postgres_url());
  admin.exec("DROP SCHEMA " + sql::quote_identifier(name) + " CASCADE");
}

TEST_F(PostgresSaverTest, SchemaOfANewerVersionIsRefused) {
  { auto saver = open(); }
  connect()->exec("UPDATE tollgate_schema SET version = 99 WHERE component = 'checkpoints'");
  const Error error = [&] {
    try {
      open();
    } catch (const Error& e) {
      return e;
    }
    return Error::Internal("opened");
  }();
  EXPECT_EQ(error.code(), ErrorCode::kConflict) << error.what();
}

TEST_F(PostgresSaverTest, ServerThatCannotBeReachedIsUnavailableAndNamed) {
  try {
    open_postgres_saver("postgres://tollgate@127.0.0.1:1/tollgate");
    FAIL() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("cannot connect to 127.0.0.1:1/tollgate"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(PostgresSaverTest, UrlOfAnotherSchemeIsRefused) {
  try {
    open_postgres_saver("sqlite:./tollgate.db");
    FAIL() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
  }
}

TEST_F(PostgresSaverTest, CallAfterTheConnectionWasTerminatedSucceedsOnANewOne) {
  const std::string url = test_postgres_url() + "?application_name=" + schema_.name();
  auto saver = open_postgres_saver(url, {.schema = schema_.name()});
  CheckpointConfig first = put_one(*saver, "t");
  sql::PostgresConnection admin(test_postgres_url());
  admin.exec(
      "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE "
      "application_name = '" +
      schema_.name() + "'");
  saver->put_writes(first, {{"messages", "x"}}, "task");
  auto tuple = saver->get_tuple({"t", "", ""});
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->pending_writes.size(), 1u);
}

}  // namespace
}  // namespace tollgate::testing

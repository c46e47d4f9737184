// The PostgreSQL saver when the database goes away in the middle of a run (label postgres).
// A cycle runs once unfaulted to count its saver calls; then, for every N, a fresh schema runs
// it with the database failing just before the Nth put or put_writes:
//   - the server ends the saver's session (pg_terminate_backend, as a restart or a failover
//     does): the call is made again on a new connection and the run ends as the unfaulted one;
//   - the database refuses connections as well (down): the run fails with Error(kUnavailable)
//     naming the database, the history stored so far reads back whole, and once the database
//     is back the thread runs on to the unfaulted run's values and history.
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "checkpoint/failing_saver.h"
#include "checkpoint/fault_cycles.h"
#include "support/postgres_test_server.h"
#include "tollgate/postgres_saver.h"

namespace tollgate::testing {
namespace {

class PostgresStepFaultTest : public ::testing::TestWithParam<FaultCycle (*)()> {
 protected:
  void SetUp() override {
    TOLLGATE_REQUIRE_POSTGRES();
    database_ = ScratchSchema().name();  // a fresh name
    admin_ = std::make_unique<sql::PostgresConnection>(test_postgres_url());
    admin_->exec("CREATE DATABASE " + database_);
  }
  void TearDown() override {
    if (!admin_) return;
    allow_connections(true);
    end_sessions();
    admin_->exec("DROP DATABASE IF EXISTS " + database_);
  }

  std::shared_ptr<Saver> open(const std::string& schema) const {
    return open_postgres_saver(test_postgres_url_of(database_), {.schema = schema});
  }
  void end_sessions() const {
    admin_->exec("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = '" +
                 database_ + "'");
  }
  void allow_connections(bool allow) const {
    admin_->exec("ALTER DATABASE " + database_ + " ALLOW_CONNECTIONS " +
                 (allow ? "true" : "false"));
  }

  // The unfaulted run's end and the number of put and put_writes calls it made.
  std::uint64_t run_reference(const FaultCycle& cycle, Reference& reference) const {
    auto counter = std::make_shared<FailingSaver>(open("reference"), 0);
    auto graph = cycle.build(counter);
    DriveResult result = drive_to_end(*graph, cycle, fault_thread());
    EXPECT_TRUE(result.errors.empty()) << result.errors.front().what();
    reference = {comparable_values(result.values), comparable_history(*graph, fault_thread())};
    return counter->calls();
  }

  std::string database_;
  std::unique_ptr<sql::PostgresConnection> admin_;
};

TEST_P(PostgresStepFaultTest, EachEndedSessionIsReconnectedAndTheRunEndsAsUnfaulted) {
  const FaultCycle cycle = GetParam()();
  Reference reference;
  const std::uint64_t calls = run_reference(cycle, reference);
  ASSERT_GT(calls, 0u);
  for (std::uint64_t n = 1; n <= calls; ++n) {
    SCOPED_TRACE("session ended before call " + std::to_string(n) + " of " + std::to_string(calls));
    auto saver = std::make_shared<FailingSaver>(open("ended_" + std::to_string(n)), n,
                                                [&] { end_sessions(); });
    auto graph = cycle.build(saver);
    DriveResult result = drive_to_end(*graph, cycle, fault_thread());
    EXPECT_TRUE(saver->fired());
    EXPECT_TRUE(result.errors.empty()) << result.errors.front().what();
    EXPECT_EQ(comparable_values(result.values), reference.values);
    EXPECT_EQ(comparable_history(*graph, fault_thread()), reference.history);
  }
}

TEST_P(PostgresStepFaultTest, DatabaseDownFailsTheStepAndTheThreadEndsAsUnfaultedWhenItIsBack) {
  const FaultCycle cycle = GetParam()();
  Reference reference;
  const std::uint64_t calls = run_reference(cycle, reference);
  for (std::uint64_t n = 1; n <= calls; ++n) {
    SCOPED_TRACE("database down before call " + std::to_string(n) + " of " + std::to_string(calls));
    auto saver = std::make_shared<FailingSaver>(open("down_" + std::to_string(n)), n, [&] {
      allow_connections(false);
      end_sessions();
    });
    auto graph = cycle.build(saver);
    DriveResult result = drive_to_end(*graph, cycle, fault_thread(), [&](const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kUnavailable) << error.what();
      EXPECT_NE(std::string(error.what()).find("/" + database_), std::string::npos) << error.what();
      allow_connections(true);
      // What was stored before the failure reads back whole.
      EXPECT_TRUE(is_reference_prefix(comparable_history(*graph, fault_thread()), reference));
    });
    EXPECT_TRUE(saver->fired());
    ASSERT_EQ(result.errors.size(), 1u) << "the failure must surface as one failed run";
    EXPECT_EQ(comparable_values(result.values), reference.values);
    EXPECT_EQ(comparable_history(*graph, fault_thread()), reference.history);
  }
}

std::string cycle_name(const ::testing::TestParamInfo<FaultCycle (*)()>& info) {
  return info.param().name;
}

INSTANTIATE_TEST_SUITE_P(Cycles, PostgresStepFaultTest, ::testing::Values(agent_cycle, graph_cycle),
                         cycle_name);

}  // namespace
}  // namespace tollgate::testing

// Each write and sync of a step fails once, on both savers (SQLite's own fault testing is the
// model). A cycle runs once unfaulted to count its I/O; then, for every N, a fresh database
// runs the cycle with the Nth write (or sync) of its files failing once, through the SQLite
// VFS's fault seam (sql/file_faults.h) — or, for the memory saver, with its Nth put or
// put_writes failing (FailingSaver). Each time:
//   - the run reports the failure as an Error (no crash, no hang);
//   - right after it, the thread's history (and get_state) reads back whole: the checkpoints
//     stored so far, exactly as the unfaulted run stored them;
//   - the thread then runs on to the unfaulted run's final values and history (no message
//     twice, no pending write lost);
//   - the file passes PRAGMA integrity_check, and a new connection reads the same history.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <ostream>
#include <string>

#include "checkpoint/failing_saver.h"
#include "checkpoint/fault_cycles.h"
#include "sql/file_faults.h"
#include "sql/sqlite_connection.h"
#include "tollgate/memory_saver.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate::testing {
namespace {

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tollgate-faults-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Checks what a failed run left behind, through the graph's own saver and, when given,
// through another saver on the same storage.
void expect_whole_after_failure(const CompiledGraph& graph, const CompiledGraph* other,
                                const Reference& reference, const Error& error) {
  EXPECT_EQ(error.code(), ErrorCode::kUnavailable) << error.what();
  EXPECT_NO_THROW(graph.get_state(fault_thread()));
  EXPECT_TRUE(is_reference_prefix(comparable_history(graph, fault_thread()), reference));
  if (other != nullptr) {
    EXPECT_TRUE(is_reference_prefix(comparable_history(*other, fault_thread()), reference));
  }
}

void expect_like_reference(const DriveResult& result, const CompiledGraph& graph,
                           const Reference& reference) {
  ASSERT_EQ(result.errors.size(), 1u) << "the failure must surface as one failed run";
  EXPECT_EQ(comparable_values(result.values), reference.values);
  EXPECT_EQ(comparable_history(graph, fault_thread()), reference.history);
}

std::string integrity_of(const std::string& path) {
  sql::SqliteConnection connection(path);
  auto check = connection.prepare("PRAGMA integrity_check");
  std::string result;
  while (check->step()) result += check->text(0);
  return result;
}

// ------------------------------------------------------------------------------- SQLite

struct SqliteFaultCase {
  FaultCycle (*cycle)();
  SqliteSynchronous synchronous;
  sql::FileOperation operation;
  sql::FileFault fault;
};

std::string describe(const SqliteFaultCase& c) {
  std::string name = c.cycle().name;
  name += c.synchronous == SqliteSynchronous::kFull ? "_full" : "_normal";
  name += c.operation == sql::FileOperation::kWrite  ? "_write"
          : c.operation == sql::FileOperation::kSync ? "_sync"
                                                     : "_truncate";
  name += c.fault == sql::FileFault::kDiskFull ? "_disk_full" : "_io_error";
  return name;
}

void PrintTo(const SqliteFaultCase& c, std::ostream* out) {
  *out << describe(c);
}

std::string case_name(const ::testing::TestParamInfo<SqliteFaultCase>& info) {
  return describe(info.param);
}

class SqliteStepFaultTest : public ::testing::TestWithParam<SqliteFaultCase> {
 protected:
  std::shared_ptr<Saver> open(const std::string& path) const {
    return open_sqlite_saver(path, {.synchronous = GetParam().synchronous});
  }
  ScratchDir dir_;
};

TEST_P(SqliteStepFaultTest, EachFailurePointLeavesTheLastCheckpointWholeAndTheThreadResumable) {
  const SqliteFaultCase& param = GetParam();
  const FaultCycle cycle = param.cycle();

  Reference reference;
  std::uint64_t operations = 0;
  {
    const std::string path = dir_.file("reference.db");
    auto graph = cycle.build(open(path));
    sql::FileFaults count_only({.path_prefix = path, .operation = param.operation});
    DriveResult result = drive_to_end(*graph, cycle, fault_thread());
    ASSERT_TRUE(result.errors.empty()) << result.errors.front().what();
    reference = {comparable_values(result.values), comparable_history(*graph, fault_thread())};
    operations = count_only.counts().of(param.operation);
  }
  ASSERT_GT(operations, 0u) << "the cycle made no such call to fail";

  for (std::uint64_t n = 1; n <= operations; ++n) {
    SCOPED_TRACE("failing call " + std::to_string(n) + " of " + std::to_string(operations));
    const std::string path = dir_.file(std::to_string(n) + ".db");
    auto graph = cycle.build(open(path));
    DriveResult result;
    {
      sql::FileFaults faults(
          {.path_prefix = path, .operation = param.operation, .fail_at = n, .fault = param.fault});
      result = drive_to_end(*graph, cycle, fault_thread(), [&](const Error& error) {
        auto other = cycle.build(open(path));
        expect_whole_after_failure(*graph, other.get(), reference, error);
      });
      EXPECT_TRUE(faults.fired());
    }
    expect_like_reference(result, *graph, reference);
    EXPECT_EQ(integrity_of(path), "ok");
    graph.reset();
    EXPECT_EQ(comparable_history(*cycle.build(open(path)), fault_thread()), reference.history)
        << "as read by a new connection";
    if (::testing::Test::HasFailure()) break;  // one failing point tells enough
  }
}

std::vector<SqliteFaultCase> sqlite_cases() {
  std::vector<SqliteFaultCase> cases;
  for (FaultCycle (*cycle)() : {agent_cycle, graph_cycle}) {
    for (sql::FileFault fault : {sql::FileFault::kIoError, sql::FileFault::kDiskFull}) {
      // synchronous=NORMAL commits without a sync (a WAL checkpoint syncs, later); FULL syncs
      // each commit.
      cases.push_back({cycle, SqliteSynchronous::kNormal, sql::FileOperation::kWrite, fault});
      cases.push_back({cycle, SqliteSynchronous::kFull, sql::FileOperation::kSync, fault});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cycles, SqliteStepFaultTest, ::testing::ValuesIn(sqlite_cases()),
                         case_name);

// ------------------------------------------------------------------------------- memory

class MemoryStepFaultTest : public ::testing::TestWithParam<FaultCycle (*)()> {};

TEST_P(MemoryStepFaultTest, EachFailedSaveLeavesTheLastCheckpointWholeAndTheThreadResumable) {
  const FaultCycle cycle = GetParam()();
  Reference reference;
  std::uint64_t saves = 0;
  {
    auto counting = std::make_shared<FailingSaver>(make_memory_saver(), 0);
    auto graph = cycle.build(counting);
    DriveResult result = drive_to_end(*graph, cycle, fault_thread());
    ASSERT_TRUE(result.errors.empty()) << result.errors.front().what();
    reference = {comparable_values(result.values), comparable_history(*graph, fault_thread())};
    saves = counting->calls();
  }
  ASSERT_GT(saves, 0u);

  for (std::uint64_t n = 1; n <= saves; ++n) {
    SCOPED_TRACE("failing save " + std::to_string(n) + " of " + std::to_string(saves));
    auto failing = std::make_shared<FailingSaver>(make_memory_saver(), n);
    auto graph = cycle.build(failing);
    DriveResult result = drive_to_end(*graph, cycle, fault_thread(), [&](const Error& error) {
      expect_whole_after_failure(*graph, nullptr, reference, error);
    });
    EXPECT_TRUE(failing->fired());
    expect_like_reference(result, *graph, reference);
    if (::testing::Test::HasFailure()) break;
  }
}

std::string cycle_name(const ::testing::TestParamInfo<FaultCycle (*)()>& cycle) {
  return cycle.param().name;
}

INSTANTIATE_TEST_SUITE_P(Cycles, MemoryStepFaultTest, ::testing::Values(agent_cycle, graph_cycle),
                         cycle_name);

}  // namespace
}  // namespace tollgate::testing

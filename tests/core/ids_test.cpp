// The core identifiers: shapes, version bits, uniqueness and the order of time-ordered ids
// under a clock that stands still or goes back.
#include "core/ids.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace tollgate::core {
namespace {

using namespace std::chrono_literals;

const std::regex kUuid4("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
const std::regex kUuid7("^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");

std::uint64_t hex_number(const std::string& digits) {
  return std::stoull(digits, nullptr, 16);
}

// The milliseconds since the Unix epoch a uuid7 leads with.
std::int64_t uuid7_millis(const std::string& id) {
  return static_cast<std::int64_t>(hex_number(id.substr(0, 8) + id.substr(9, 4)));
}

// The 100 ns intervals since 1582-10-15 a checkpoint id leads with.
std::int64_t checkpoint_id_time(const std::string& id) {
  return static_cast<std::int64_t>((hex_number(id.substr(0, 8)) << 28) |
                                   (hex_number(id.substr(9, 4)) << 12) |
                                   hex_number(id.substr(15, 3)));
}

constexpr std::int64_t kGregorianOffset = 0x01B21DD213814000;  // in 100 ns intervals

// The id `make_id` returns in a child forked now (the 36 characters of a UUID).
std::string id_from_a_forked_child(std::string (*make_id)()) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t child = fork();
  if (child == 0) {
    const std::string id = make_id();
    const ssize_t written = write(pipe_fds[1], id.data(), id.size());
    _exit(written == static_cast<ssize_t>(id.size()) ? 0 : 1);
  }
  close(pipe_fds[1]);
  std::string from_child(36, '\0');
  const ssize_t got = child > 0 ? read(pipe_fds[0], from_child.data(), from_child.size()) : -1;
  close(pipe_fds[0]);
  int status = 0;
  if (child > 0) waitpid(child, &status, 0);
  return got == 36 ? from_child : "no id from the child";
}

// The ids 4 threads make at once, 2000 each (make_id(i) for the i-th): a list per thread.
std::vector<std::vector<std::string>> ids_from_four_threads(std::string (*make_id)(int)) {
  std::vector<std::vector<std::string>> ids(4);
  std::vector<std::thread> threads;
  for (auto& mine : ids) {
    threads.emplace_back([&mine, make_id] {
      for (int i = 0; i < 2000; ++i) mine.push_back(make_id(i));
    });
  }
  for (auto& t : threads) t.join();
  return ids;
}

std::size_t distinct(const std::vector<std::vector<std::string>>& lists) {
  std::set<std::string> seen;
  for (const auto& list : lists) seen.insert(list.begin(), list.end());
  return seen.size();
}

bool each_increases(const std::vector<std::vector<std::string>>& lists) {
  for (const auto& list : lists) {
    if (!std::is_sorted(list.begin(), list.end(), std::less_equal<>())) return false;
  }
  return true;
}

// --------------------------------------------------------------------------------- uuid4

TEST(Uuid4, HasVersionAndVariantBits) {
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(std::regex_match(uuid4(), kUuid4));
}

TEST(Uuid4, IsUniqueAcrossCalls) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(uuid4());
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(Uuid4, IsUniqueAcrossThreads) {
  EXPECT_EQ(distinct(ids_from_four_threads([](int) { return uuid4(); })), 8000u);
}

TEST(Uuid4, AForkedChildDoesNotRepeatItsParentsNextId) {
  (void)uuid4();  // the parent's pool now holds ids it has not handed out yet
  const std::string from_child = id_from_a_forked_child([] { return uuid4(); });
  EXPECT_TRUE(std::regex_match(from_child, kUuid4)) << from_child;
  EXPECT_NE(uuid4(), from_child);
}

// --------------------------------------------------------------------------------- uuid5

TEST(Uuid5, MatchesTheStandardDerivation) {
  // Python: uuid.uuid5(uuid.NAMESPACE_DNS, "python.org")
  EXPECT_EQ(uuid5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "python.org"),
            "886313e1-3b8a-5372-9b90-0c9aee199e5d");
}

TEST(Uuid5, ReadsAnUppercaseNamespaceAsTheSameNamespace) {
  EXPECT_EQ(uuid5("6BA7B810-9DAD-11D1-80B4-00C04FD430C8", "python.org"),
            uuid5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "python.org"));
}

// --------------------------------------------------------------------------------- uuid7

TEST(Uuid7, HasVersionAndVariantBits) {
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(std::regex_match(uuid7(), kUuid7));
}

TEST(Uuid7, LeadsWithTheClocksMilliseconds) {
  // An hour after the latest id made so far, whatever the tests before this one did.
  const std::int64_t millis = uuid7_millis(uuid7()) + 3'600'000;
  const ManualClock clock{std::chrono::system_clock::time_point{std::chrono::milliseconds{millis}}};
  EXPECT_EQ(uuid7_millis(uuid7(clock)), millis);
}

TEST(Uuid7, IncreasesWhileTheClockStandsStill) {
  const ManualClock clock(std::chrono::system_clock::now());
  std::string previous = uuid7(clock);
  for (int i = 0; i < 10000; ++i) {  // more than one millisecond's 4096 counter values
    std::string next = uuid7(clock);
    ASSERT_LT(previous, next);
    ASSERT_TRUE(std::regex_match(next, kUuid7)) << next;
    previous = next;
  }
}

TEST(Uuid7, IncreasesWhenTheClockGoesBack) {
  ManualClock clock(std::chrono::system_clock::now());
  const std::string before = uuid7(clock);
  clock.set(clock.now() - 24h);
  EXPECT_LT(before, uuid7(clock));
}

TEST(Uuid7, IncreasesAcrossThreads) {
  const auto ids = ids_from_four_threads([](int) { return uuid7(); });
  EXPECT_TRUE(each_increases(ids));
  EXPECT_EQ(distinct(ids), 8000u);
}

// ------------------------------------------------------------------------- checkpoint ids

TEST(CheckpointId, IsAVersion6UuidCarryingTheStep) {
  EXPECT_TRUE(std::regex_match(
      checkpoint_id(5), std::regex("[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-8005-[0-9a-f]{12}")));
  EXPECT_EQ(checkpoint_id(-1).substr(19, 4), "bfff");
  EXPECT_EQ(checkpoint_id(0x4001).substr(19, 4), "8001");  // the step's low 14 bits
}

TEST(CheckpointId, LeadsWithTheClocksTimeInGregorianIntervals) {
  // An hour after the latest id made so far, whatever the tests before this one did.
  const std::int64_t time = checkpoint_id_time(checkpoint_id(0)) + 36'000'000'000;
  const ManualClock clock(std::chrono::system_clock::time_point(
      std::chrono::nanoseconds((time - kGregorianOffset) * 100 + 42)));  // 42 ns: rounded down
  EXPECT_EQ(checkpoint_id_time(checkpoint_id(0, clock)), time);
}

TEST(CheckpointId, IncreasesWhileTheClockStandsStill) {
  const ManualClock clock(std::chrono::system_clock::now());
  std::string previous = checkpoint_id(0, clock);
  for (int i = 0; i < 10000; ++i) {
    std::string next = checkpoint_id(i % 3, clock);
    ASSERT_LT(previous, next);
    previous = next;
  }
}

TEST(CheckpointId, IncreasesWhenTheClockGoesBack) {
  ManualClock clock(std::chrono::system_clock::now());
  const std::string before = checkpoint_id(7, clock);
  clock.set(clock.now() - 24h);
  EXPECT_LT(before, checkpoint_id(0, clock));
}

TEST(CheckpointId, AForkedChildDrawsANodeOfItsOwn) {
  (void)checkpoint_id(0);  // the parent's generator is seeded and about to give its next node
  const std::string from_child = id_from_a_forked_child([] { return checkpoint_id(0); });
  ASSERT_TRUE(is_uuid(from_child)) << from_child;
  EXPECT_NE(checkpoint_id(0).substr(24), from_child.substr(24));
}

TEST(CheckpointId, IncreasesAcrossThreads) {
  const auto ids = ids_from_four_threads([](int step) { return checkpoint_id(step); });
  EXPECT_TRUE(each_increases(ids));
  EXPECT_EQ(distinct(ids), 8000u);
}

// ------------------------------------------------------------------------------- helpers

TEST(IsUuid, AcceptsAnyVersionInEitherCase) {
  EXPECT_TRUE(is_uuid("00000000-0000-4000-8000-000000000000"));
  EXPECT_TRUE(is_uuid("6BA7B810-9DAD-11D1-80B4-00C04FD430C8"));
  EXPECT_TRUE(is_uuid(checkpoint_id(0)));
}

TEST(IsUuid, RefusesOtherText) {
  EXPECT_FALSE(is_uuid("not-a-uuid"));
  EXPECT_FALSE(is_uuid("00000000-0000-4000-8000-00000000000g"));
  EXPECT_FALSE(is_uuid("00000000000040008000000000000000"));
  EXPECT_FALSE(is_uuid("00000000-0000-4000-8000-0000000000000"));
}

TEST(FormatUuid, GroupsTheBytesEightFourFourFourTwelve) {
  std::array<std::uint8_t, 16> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 17);
  EXPECT_EQ(format_uuid(bytes), "00112233-4455-6677-8899-aabbccddeeff");
}

}  // namespace
}  // namespace tollgate::core

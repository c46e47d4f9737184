#include <gtest/gtest.h>

#include <chrono>
#include <regex>

#include "tollgate/checkpoint.h"

namespace tollgate {
namespace {

using namespace std::chrono_literals;

TEST(CheckpointIdTest, IsAVersion6UuidCarryingTheStep) {
  const std::string id = new_checkpoint_id(1);
  EXPECT_TRUE(
      std::regex_match(id, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-8001-[0-9a-f]{12}")))
      << id;
  EXPECT_EQ(new_checkpoint_id(-1).substr(19, 4), "bfff");
}

TEST(CheckpointIdTest, LaterIdsCompareGreater) {
  std::string previous = new_checkpoint_id(0);
  for (int i = 0; i < 10000; ++i) {
    std::string next = new_checkpoint_id(i % 3);
    ASSERT_LT(previous, next);
    previous = next;
  }
}

TEST(CheckpointIdTest, SpecialChannelsHaveFixedNegativeIndexes) {
  EXPECT_EQ(special_write_index("__error__"), -1);
  EXPECT_EQ(special_write_index("__interrupt__"), -3);
  EXPECT_EQ(special_write_index("__resume__"), -4);
  EXPECT_EQ(special_write_index("messages"), std::nullopt);
}

TEST(CheckpointIdTest, AWriteToAStateChannelOrOfNothingMarksItsTaskFinished) {
  EXPECT_TRUE(marks_task_finished("messages"));
  EXPECT_TRUE(marks_task_finished(kNoWritesChannel));
  for (std::string_view special : {kErrorChannel, kScheduledChannel, kInterruptChannel,
                                   kResumeChannel, std::string_view("__intents__")}) {
    EXPECT_FALSE(marks_task_finished(special)) << special;
  }
}

TEST(CheckpointIdTest, TimestampIsIsoUtc) {
  EXPECT_TRUE(std::regex_match(utc_timestamp(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00)")));
}

TEST(CheckpointIdTest, TimestampIsTheInjectedClocksTime) {
  const ManualClock clock(std::chrono::system_clock::time_point(1796008879123456us));
  EXPECT_EQ(utc_timestamp(clock), "2026-11-30T03:21:19.123456+00:00");
}

TEST(CheckpointIdTest, TimestampBefore1970CountsTheFractionForward) {
  const ManualClock clock(std::chrono::system_clock::time_point(-1500ms));
  EXPECT_EQ(utc_timestamp(clock), "1969-12-31T23:59:58.500000+00:00");
}

TEST(CheckpointIdTest, IdsFromAClockThatStandsStillStillIncrease) {
  const ManualClock clock(std::chrono::system_clock::now());
  std::string previous = new_checkpoint_id(0, clock);
  for (int i = 1; i < 1000; ++i) {
    std::string next = new_checkpoint_id(i, clock);
    ASSERT_LT(previous, next);
    previous = next;
  }
}

}  // namespace
}  // namespace tollgate

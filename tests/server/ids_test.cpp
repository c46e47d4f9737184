#include "server/ids.h"

#include <gtest/gtest.h>

#include <regex>

namespace tollgate::server {
namespace {

TEST(IdsTest, SystemAssistantIdMatchesTheReferenceServer) {
  EXPECT_EQ(system_assistant_id("hitl"), "d2a02ed8-fb92-5e43-81ea-cb78d82caa2f");
}

TEST(IdsTest, Uuid7IsVersion7AndIncreasing) {
  std::string previous = new_uuid7();
  EXPECT_TRUE(std::regex_match(
      previous, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
      << previous;
  for (int i = 0; i < 5000; ++i) {
    std::string next = new_uuid7();
    ASSERT_LT(previous, next);
    previous = next;
  }
}

TEST(IdsTest, IsUuidAcceptsAnyVersionAndRejectsOtherText) {
  EXPECT_TRUE(is_uuid("00000000-0000-4000-8000-000000000000"));
  EXPECT_TRUE(is_uuid(new_uuid7()));
  EXPECT_FALSE(is_uuid("not-a-uuid"));
  EXPECT_FALSE(is_uuid("00000000-0000-4000-8000-00000000000g"));
}

TEST(IdsTest, IsoTimestampHasMillisecondsAndZ) {
  EXPECT_EQ(iso_timestamp(1796007219194), "2026-11-30T02:53:39.194Z");
}

}  // namespace
}  // namespace tollgate::server

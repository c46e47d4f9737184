// The one parser of config durations ("90s", "15m", "2h", "1d").
#include "core/duration.h"

#include <gtest/gtest.h>

namespace tollgate::core {
namespace {

using std::chrono::milliseconds;

TEST(ParseDuration, ReadsEachUnit) {
  EXPECT_EQ(parse_duration("90s"), milliseconds(90'000));
  EXPECT_EQ(parse_duration("15m"), milliseconds(900'000));
  EXPECT_EQ(parse_duration("2h"), milliseconds(7'200'000));
  EXPECT_EQ(parse_duration("1d"), milliseconds(86'400'000));
  EXPECT_EQ(parse_duration("999999999d"), milliseconds(999'999'999LL * 86'400'000));
}

TEST(ParseDuration, RefusesWhatIsNotAPositiveWholeNumberAndOneUnit) {
  for (const char* text : {"", "s", "0s", "05m", "-1s", "1.5h", "1w", "10", "1 d", "1dd",
                           "1000000000s", "m5"}) {
    EXPECT_FALSE(parse_duration(text)) << text;
  }
}

}  // namespace
}  // namespace tollgate::core

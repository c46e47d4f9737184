// Test helper: two lists of stream events compared field by field, each difference reported.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "server/event_log.h"

namespace tollgate::testing {

inline void expect_same_events(const std::vector<server::LogEntry>& got,
                               const std::vector<server::LogEntry>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].seq, want[i].seq) << "event " << i;
    EXPECT_EQ(got[i].event, want[i].event) << "event " << i;
    EXPECT_EQ(got[i].data, want[i].data) << "event " << i;
    EXPECT_EQ(got[i].id, want[i].id) << "event " << i;
    EXPECT_EQ(got[i].channel, want[i].channel) << "event " << i;
    EXPECT_EQ(got[i].ns, want[i].ns) << "event " << i;
  }
}

}  // namespace tollgate::testing

// The statuses' text is the wire's and the columns': each enum value reads back as itself, and
// text no status has is refused with the field and the value named.
#include "server/record_status.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tollgate/error.h"

namespace tollgate::server {
namespace {

// Each status is written as its text (to_string and JSON) and `parse` reads that text back.
template <typename Status, typename Parse>
void expect_text_round_trips(const std::vector<std::pair<Status, std::string>>& names,
                             Parse parse) {
  for (const auto& [status, name] : names) {
    EXPECT_EQ(to_string(status), name);
    EXPECT_EQ(parse(name, "a column"), status);
    EXPECT_EQ(Json(status), Json(name));
  }
}

TEST(RecordStatusTest, RunStatusesKeepTheirWireText) {
  expect_text_round_trips<RunStatus>({{RunStatus::kPending, "pending"},
                                      {RunStatus::kRunning, "running"},
                                      {RunStatus::kSuccess, "success"},
                                      {RunStatus::kError, "error"},
                                      {RunStatus::kInterrupted, "interrupted"},
                                      {RunStatus::kTimeout, "timeout"}},
                                     parse_run_status);
}

TEST(RecordStatusTest, UnknownRunStatusNamesTheFieldAndTheValue) {
  try {
    parse_run_status("finished", "server_runs.status");
    FAIL() << "an unknown status was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInternal);
    EXPECT_NE(std::string(e.what()).find("server_runs.status"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"finished\""), std::string::npos) << e.what();
  }
  EXPECT_EQ(run_status_named("finished"), std::nullopt);
}

TEST(RecordStatusTest, ThreadStatusesKeepTheirWireText) {
  expect_text_round_trips<ThreadStatus>({{ThreadStatus::kIdle, "idle"},
                                         {ThreadStatus::kBusy, "busy"},
                                         {ThreadStatus::kInterrupted, "interrupted"},
                                         {ThreadStatus::kError, "error"}},
                                        parse_thread_status);
  EXPECT_EQ(thread_status_named("paused"), std::nullopt);
  EXPECT_THROW(parse_thread_status("paused", "server_threads.status"), Error);
}

TEST(RecordStatusTest, ReviewStatusesKeepTheirColumnText) {
  expect_text_round_trips<ReviewStatus>({{ReviewStatus::kPending, "pending"},
                                         {ReviewStatus::kDecided, "decided"},
                                         {ReviewStatus::kSuperseded, "superseded"},
                                         {ReviewStatus::kExpired, "expired"},
                                         {ReviewStatus::kRefused, "refused"}},
                                        parse_review_status);
  EXPECT_THROW(parse_review_status("approved", "server_reviews.status"), Error);
}

TEST(RecordStatusTest, DeliveryStatusesKeepTheirColumnText) {
  expect_text_round_trips<DeliveryStatus>({{DeliveryStatus::kPending, "pending"},
                                           {DeliveryStatus::kDelivered, "delivered"},
                                           {DeliveryStatus::kFailed, "failed"}},
                                          parse_delivery_status);
  EXPECT_EQ(delivery_status_named("sent"), std::nullopt);
  EXPECT_THROW(parse_delivery_status("sent", "server_webhook_deliveries.status"), Error);
}

}  // namespace
}  // namespace tollgate::server

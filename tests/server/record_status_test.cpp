// The statuses' text is the wire's and the columns': each enum value reads back as itself, and
// text no status has is refused with the field and the value named.
#include "server/record_status.h"

#include <gtest/gtest.h>

#include "tollgate/error.h"

namespace tollgate::server {
namespace {

TEST(RecordStatusTest, RunStatusesKeepTheirWireText) {
  const std::vector<std::pair<RunStatus, std::string>> names{
      {RunStatus::kPending, "pending"},         {RunStatus::kRunning, "running"},
      {RunStatus::kSuccess, "success"},         {RunStatus::kError, "error"},
      {RunStatus::kInterrupted, "interrupted"}, {RunStatus::kTimeout, "timeout"}};
  for (const auto& [status, name] : names) {
    EXPECT_EQ(to_string(status), name);
    EXPECT_EQ(parse_run_status(name, "server_runs.status"), status);
    EXPECT_EQ(Json(status), Json(name));
  }
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
  const std::vector<std::pair<ThreadStatus, std::string>> names{
      {ThreadStatus::kIdle, "idle"},
      {ThreadStatus::kBusy, "busy"},
      {ThreadStatus::kInterrupted, "interrupted"},
      {ThreadStatus::kError, "error"}};
  for (const auto& [status, name] : names) {
    EXPECT_EQ(to_string(status), name);
    EXPECT_EQ(parse_thread_status(name, "server_threads.status"), status);
    EXPECT_EQ(Json(status), Json(name));
  }
  EXPECT_EQ(thread_status_named("paused"), std::nullopt);
  EXPECT_THROW(parse_thread_status("paused", "server_threads.status"), Error);
}

TEST(RecordStatusTest, ReviewStatusesKeepTheirColumnText) {
  const std::vector<std::pair<ReviewStatus, std::string>> names{
      {ReviewStatus::kPending, "pending"},
      {ReviewStatus::kDecided, "decided"},
      {ReviewStatus::kSuperseded, "superseded"},
      {ReviewStatus::kExpired, "expired"},
      {ReviewStatus::kRefused, "refused"}};
  for (const auto& [status, name] : names) {
    EXPECT_EQ(to_string(status), name);
    EXPECT_EQ(parse_review_status(name, "server_reviews.status"), status);
    EXPECT_EQ(Json(status), Json(name));
  }
  EXPECT_THROW(parse_review_status("approved", "server_reviews.status"), Error);
}

TEST(RecordStatusTest, DeliveryStatusesKeepTheirColumnText) {
  const std::vector<std::pair<DeliveryStatus, std::string>> names{
      {DeliveryStatus::kPending, "pending"},
      {DeliveryStatus::kDelivered, "delivered"},
      {DeliveryStatus::kFailed, "failed"}};
  for (const auto& [status, name] : names) {
    EXPECT_EQ(to_string(status), name);
    EXPECT_EQ(parse_delivery_status(name, "server_webhook_deliveries.status"), status);
    EXPECT_EQ(Json(status), Json(name));
  }
  EXPECT_EQ(delivery_status_named("sent"), std::nullopt);
  EXPECT_THROW(parse_delivery_status("sent", "server_webhook_deliveries.status"), Error);
}

}  // namespace
}  // namespace tollgate::server

#include "tollgate/error.h"

#include <gtest/gtest.h>

namespace tollgate {
namespace {

TEST(ErrorTest, CodesMapToHttpStatuses) {
  EXPECT_EQ(http_status(ErrorCode::kInvalidArgument), 400);
  EXPECT_EQ(http_status(ErrorCode::kNotFound), 404);
  EXPECT_EQ(http_status(ErrorCode::kConflict), 409);
  EXPECT_EQ(http_status(ErrorCode::kUnprocessable), 422);
  EXPECT_EQ(http_status(ErrorCode::kUnavailable), 503);
}

TEST(ErrorTest, NamedConstructorsKeepCodeAndMessage) {
  Error e = Error::Conflict("thread t1 has no pending interrupt");
  EXPECT_EQ(e.code(), ErrorCode::kConflict);
  EXPECT_STREQ(e.what(), "thread t1 has no pending interrupt");
  EXPECT_STREQ(error_code_name(e.code()), "conflict");
}

}  // namespace
}  // namespace tollgate

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

TEST(ErrorTest, IdentityCodesMapTo401And403) {
  EXPECT_EQ(http_status(ErrorCode::kUnauthenticated), 401);
  EXPECT_EQ(http_status(ErrorCode::kPermissionDenied), 403);
  EXPECT_STREQ(protocol_error_name(ErrorCode::kPermissionDenied), "permission_denied");
}

TEST(ErrorTest, EveryCodeHasAProtocolNameAndARunErrorName) {
  EXPECT_STREQ(protocol_error_name(ErrorCode::kInvalidArgument), "invalid_argument");
  EXPECT_STREQ(protocol_error_name(ErrorCode::kInternal), "unknown_error");
  EXPECT_STREQ(run_error_name(ErrorCode::kRecursionLimit), "GraphRecursionError");
  EXPECT_STREQ(run_error_name(ErrorCode::kConflict), "ConflictError");
}

TEST(ErrorTest, AReasonRefinesTheCodeAndKeepsIt) {
  Error e = Error::Conflict("No pending interrupt with id x").with_reason("no_such_interrupt");
  EXPECT_EQ(e.code(), ErrorCode::kConflict);
  EXPECT_EQ(e.reason(), "no_such_interrupt");
  EXPECT_TRUE(Error::Conflict("busy").reason().empty());
}

}  // namespace
}  // namespace tollgate

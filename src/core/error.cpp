#include "tollgate/error.h"

#include <array>
#include <cstddef>

namespace tollgate {
namespace {

struct CodeInfo {
  ErrorCode code;
  int http_status;
  const char* name;
  const char* protocol_name;  // v2 thread protocol
  const char* run_error;      // a failed run's `error` event
};

// The one table. Rows are in ErrorCode order (checked below).
constexpr std::array<CodeInfo, 10> kCodes{{
    {ErrorCode::kInvalidArgument, 400, "invalid_argument", "invalid_argument", "InvalidArgumentError"},
    {ErrorCode::kUnauthenticated, 401, "unauthenticated", "permission_denied", "UnauthenticatedError"},
    {ErrorCode::kPermissionDenied, 403, "permission_denied", "permission_denied", "PermissionDeniedError"},
    {ErrorCode::kNotFound, 404, "not_found", "invalid_argument", "NotFoundError"},
    {ErrorCode::kConflict, 409, "conflict", "invalid_argument", "ConflictError"},
    {ErrorCode::kUnprocessable, 422, "unprocessable", "invalid_argument", "UnprocessableError"},
    {ErrorCode::kRecursionLimit, 500, "recursion_limit", "unknown_error", "GraphRecursionError"},
    {ErrorCode::kCancelled, 499, "cancelled", "unknown_error", "CancelledError"},
    {ErrorCode::kUnavailable, 503, "unavailable", "unknown_error", "UnavailableError"},
    {ErrorCode::kInternal, 500, "internal", "unknown_error", "InternalError"},
}};

constexpr bool rows_in_code_order() {
  for (std::size_t i = 0; i < kCodes.size(); ++i) {
    if (static_cast<std::size_t>(kCodes[i].code) != i) return false;
  }
  return true;
}
static_assert(rows_in_code_order(), "kCodes rows must follow ErrorCode's order");

const CodeInfo& info(ErrorCode code) {
  const auto index = static_cast<std::size_t>(code);
  return index < kCodes.size() ? kCodes[index] : kCodes.back();
}

}  // namespace

int http_status(ErrorCode code) {
  return info(code).http_status;
}

const char* error_code_name(ErrorCode code) {
  return info(code).name;
}

const char* protocol_error_name(ErrorCode code) {
  return info(code).protocol_name;
}

const char* run_error_name(ErrorCode code) {
  return info(code).run_error;
}

}  // namespace tollgate

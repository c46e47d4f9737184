#include "tollgate/error.h"

namespace tollgate {

int http_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return 400;
    case ErrorCode::kNotFound: return 404;
    case ErrorCode::kConflict: return 409;
    case ErrorCode::kUnprocessable: return 422;
    case ErrorCode::kRecursionLimit: return 500;
    case ErrorCode::kCancelled: return 499;
    case ErrorCode::kUnavailable: return 503;
    case ErrorCode::kInternal: return 500;
  }
  return 500;
}

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kNotFound: return "not_found";
    case ErrorCode::kConflict: return "conflict";
    case ErrorCode::kUnprocessable: return "unprocessable";
    case ErrorCode::kRecursionLimit: return "recursion_limit";
    case ErrorCode::kCancelled: return "cancelled";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

}  // namespace tollgate

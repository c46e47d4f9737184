// Errors. Operations that fail because of their input or the state of the world throw
// tollgate::Error; the code says what kind of failure it is and maps onto an HTTP status,
// so the server can answer without guessing. Programmer errors assert instead.
#pragma once

#include <stdexcept>
#include <string>

namespace tollgate {

enum class ErrorCode {
  kInvalidArgument,     // malformed input: a bad field, a bad graph definition (400)
  kNotFound,            // unknown thread, checkpoint, assistant, run (404)
  kConflict,            // the target's state forbids it: nothing to resume, busy thread (409)
  kUnprocessable,       // well-formed but refused: a resume the interrupt's owner rejected (422)
  kRecursionLimit,      // a run exceeded its recursion limit
  kCancelled,           // the run was cancelled
  kUnavailable,         // a dependency (model provider, database) failed; may succeed later (503)
  kInternal,            // a failure that is nobody's input's fault (500)
};

// The HTTP status an ErrorCode maps to.
int http_status(ErrorCode code);
const char* error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}

  ErrorCode code() const { return code_; }

  static Error InvalidArgument(const std::string& m) { return {ErrorCode::kInvalidArgument, m}; }
  static Error NotFound(const std::string& m) { return {ErrorCode::kNotFound, m}; }
  static Error Conflict(const std::string& m) { return {ErrorCode::kConflict, m}; }
  static Error Unprocessable(const std::string& m) { return {ErrorCode::kUnprocessable, m}; }
  static Error Unavailable(const std::string& m) { return {ErrorCode::kUnavailable, m}; }
  static Error Internal(const std::string& m) { return {ErrorCode::kInternal, m}; }

 private:
  ErrorCode code_;
};

}  // namespace tollgate

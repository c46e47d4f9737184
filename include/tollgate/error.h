// Errors. Operations that fail because of their input or the state of the world throw
// tollgate::Error; the code says what kind of failure it is. One table (error.cpp) maps each
// code onto its HTTP status, its name, the v2 thread protocol's error name and the exception
// name a failed run reports, so every layer answers the same way without guessing.
// Programmer errors assert instead.
#pragma once

#include <stdexcept>
#include <utility>
#include <string>

namespace tollgate {

enum class ErrorCode {
  kInvalidArgument,   // malformed input: a bad field, a bad graph definition (400)
  kUnauthenticated,   // no valid credential (401)
  kPermissionDenied,  // a valid identity that may not do this (403)
  kNotFound,          // unknown thread, checkpoint, assistant, run (404)
  kConflict,          // the target's state forbids it: nothing to resume, busy thread (409)
  kUnprocessable,     // well-formed but refused: a resume the interrupt's owner rejected (422)
  kRecursionLimit,    // a run exceeded its recursion limit (500)
  kCancelled,         // the run was cancelled (499)
  kUnavailable,       // a dependency (model provider, database) failed; may succeed later (503)
  kInternal,          // a failure that is nobody's input's fault (500)
};

// The HTTP status an ErrorCode maps to.
int http_status(ErrorCode code);
// A stable lower-case name ("invalid_argument", "not_found", ...).
const char* error_code_name(ErrorCode code);
// The v2 thread protocol's error name (AGENT_SERVER_API.md §8.2) for the code.
const char* protocol_error_name(ErrorCode code);
// The exception name a failed run reports in its `error` event ("GraphRecursionError", ...).
const char* run_error_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}

  ErrorCode code() const { return code_; }
  // A finer machine-readable reason than the code, when a protocol names one (e.g. the v2
  // protocol's "no_such_interrupt"); empty when the code says it all.
  const std::string& reason() const { return reason_; }
  Error&& with_reason(std::string reason) && {
    reason_ = std::move(reason);
    return std::move(*this);
  }

  static Error InvalidArgument(const std::string& m) { return {ErrorCode::kInvalidArgument, m}; }
  static Error Unauthenticated(const std::string& m) { return {ErrorCode::kUnauthenticated, m}; }
  static Error PermissionDenied(const std::string& m) { return {ErrorCode::kPermissionDenied, m}; }
  static Error NotFound(const std::string& m) { return {ErrorCode::kNotFound, m}; }
  static Error Conflict(const std::string& m) { return {ErrorCode::kConflict, m}; }
  static Error Unprocessable(const std::string& m) { return {ErrorCode::kUnprocessable, m}; }
  static Error Unavailable(const std::string& m) { return {ErrorCode::kUnavailable, m}; }
  static Error Internal(const std::string& m) { return {ErrorCode::kInternal, m}; }

 private:
  ErrorCode code_;
  std::string reason_;
};

}  // namespace tollgate

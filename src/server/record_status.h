// The states of the server's records as enums. Code inside the server compares and switches on
// these; their text (to_string) appears only where a record leaves the process: the JSON of the
// API and the status columns of the server's tables, byte for byte what those always held.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "tollgate/json.h"

namespace tollgate::server {

// A run's status (RunRecord::status): pending until a worker takes it up, running while it
// executes, then how it ended. The server never sets timeout; the API lists it.
enum class RunStatus { kPending, kRunning, kSuccess, kError, kInterrupted, kTimeout };

// "pending", "running", "success", "error", "interrupted", "timeout".
const std::string& to_string(RunStatus status);
// The status named `text`; nullopt when none is (a request's filter validates with it).
std::optional<RunStatus> run_status_named(std::string_view text);
// The status named `text`, read from `field` (a column, for the message); unknown text (a
// database written by something else) throws Error(kInternal) naming the field and the value.
RunStatus parse_run_status(std::string_view text, std::string_view field);

// A thread's status (ThreadRecord::status). Idle, interrupted (waiting at an interrupt or a
// breakpoint) and error are what its last run left and what the store keeps; busy is derived on
// every read while one of its runs is pending or running, and never stored (older versions did).
enum class ThreadStatus { kIdle, kBusy, kInterrupted, kError };

// "idle", "busy", "interrupted", "error".
const std::string& to_string(ThreadStatus status);
// The status named `text`; nullopt when none is.
std::optional<ThreadStatus> thread_status_named(std::string_view text);
// As parse_run_status, for a thread's status.
ThreadStatus parse_thread_status(std::string_view text, std::string_view field);

// A review record's status (review_store.h says what each means). Refused is reserved.
enum class ReviewStatus { kPending, kDecided, kSuperseded, kExpired, kRefused };

// "pending", "decided", "superseded", "expired", "refused".
const std::string& to_string(ReviewStatus status);
// As parse_run_status, for a review record's status.
ReviewStatus parse_review_status(std::string_view text, std::string_view field);

// A webhook delivery's status (webhook_queue.h says what each means).
enum class DeliveryStatus { kPending, kDelivered, kFailed };

// "pending", "delivered", "failed".
const std::string& to_string(DeliveryStatus status);
// The status named `text`; nullopt when none is (the delivery log's filter validates with it).
std::optional<DeliveryStatus> delivery_status_named(std::string_view text);
// As parse_run_status, for a delivery's status.
DeliveryStatus parse_delivery_status(std::string_view text, std::string_view field);

// Statuses as JSON strings and printed as text (tests' messages): never as their numbers.
inline void to_json(Json& json, RunStatus status) {
  json = to_string(status);
}
inline void to_json(Json& json, ThreadStatus status) {
  json = to_string(status);
}
inline void to_json(Json& json, ReviewStatus status) {
  json = to_string(status);
}
inline void to_json(Json& json, DeliveryStatus status) {
  json = to_string(status);
}
inline std::ostream& operator<<(std::ostream& out, RunStatus status) {
  return out << to_string(status);
}
inline std::ostream& operator<<(std::ostream& out, ThreadStatus status) {
  return out << to_string(status);
}
inline std::ostream& operator<<(std::ostream& out, ReviewStatus status) {
  return out << to_string(status);
}
inline std::ostream& operator<<(std::ostream& out, DeliveryStatus status) {
  return out << to_string(status);
}

}  // namespace tollgate::server

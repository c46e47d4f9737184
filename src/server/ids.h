// Identifiers and timestamps of server records (threads, runs, assistants), under the names
// the server calls them by; the ids themselves are core's (core/ids.h), the time a Clock's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tollgate/clock.h"

namespace tollgate::server {

// A time-ordered random UUID (version 7); later ids compare greater as strings within a
// process. Thread-safe.
std::string new_uuid7(const Clock& clock = system_clock());
// A name-based UUID (version 5, SHA-1) of `name` in `namespace_uuid`.
std::string uuid5(std::string_view namespace_uuid, std::string_view name);
// The system assistant id of a graph: uuid5(graph_id) in the reference server's namespace.
std::string system_assistant_id(std::string_view graph_id);
// True for a canonical 8-4-4-4-12 hex UUID of any version.
bool is_uuid(std::string_view text);

// Milliseconds since the Unix epoch (by the system clock unless given another).
using tollgate::now_millis;
// "2026-11-30T02:43:39.194Z" for the given milliseconds since the epoch.
std::string iso_timestamp(std::int64_t millis);
inline std::string iso_now(const Clock& clock = system_clock()) {
  return iso_timestamp(now_millis(clock));
}

}  // namespace tollgate::server

// ISO 8601 UTC times with milliseconds, as records and review deadlines show them:
// "2026-11-30T02:43:39.194Z".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tollgate {

// The text of milliseconds since the Unix epoch (meant for times from 1970 on).
std::string iso_utc_millis(std::int64_t millis);
// The milliseconds since the epoch of "YYYY-MM-DDTHH:MM:SS[.fff]Z" (what iso_utc_millis
// writes; fewer or more fraction digits are read too); nullopt for anything else.
std::optional<std::int64_t> parse_iso_utc_millis(std::string_view text);

}  // namespace tollgate

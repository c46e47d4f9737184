// Durations as config files write them: a whole number and one unit, "90s", "15m", "2h", "1d"
// (review timeouts, retention ages and intervals).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tollgate::core {

// The duration `text` names, or nullopt unless it is a positive whole number (1 to 9 digits, no
// leading zero) followed by s, m, h or d.
inline std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  if (text.size() < 2 || text.size() > 10 || text[0] < '1' || text[0] > '9') return std::nullopt;
  std::int64_t count = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    count = count * 10 + (text[i] - '0');
  }
  switch (text.back()) {
    case 's': return std::chrono::seconds(count);
    case 'm': return std::chrono::minutes(count);
    case 'h': return std::chrono::hours(count);
    case 'd': return std::chrono::hours(24 * count);
    default: return std::nullopt;
  }
}

}  // namespace tollgate::core

#include "tollgate/checkpoint.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

namespace tollgate {

void to_json(Json& j, const CheckpointConfig& config) {
  j = Json{{"thread_id", config.thread_id},
           {"checkpoint_ns", config.checkpoint_ns},
           {"checkpoint_id", config.checkpoint_id}};
}

bool Checkpoint::operator==(const Checkpoint& other) const {
  if (v != other.v || id != other.id || ts != other.ts ||
      channel_versions != other.channel_versions || versions_seen != other.versions_seen ||
      updated_channels != other.updated_channels ||
      channel_values.size() != other.channel_values.size()) {
    return false;
  }
  for (const auto& [key, value] : channel_values) {
    auto it = other.channel_values.find(key);
    if (it == other.channel_values.end()) return false;
    const Json& a = value ? *value : null_json();
    const Json& b = it->second ? *it->second : null_json();
    if (a != b) return false;
  }
  return true;
}

std::optional<int> special_write_index(std::string_view channel) {
  if (channel == kErrorChannel) return -1;
  if (channel == kScheduledChannel) return -2;
  if (channel == kInterruptChannel) return -3;
  if (channel == kResumeChannel) return -4;
  return std::nullopt;
}

namespace {

// 100-nanosecond intervals between the Gregorian epoch (1582-10-15) and the Unix epoch.
constexpr std::uint64_t kGregorianOffset = 0x01B21DD213814000ULL;

std::uint64_t monotonic_uuid_timestamp() {
  static std::atomic<std::uint64_t> last{0};
  auto now = std::chrono::system_clock::now().time_since_epoch();
  std::uint64_t ts = static_cast<std::uint64_t>(
                         std::chrono::duration_cast<std::chrono::nanoseconds>(now).count() / 100) +
                     kGregorianOffset;
  std::uint64_t previous = last.load(std::memory_order_relaxed);
  while (true) {
    std::uint64_t next = ts > previous ? ts : previous + 1;
    if (last.compare_exchange_weak(previous, next, std::memory_order_relaxed)) return next;
  }
}

std::uint64_t random_node() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng() & 0xFFFFFFFFFFFFULL;
}

// Writes the `digits` lowest hex digits of `value` to out[0..digits).
void put_hex(char* out, std::uint64_t value, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = digits - 1; i >= 0; --i) {
    out[i] = kDigits[value & 0xF];
    value >>= 4;
  }
}

// Appends `value` as exactly `digits` decimal digits (zero-padded).
void put_decimal(std::string& out, std::uint64_t value, int digits) {
  const std::size_t at = out.size();
  out.append(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0 && value > 0; --i) {
    out[at + static_cast<std::size_t>(i)] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
}

}  // namespace

std::string new_checkpoint_id(std::int64_t step) {
  const std::uint64_t ts = monotonic_uuid_timestamp() & 0x0FFFFFFFFFFFFFFFULL;  // 60 bits
  const auto time_high = static_cast<std::uint32_t>(ts >> 28);
  const auto time_mid = static_cast<std::uint16_t>((ts >> 12) & 0xFFFF);
  const auto time_low_and_version = static_cast<std::uint16_t>(0x6000 | (ts & 0x0FFF));
  const auto clock_seq =
      static_cast<std::uint16_t>(0x8000 | (static_cast<std::uint64_t>(step) & 0x3FFF));
  // "%08x-%04x-%04x-%04x-%012llx", formatted by hand (snprintf showed in profiles).
  std::string id(36, '-');
  put_hex(id.data(), time_high, 8);
  put_hex(id.data() + 9, time_mid, 4);
  put_hex(id.data() + 14, time_low_and_version, 4);
  put_hex(id.data() + 19, clock_seq, 4);
  put_hex(id.data() + 24, random_node(), 12);
  return id;
}

std::string utc_timestamp() {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const auto seconds = static_cast<std::time_t>(micros / 1000000);
  // "YYYY-MM-DDTHH:MM:SS" changes once a second: format it once per second and thread.
  thread_local std::time_t cached_seconds = -1;
  thread_local std::array<char, 128> cached_prefix{};  // room for any int (-Wformat-truncation)
  thread_local std::size_t cached_length = 0;
  if (seconds != cached_seconds) {
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    const int n = std::snprintf(cached_prefix.data(), cached_prefix.size(),
                                "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    cached_length = n > 0 ? std::min(static_cast<std::size_t>(n), cached_prefix.size() - 1) : 0;
    cached_seconds = seconds;
  }
  std::string out;
  out.reserve(cached_length + 13);
  out.append(cached_prefix.data(), cached_length);
  out += '.';
  put_decimal(out, static_cast<std::uint64_t>(micros % 1000000), 6);
  out += "+00:00";
  return out;
}

}  // namespace tollgate

#include "tollgate/checkpoint.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "checkpoint/saver_checks.h"
#include "core/ids.h"
#include "tollgate/effect_intents.h"

namespace tollgate {

void to_json(Json& j, const CheckpointConfig& config) {
  j = json_object("thread_id", config.thread_id, "checkpoint_ns", config.checkpoint_ns,
                  "checkpoint_id", config.checkpoint_id);
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

CheckpointConfig Saver::put_after_writes(const CheckpointConfig& writes_config,
                                         const std::vector<std::pair<std::string, Json>>& writes,
                                         const std::string& task_id, const std::string& task_path,
                                         const CheckpointConfig& config,
                                         const Checkpoint& checkpoint, const Json& metadata,
                                         const ChannelVersions& new_versions,
                                         const ChannelDeltas& deltas) {
  // A checkpoint put() would refuse stores neither.
  checkpoint_internal::check_put_arguments(config, checkpoint, metadata);
  put_writes(writes_config, writes, task_id, task_path);
  return put(config, checkpoint, metadata, new_versions, deltas);
}

std::optional<int> special_write_index(std::string_view channel) {
  if (channel == kErrorChannel) return -1;
  if (channel == kScheduledChannel) return -2;
  if (channel == kInterruptChannel) return -3;
  if (channel == kResumeChannel) return -4;
  if (channel == kIntentChannel) return -5;  // effect_intents.h
  return std::nullopt;
}

bool marks_task_finished(std::string_view channel) {
  return !special_write_index(channel).has_value();  // kNoWritesChannel included
}

namespace {

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

std::string new_checkpoint_id(std::int64_t step, const Clock& clock) {
  return core::checkpoint_id(step, clock);
}

std::string utc_timestamp(const Clock& clock) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(clock.now().time_since_epoch()).count();
  // Whole seconds rounded down, so a time before 1970 keeps a fraction in [0, 1).
  const auto seconds = static_cast<std::time_t>(micros / 1000000 - (micros % 1000000 < 0 ? 1 : 0));
  const auto fraction = static_cast<std::uint64_t>(micros - std::int64_t{seconds} * 1000000);
  // "YYYY-MM-DDTHH:MM:SS" changes once a second: format it once per second and thread.
  thread_local bool cached = false;
  thread_local std::time_t cached_seconds = 0;
  thread_local std::array<char, 128> cached_prefix{};  // room for any int (-Wformat-truncation)
  thread_local std::size_t cached_length = 0;
  if (!cached || seconds != cached_seconds) {
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    const int n = std::snprintf(cached_prefix.data(), cached_prefix.size(),
                                "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    cached_length = n > 0 ? std::min(static_cast<std::size_t>(n), cached_prefix.size() - 1) : 0;
    cached_seconds = seconds;
    cached = true;
  }
  std::string out;
  out.reserve(cached_length + 13);
  out.append(cached_prefix.data(), cached_length);
  out += '.';
  put_decimal(out, fraction, 6);
  out += "+00:00";
  return out;
}

}  // namespace tollgate

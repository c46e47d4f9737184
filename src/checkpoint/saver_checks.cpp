#include "checkpoint/saver_checks.h"

#include <string>

#include "tollgate/error.h"

namespace tollgate::checkpoint_internal {
namespace {

bool is_filter_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

}  // namespace

void check_put_arguments(const CheckpointConfig& config, const Checkpoint& checkpoint,
                         const Json& metadata) {
  if (config.thread_id.empty()) throw Error::InvalidArgument("put: config.thread_id is required");
  if (checkpoint.id.empty()) throw Error::InvalidArgument("put: checkpoint.id is required");
  if (!metadata.is_object()) throw Error::InvalidArgument("put: metadata must be a JSON object");
}

bool check_copy_thread_arguments(const std::string& source_thread_id,
                                 const std::string& target_thread_id) {
  if (source_thread_id.empty() || target_thread_id.empty()) {
    throw Error::InvalidArgument("copy_thread: thread ids are required");
  }
  return source_thread_id != target_thread_id;
}

void check_put_writes_arguments(const CheckpointConfig& config, std::string_view task_id) {
  if (config.thread_id.empty()) {
    throw Error::InvalidArgument("put_writes: config.thread_id is required");
  }
  if (config.checkpoint_id.empty()) {
    throw Error::InvalidArgument("put_writes: config.checkpoint_id is required");
  }
  if (task_id.empty()) throw Error::InvalidArgument("put_writes: task_id is required");
}

void check_filter(const Json& filter) {
  if (filter.is_null()) return;
  if (!filter.is_object()) throw Error::InvalidArgument("list: filter must be a JSON object");
  for (const auto& [key, value] : filter.items()) {
    bool valid = !key.empty();
    for (char c : key) valid = valid && is_filter_key_char(c);
    if (!valid) {
      throw Error::InvalidArgument("list: invalid filter key '" + key +
                                   "' (allowed: letters, digits, '_', '.', '-')");
    }
  }
}

bool metadata_matches(const Json& metadata, const Json& filter) {
  if (!filter.is_object()) return true;
  for (const auto& [key, value] : filter.items()) {
    auto it = metadata.find(key);
    if (it == metadata.end() || *it != value) return false;
  }
  return true;
}

}  // namespace tollgate::checkpoint_internal

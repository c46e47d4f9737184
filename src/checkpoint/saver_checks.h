// Argument checks and metadata filtering that every saver applies the same way.
#pragma once

#include <string>
#include <string_view>

#include "tollgate/checkpoint.h"
#include "tollgate/json.h"

namespace tollgate::checkpoint_internal {

// Throws Error(kInvalidArgument) naming the field: empty thread_id or checkpoint id, or
// metadata that is not an object.
void check_put_arguments(const CheckpointConfig& config, const Checkpoint& checkpoint,
                         const Json& metadata);
// Throws Error(kInvalidArgument) for an empty thread_id or checkpoint_id.
void check_put_writes_arguments(const CheckpointConfig& config, std::string_view task_id);
// Throws Error(kInvalidArgument) for an empty thread id; false when there is nothing to copy
// (the same thread).
bool check_copy_thread_arguments(const std::string& source_thread_id,
                                 const std::string& target_thread_id);
// A list filter must be null or an object whose keys match ^[a-zA-Z0-9_.-]+$.
void check_filter(const Json& filter);
// True when every key of `filter` (null: none) is in `metadata` with an equal value.
bool metadata_matches(const Json& metadata, const Json& filter);

}  // namespace tollgate::checkpoint_internal

// Deterministic ids of tasks and interrupts, so that a resumed superstep finds the same tasks
// (and their saved writes) and the same interrupt ids it showed before.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tollgate::graph_internal {

// xxh3_128 of the parts (each followed by a NUL byte), formatted as a UUID (8-4-4-4-12).
std::string task_id(const std::vector<std::string_view>& parts);

// 32 lowercase hex digits of xxh3_128(task_ns) for the first interrupt of a task and of
// xxh3_128(task_ns + "|" + k) for the k-th (k > 0).
std::string interrupt_id(std::string_view task_ns, std::size_t index);

// True for 32 hex digits (the shape of an interrupt id).
bool looks_like_interrupt_id(std::string_view text);

}  // namespace tollgate::graph_internal

#include "graph/ids.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/hex.h"
#include "core/ids.h"

namespace tollgate::graph_internal {

namespace {

// The hash of the parts, each followed by a NUL byte. The bytes are gathered first (on the
// stack when they fit) and hashed in one call: the same digest as feeding them part by part
// to a streaming state, for a fraction of the instructions.
XXH128_hash_t hash_parts(const std::vector<std::string_view>& parts) {
  std::size_t size = 0;
  for (std::string_view part : parts) size += part.size() + 1;
  std::array<char, 256> stack;
  std::string heap;
  char* bytes = stack.data();
  if (size > stack.size()) {
    heap.resize(size);
    bytes = heap.data();
  }
  std::size_t at = 0;
  for (std::string_view part : parts) {
    std::memcpy(bytes + at, part.data(), part.size());
    at += part.size();
    bytes[at++] = '\0';
  }
  return XXH3_128bits(bytes, size);
}

}  // namespace

std::string task_id(const std::vector<std::string_view>& parts) {
  const XXH128_hash_t h = hash_parts(parts);
  std::array<std::uint8_t, 16> bytes{};
  for (std::size_t i = 0; i < 8; ++i) {
    bytes[i] = static_cast<std::uint8_t>(h.high64 >> (56 - 8 * i));
    bytes[8 + i] = static_cast<std::uint8_t>(h.low64 >> (56 - 8 * i));
  }
  return core::format_uuid(bytes);
}

std::string interrupt_id(std::string_view task_ns, std::size_t index) {
  std::string input(task_ns);
  if (index > 0) {
    input += '|';
    input += std::to_string(index);
  }
  const XXH128_hash_t h = XXH3_128bits(input.data(), input.size());
  std::string id(32, '0');
  core::put_hex(id.data(), h.high64, 16);
  core::put_hex(id.data() + 16, h.low64, 16);
  return id;
}

bool looks_like_interrupt_id(std::string_view text) {
  return text.size() == 32 && core::is_hex(text);
}

}  // namespace tollgate::graph_internal

#include "graph/ids.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

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

// Writes the 16 hex digits of `value` to out[0..16).
void hex64(std::uint64_t value, char* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; --i) {
    out[i] = kDigits[value & 0xF];
    value >>= 4;
  }
}

}  // namespace

std::string task_id(const std::vector<std::string_view>& parts) {
  const XXH128_hash_t h = hash_parts(parts);
  std::array<char, 32> hex{};
  hex64(h.high64, hex.data());
  hex64(h.low64, hex.data() + 16);
  std::string id(36, '-');
  const std::size_t groups[] = {8, 4, 4, 4, 12};
  std::size_t from = 0;
  std::size_t to = 0;
  for (std::size_t group : groups) {
    for (std::size_t i = 0; i < group; ++i) id[to++] = hex[from++];
    ++to;  // the dash
  }
  return id;
}

std::string interrupt_id(std::string_view task_ns, std::size_t index) {
  std::string input(task_ns);
  if (index > 0) {
    input += '|';
    input += std::to_string(index);
  }
  const XXH128_hash_t h = XXH3_128bits(input.data(), input.size());
  std::string id(32, '0');
  hex64(h.high64, id.data());
  hex64(h.low64, id.data() + 16);
  return id;
}

bool looks_like_interrupt_id(std::string_view text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) return false;
  }
  return true;
}

}  // namespace tollgate::graph_internal

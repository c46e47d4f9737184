#include "graph/ids.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <array>
#include <cstdio>

namespace tollgate::graph_internal {

namespace {

XXH128_hash_t hash_parts(const std::vector<std::string_view>& parts) {
  XXH3_state_t state;
  XXH3_128bits_reset(&state);
  static constexpr char kSeparator = '\0';
  for (std::string_view part : parts) {
    XXH3_128bits_update(&state, part.data(), part.size());
    XXH3_128bits_update(&state, &kSeparator, 1);
  }
  return XXH3_128bits_digest(&state);
}

}  // namespace

std::string task_id(const std::vector<std::string_view>& parts) {
  const XXH128_hash_t h = hash_parts(parts);
  const auto hi = static_cast<unsigned long long>(h.high64);
  const auto lo = static_cast<unsigned long long>(h.low64);
  std::array<char, 40> out{};
  std::snprintf(out.data(), out.size(), "%08llx-%04llx-%04llx-%04llx-%012llx", hi >> 32,
                (hi >> 16) & 0xFFFFULL, hi & 0xFFFFULL, lo >> 48, lo & 0xFFFFFFFFFFFFULL);
  return std::string(out.data(), 36);
}

std::string interrupt_id(std::string_view task_ns, std::size_t index) {
  std::string input(task_ns);
  if (index > 0) {
    input += '|';
    input += std::to_string(index);
  }
  const XXH128_hash_t h = XXH3_128bits(input.data(), input.size());
  std::array<char, 40> out{};
  std::snprintf(out.data(), out.size(), "%016llx%016llx",
                static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return std::string(out.data(), 32);
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

// What every fuzz target needs of its input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tollgate::fuzz {

// The bytes as a string (fuzz inputs are not NUL-terminated).
inline std::string as_string(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace tollgate::fuzz

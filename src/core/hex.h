// Hexadecimal digits, shared by the modules that parse them (UUIDs, percent-escapes).
#pragma once

namespace tollgate::core {

// The value of one hexadecimal digit (either case), or -1 when `c` is not one.
constexpr int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace tollgate::core

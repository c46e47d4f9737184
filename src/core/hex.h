// Hexadecimal digits: the one encoder and decoder of every module (ids, percent-escapes, HTTP
// chunk sizes, escaped bytes). Lowercase on output, either case on input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tollgate::core {

inline constexpr char kHexDigits[] = "0123456789abcdef";

// The value of one hexadecimal digit (either case), or -1 when `c` is not one.
constexpr int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte written as the two hex digits text[at], text[at + 1], or -1 when they are not two
// hex digits (or the text ends before).
constexpr int hex_byte_at(std::string_view text, std::size_t at) {
  if (at >= text.size() || text.size() - at < 2) return -1;
  const int high = hex_value(text[at]);
  const int low = hex_value(text[at + 1]);
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

// True when `text` is not empty and holds only hex digits.
constexpr bool is_hex(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (hex_value(c) < 0) return false;
  }
  return true;
}

// Writes the `digits` lowest hex digits of `value` to out[0..digits), most significant first
// (zero-padded). For fixed-width fields on hot paths: no allocation.
constexpr void put_hex(char* out, std::uint64_t value, int digits) {
  for (int i = digits - 1; i >= 0; --i) {
    out[i] = kHexDigits[value & 0xF];
    value >>= 4;
  }
}

// Appends `value` in hex, zero-padded to at least `min_digits` digits (printf's "%0*x").
inline void append_hex(std::string& out, std::uint64_t value, int min_digits = 1) {
  int digits = 1;
  for (std::uint64_t rest = value >> 4; rest != 0; rest >>= 4) ++digits;
  if (digits < min_digits) digits = min_digits;
  const std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>(digits));
  put_hex(out.data() + at, value, digits);
}

}  // namespace tollgate::core

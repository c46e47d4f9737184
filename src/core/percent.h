// Percent-escapes (RFC 3986): URL paths and query strings, and JSON Schema $ref fragments.
#pragma once

#include <string>
#include <string_view>

#include "core/hex.h"

namespace tollgate::core {

// Decodes %XX escapes (and '+' as a space when `plus_as_space`, as in query strings); a '%' not
// followed by two hexadecimal digits stays as it is.
inline std::string percent_decode(std::string_view text, bool plus_as_space = false) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const int byte = c == '%' ? hex_byte_at(text, i + 1) : -1;
    if (byte >= 0) {
      out.push_back(static_cast<char>(byte));
      i += 2;
    } else if (c == '+' && plus_as_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace tollgate::core

// Parsing JSON text that comes from outside the process (request bodies, reviewers' arguments)
// with a bound on its nesting.
#pragma once

#include <cstddef>
#include <string_view>

#include "tollgate/json.h"

namespace tollgate {

// The deepest nesting of arrays and objects parse_json accepts unless told otherwise.
inline constexpr std::size_t kMaxJsonDepth = 256;

// Parses `text` as Json::parse does, but stops at the first array or object nested deeper than
// `max_depth`, so a deep document never becomes a deep tree: copying and printing a tree
// recurse, and a few hundred kilobytes of brackets would overflow the stack. Throws
// Error(kInvalidArgument) starting with `subject`: "<subject> is not valid JSON: <where and
// why>" or "<subject> nests deeper than 256 levels". One pass; about the cost of Json::parse.
Json parse_json(std::string_view text, std::string_view subject = "JSON text",
                std::size_t max_depth = kMaxJsonDepth);

// As parse_json, but answers a discarded value (is_discarded()) instead of throwing, like
// Json::parse(text, nullptr, false).
Json try_parse_json(std::string_view text, std::size_t max_depth = kMaxJsonDepth);

}  // namespace tollgate

// Internal helpers of virtual paths shared by the permission rules and the filesystem tools.
#pragma once

#include <string>
#include <string_view>

namespace tollgate {

// The longest leading directory of a glob without wildcards: "/secrets/**" -> "/secrets",
// "/**/x" -> "/".
std::string glob_anchor(std::string_view pattern);
// `path` is `dir` or inside it, component-wise ("/secret" is not inside "/secrets").
bool path_within(std::string_view path, std::string_view dir);
// True when one of the "/"-separated components of `path` is `component`.
bool has_component(std::string_view path, std::string_view component);

}  // namespace tollgate

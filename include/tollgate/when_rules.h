// The declarative `when` rules of a review policy: one grammar and one evaluator for the config
// file (docs/config.md), `tollgate chat --policy` files and parse_interrupt_on in C++.
//
//   {"arg": NAME, OP: TEXT}      OP one of
//       equals, not_equals, starts_with, contains    the argument's text
//       matches, not_matches                         an RE2 regular expression, the WHOLE text
//       path_glob                                    the normalised path (sandbox_relative_path)
//                                                    against a glob: * and ? within a segment,
//                                                    ** any number of segments ("secrets/**"
//                                                    also matches "secrets" itself)
//       path_under                                   the normalised path is the folder or in it
//   {"sql_writes": true|false [, "arg": NAME]}      is_sql_write(argument; default "query")
//   {"all": [rule, ...]} / {"any": [rule, ...]}     every / some rule holds
//
// A call of a gated tool is reviewed only when its rule holds, so the rules fail closed: a rule
// whose argument is missing or not a string holds; so does a path rule whose path leaves the
// sandbox, and a pattern rule on text that is not valid UTF-8. Regular expressions run on RE2:
// linear time, no recursion, whatever the text.
//
// Thread-safety: a parsed rule is immutable and may be evaluated from any thread at once.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "tollgate/human_in_the_loop.h"
#include "tollgate/json.h"

namespace tollgate {

// Parses one rule. `field` is its JSON path for errors ("interrupt_on.send_email.when");
// `context.sandbox` is where path rules take relative paths from. Throws Error(kInvalidArgument)
// "<field>: unknown key 'startswith' (expected ...)", "<field>.any[1]: must be an object", ...
WhenFn parse_when_rule(const Json& rule, const std::string& field,
                       const PolicyContext& context = {});

// True when running `query` (SQLite dialect, possibly several statements) could change a
// database: INSERT/UPDATE/DELETE/REPLACE/CREATE/DROP/ALTER/ATTACH/DETACH/VACUUM/REINDEX/
// ANALYZE, `WITH ... DELETE|INSERT|UPDATE`, PRAGMA assignments and side-effect pragmas, and
// anything it does not recognise (fails closed). Comments and quoted text are ignored. One pass
// over the text.
bool is_sql_write(std::string_view query);

// The path a tool would touch, as a normal path relative to `sandbox`: "./secrets/k",
// "secrets//k", "a/../secrets/k" and "<sandbox>/secrets/k" are all "secrets/k"; the sandbox
// itself is "". nullopt when the path is empty or leaves the sandbox ("../x", "a/../../x", an
// absolute path elsewhere, a symlink inside the sandbox that leads out). With an empty
// `sandbox` the path is normalised as text and every absolute path is outside; otherwise
// symlinks are followed as the file system would (so `sandbox` should be canonical).
std::optional<std::string> sandbox_relative_path(std::string_view path,
                                                 const std::filesystem::path& sandbox);

}  // namespace tollgate

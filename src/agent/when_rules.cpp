// The `when` rule grammar (when_rules.h): parsing with JSON-path errors, and evaluation that
// fails closed. Every pattern runs on RE2, so no argument text can make a rule slow or deep.
#include "tollgate/when_rules.h"

#include <re2/re2.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "tollgate/error.h"

namespace tollgate {
namespace {

constexpr const char* kTextConditions[] = {"equals",  "not_equals",  "starts_with", "contains",
                                           "matches", "not_matches", "path_glob",   "path_under"};
constexpr const char* kExpectedConditions =
    "equals, not_equals, starts_with, contains, matches, not_matches, path_glob or path_under";

// The argument `name` of the call; null when it is missing or not a string (the rule holds).
const std::string* string_argument(const ToolCallReview& call, const std::string& name) {
  const Json& args = call.tool_call.contains("args") ? call.tool_call["args"] : null_json();
  if (!args.is_object() || !args.contains(name)) return nullptr;
  const Json& value = args[name];
  return value.is_string() ? &value.get_ref<const std::string&>() : nullptr;
}

// RE2 matches nothing in invalid UTF-8, which would turn `matches` off for such text.
bool valid_utf8(const std::string& text) {
  static const RE2 kAnyText("(?s).*");
  return RE2::FullMatch(text, kAnyText);
}

std::shared_ptr<const RE2> compile(const std::string& pattern, const std::string& field,
                                   const std::string& condition) {
  RE2::Options options;
  options.set_log_errors(false);
  auto compiled = std::make_shared<const RE2>(pattern, options);
  if (!compiled->ok()) {
    throw Error::InvalidArgument(field + ": '" + condition +
                                 "' is not a valid regular expression: " + compiled->error());
  }
  return compiled;
}

// The RE2 form of a path glob over normalised relative paths: `*` and `?` stay within a
// segment, a `**` segment spans any number of segments (none included).
std::string glob_pattern(const std::string& glob) {
  std::vector<std::string> segments;
  for (std::size_t start = 0;;) {
    const std::size_t slash = glob.find('/', start);
    std::string segment = glob.substr(start, slash == std::string::npos ? slash : slash - start);
    const bool repeated_globstar = segment == "**" && !segments.empty() && segments.back() == "**";
    if (!segment.empty() && segment != "." && !repeated_globstar)
      segments.push_back(std::move(segment));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  std::string out;
  for (std::size_t k = 0; k < segments.size(); ++k) {
    const std::string& segment = segments[k];
    const bool last = k + 1 == segments.size();
    if (segment == "**") {
      if (k == 0) {
        out += last ? ".*" : "(?:.*/)?";
      } else {
        out += "(?:/.*)?";
      }
      continue;
    }
    if (k > 0 && !(k == 1 && segments[0] == "**")) out += '/';
    for (const char c : segment) {
      if (c == '*') {
        out += "[^/]*";
      } else if (c == '?') {
        out += "[^/]";
      } else {
        out += RE2::QuoteMeta(std::string(1, c));
      }
    }
  }
  return out;
}

class RuleParser {
 public:
  explicit RuleParser(const PolicyContext& context) {
    if (context.sandbox.empty()) return;
    std::error_code error;
    sandbox_ = std::filesystem::weakly_canonical(std::filesystem::absolute(context.sandbox), error);
    if (error) sandbox_ = std::filesystem::absolute(context.sandbox).lexically_normal();
  }

  WhenFn parse(const Json& rule, const std::string& field) const {
    if (!rule.is_object()) {
      throw Error::InvalidArgument(
          field + ": must be an object like {\"arg\": \"path\", \"starts_with\": \"/etc\"}");
    }
    if (rule.contains("all") || rule.contains("any")) return combination(rule, field);
    if (rule.contains("sql_writes")) return sql_writes(rule, field);
    return text_condition(rule, field);
  }

 private:
  WhenFn combination(const Json& rule, const std::string& field) const {
    const bool all = rule.contains("all");
    if (rule.size() != 1)
      throw Error::InvalidArgument(field + ": 'all'/'any' must be the only key of its rule");
    const Json& list = all ? rule["all"] : rule["any"];
    const std::string name = field + (all ? ".all" : ".any");
    if (!list.is_array() || list.empty())
      throw Error::InvalidArgument(name + ": must be a non-empty array");
    std::vector<WhenFn> parts;
    for (std::size_t i = 0; i < list.size(); ++i)
      parts.push_back(parse(list[i], name + "[" + std::to_string(i) + "]"));
    return [parts = std::move(parts), all](const ToolCallReview& call) {
      for (const auto& part : parts) {
        if (part(call) != all) return !all;
      }
      return all;
    };
  }

  static WhenFn sql_writes(const Json& rule, const std::string& field) {
    for (const auto& [key, value] : rule.items()) {
      (void)value;
      if (key != "sql_writes" && key != "arg")
        throw Error::InvalidArgument(field + ": unknown key '" + key +
                                     "' (a sql_writes rule has sql_writes and arg)");
    }
    if (!rule["sql_writes"].is_boolean())
      throw Error::InvalidArgument(field + ": 'sql_writes' must be true or false");
    const bool wanted = rule["sql_writes"].get<bool>();
    std::string arg = "query";
    if (rule.contains("arg")) {
      if (!rule["arg"].is_string())
        throw Error::InvalidArgument(field + ": 'arg' must be a string");
      arg = rule["arg"].get<std::string>();
    }
    return [wanted, arg](const ToolCallReview& call) {
      const std::string* query = string_argument(call, arg);
      return query == nullptr || is_sql_write(*query) == wanted;
    };
  }

  WhenFn text_condition(const Json& rule, const std::string& field) const {
    std::string condition;
    std::string operand;
    for (const auto& [key, value] : rule.items()) {
      if (key == "arg") continue;
      if (std::find_if(std::begin(kTextConditions), std::end(kTextConditions),
                       [&name = key](const char* known) { return name == known; }) ==
          std::end(kTextConditions)) {
        throw Error::InvalidArgument(field + ": unknown key '" + key + "' (expected " +
                                     kExpectedConditions + ")");
      }
      if (!condition.empty())
        throw Error::InvalidArgument(field + ": has two conditions ('" + condition + "' and '" +
                                     key + "'); use 'all'");
      if (!value.is_string())
        throw Error::InvalidArgument(field + ": '" + key + "' must be a string");
      condition = key;
      operand = value.get<std::string>();
    }
    const auto arg_it = rule.find("arg");
    if (arg_it == rule.end() || !arg_it->is_string()) {
      throw Error::InvalidArgument(
          field + ": needs \"arg\": the name of the argument to test (or sql_writes, all, any)");
    }
    if (condition.empty())
      throw Error::InvalidArgument(field + ": missing a condition (" +
                                   std::string(kExpectedConditions) + ")");
    const std::string arg = arg_it->get<std::string>();
    if (condition == "matches" || condition == "not_matches") {
      return pattern_rule(arg, compile(operand, field, condition), condition == "not_matches");
    }
    if (condition == "path_glob") {
      if (!operand.empty() && operand.front() == '/')
        throw Error::InvalidArgument(field + ": 'path_glob' must be relative to the sandbox");
      return path_rule(arg, compile(glob_pattern(operand), field, condition));
    }
    if (condition == "path_under") {
      const std::optional<std::string> folder = sandbox_relative_path(operand, {});
      if (!folder)
        throw Error::InvalidArgument(field +
                                     ": 'path_under' must be a relative path inside the sandbox");
      return path_under(arg, *folder);
    }
    return [arg, condition, operand](const ToolCallReview& call) {
      const std::string* text = string_argument(call, arg);
      if (text == nullptr) return true;
      if (condition == "equals") return *text == operand;
      if (condition == "not_equals") return *text != operand;
      if (condition == "starts_with") return text->rfind(operand, 0) == 0;
      return text->find(operand) != std::string::npos;  // contains
    };
  }

  static WhenFn pattern_rule(const std::string& arg, std::shared_ptr<const RE2> pattern,
                             bool negate) {
    return [arg, pattern = std::move(pattern), negate](const ToolCallReview& call) {
      const std::string* text = string_argument(call, arg);
      if (text == nullptr || !valid_utf8(*text)) return true;
      return RE2::FullMatch(*text, *pattern) != negate;
    };
  }

  WhenFn path_rule(const std::string& arg, std::shared_ptr<const RE2> glob) const {
    return [arg, glob = std::move(glob), sandbox = sandbox_](const ToolCallReview& call) {
      const std::string* text = string_argument(call, arg);
      if (text == nullptr) return true;
      const std::optional<std::string> path = sandbox_relative_path(*text, sandbox);
      if (!path || !valid_utf8(*path)) return true;
      return RE2::FullMatch(*path, *glob);
    };
  }

  WhenFn path_under(const std::string& arg, const std::string& folder) const {
    return [arg, folder, sandbox = sandbox_](const ToolCallReview& call) {
      const std::string* text = string_argument(call, arg);
      if (text == nullptr) return true;
      const std::optional<std::string> path = sandbox_relative_path(*text, sandbox);
      if (!path) return true;
      return folder.empty() || *path == folder || path->rfind(folder + "/", 0) == 0;
    };
  }

  std::filesystem::path sandbox_;  // absolute and canonical; empty: no sandbox
};

}  // namespace

WhenFn parse_when_rule(const Json& rule, const std::string& field, const PolicyContext& context) {
  return RuleParser(context).parse(rule, field);
}

}  // namespace tollgate

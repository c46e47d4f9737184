// The demo review policy and the JSON policy file (interrupt_on with declarative rules).
#include <algorithm>
#include <fstream>
#include <regex>

#include "tollgate/agent_config.h"
#include "tollgate/demo_tools.h"
#include "tollgate/error.h"

namespace tollgate {
namespace {

const std::vector<std::string> kAllDecisions = {"approve", "edit", "reject", "respond"};

const Json& call_args(const ToolCallReview& call) {
  return call.tool_call.contains("args") ? call.tool_call["args"] : null_json();
}

std::string arg_text(const Json& args, const std::string& name) {
  if (!args.is_object() || !args.contains(name)) return "";
  const Json& value = args[name];
  return value.is_string() ? value.get<std::string>() : value.dump();
}

WhenFn parse_rule(const std::string& field, const Json& rule) {
  auto fail = [&field](const std::string& what) {
    return Error::InvalidArgument(field + ": " + what);
  };
  if (!rule.is_object()) throw fail("must be an object");
  if (rule.contains("all") || rule.contains("any")) {
    const bool all = rule.contains("all");
    if (rule.size() != 1) throw fail("'all'/'any' must be the only key of its rule");
    const Json& list = all ? rule["all"] : rule["any"];
    const std::string name = field + (all ? ".all" : ".any");
    if (!list.is_array() || list.empty())
      throw Error::InvalidArgument(name + ": must be a non-empty array");
    std::vector<WhenFn> parts;
    for (std::size_t i = 0; i < list.size(); ++i)
      parts.push_back(parse_rule(name + "[" + std::to_string(i) + "]", list[i]));
    return [parts, all](const ToolCallReview& call) {
      for (const auto& part : parts) {
        if (part(call) != all) return !all;
      }
      return all;
    };
  }
  if (rule.contains("sql_writes")) {
    for (const auto& [key, value] : rule.items()) {
      if (key != "sql_writes" && key != "arg") throw fail("unknown key '" + key + "'");
    }
    if (!rule["sql_writes"].is_boolean()) throw fail("'sql_writes' must be true or false");
    const bool wanted = rule["sql_writes"].get<bool>();
    std::string arg = "query";
    if (rule.contains("arg")) {
      if (!rule["arg"].is_string()) throw fail("'arg' must be a string");
      arg = rule["arg"].get<std::string>();
    }
    return [wanted, arg](const ToolCallReview& call) {
      return is_sql_write(arg_text(call_args(call), arg)) == wanted;
    };
  }
  static const char* const kOps[] = {"equals",   "not_equals", "starts_with",
                                     "contains", "matches",    "not_matches"};
  if (!rule.contains("arg") || !rule["arg"].is_string())
    throw fail("needs \"arg\": the name of the argument to test (or sql_writes, all, any)");
  const std::string arg = rule["arg"].get<std::string>();
  std::string op;
  std::string value;
  for (const auto& [key, v] : rule.items()) {
    if (key == "arg") continue;
    if (std::find(std::begin(kOps), std::end(kOps), key) == std::end(kOps)) {
      throw fail("unknown key '" + key +
                 "' (expected equals, not_equals, starts_with, contains, matches or not_matches)");
    }
    if (!op.empty()) throw fail("has two conditions ('" + op + "' and '" + key + "'); use 'all'");
    if (!v.is_string()) throw fail("'" + key + "' must be a string");
    op = key;
    value = v.get<std::string>();
  }
  if (op.empty()) throw fail("missing a condition (equals, starts_with, matches, ...)");
  if (op == "matches" || op == "not_matches") {
    std::regex pattern;
    try {
      pattern = std::regex(value, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw fail("'" + op + "' is not a valid regular expression: " + e.what());
    }
    const bool negate = op == "not_matches";
    return [arg, pattern, negate](const ToolCallReview& call) {
      return std::regex_match(arg_text(call_args(call), arg), pattern) != negate;
    };
  }
  return [arg, op, value](const ToolCallReview& call) {
    const std::string text = arg_text(call_args(call), arg);
    if (op == "equals") return text == value;
    if (op == "not_equals") return text != value;
    if (op == "starts_with") return text.rfind(value, 0) == 0;
    return text.find(value) != std::string::npos;  // contains
  };
}

}  // namespace

HumanInTheLoopOptions demo_policy() {
  HumanInTheLoopOptions options;
  auto config = [](std::vector<std::string> allowed, std::string description) {
    InterruptOnConfig c;
    c.allowed_decisions = std::move(allowed);
    c.description_fn = [text = std::move(description)](const ToolCallReview& call) {
      std::string out;
      for (std::size_t i = 0; i < text.size();) {
        const std::size_t close = text[i] == '{' ? text.find('}', i) : std::string::npos;
        if (close == std::string::npos) {
          out += text[i++];
          continue;
        }
        out += arg_text(call_args(call), text.substr(i + 1, close - i - 1));
        i = close + 1;
      }
      return out;
    };
    return c;
  };
  options.interrupt_on["send_email"] = ToolReviewPolicy::with(
      config(kAllDecisions, "Send an email to {to} with the subject \"{subject}\"?"));
  options.interrupt_on["write_file"] = ToolReviewPolicy::with(config(
      {"approve", "edit", "reject"}, "Write {path} in the sandbox (replacing it if it exists)?"));
  options.interrupt_on["delete_file"] = ToolReviewPolicy::with(
      config({"approve", "edit", "reject"}, "Delete {path} from the sandbox?"));
  InterruptOnConfig sql =
      config({"approve", "edit", "reject"}, "Run this SQL, which changes the database?\n{query}");
  sql.when = [](const ToolCallReview& call) {
    return is_sql_write(arg_text(call_args(call), "query"));
  };
  options.interrupt_on["execute_sql"] = ToolReviewPolicy::with(std::move(sql));
  options.interrupt_on["ask_user"] =
      ToolReviewPolicy::with(config({"respond"}, "The agent asks: {question}"));
  return options;
}

InterruptOn parse_declared_interrupt_on(const Json& map, const std::string& path) {
  if (!map.is_object()) throw Error::InvalidArgument(path + ": must be an object");
  static const char* const kKeys[] = {
      "allowed_decisions", "allowedDecisions", "description", "when", "args_schema", "argsSchema"};
  InterruptOn result;
  for (const auto& [tool, entry] : map.items()) {
    const std::string field = path + "." + tool;
    if (entry.is_boolean()) {
      result[tool] =
          entry.get<bool>() ? ToolReviewPolicy::review_all() : ToolReviewPolicy::auto_approve();
      continue;
    }
    if (!entry.is_object())
      throw Error::InvalidArgument(field + ": must be true, false or an object");
    Json plain = Json::object();
    for (const auto& [key, value] : entry.items()) {
      if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
        throw Error::InvalidArgument(
            field + ": unknown key '" + key +
            "' (expected allowed_decisions, description, when, args_schema)");
      }
      if (key == "when") continue;
      if (key == "description") {
        const bool text = value.is_string();
        const bool template_object = value.is_object() && value.size() == 1 &&
                                     value.contains("template") && value["template"].is_string();
        if (!text && !template_object)
          throw Error::InvalidArgument(field + ".description: must be a string or " +
                                       "{\"template\": string}");
        if (text && value.get<std::string>().find('{') != std::string::npos) {
          plain[key] = {{"template", value}};
          continue;
        }
      }
      if ((key == "args_schema" || key == "argsSchema") && !value.is_object())
        throw Error::InvalidArgument(field + "." + key + ": must be an object");
      plain[key] = value;
    }
    // An omitted allowed_decisions means every decision; an empty or unknown one is refused
    // below (fails closed).
    if (!plain.contains("allowed_decisions") && !plain.contains("allowedDecisions"))
      plain["allowed_decisions"] = kAllDecisions;
    InterruptOn parsed = parse_interrupt_on(Json{{tool, plain}});
    ToolReviewPolicy policy = std::move(parsed.at(tool));
    if (entry.contains("when")) {
      policy.config.when = parse_rule(field + ".when", entry["when"]);
      policy.config.source_keys.emplace_back("when");
    }
    // Build it once so a bad allowed_decisions is reported now, with the tool's field.
    HumanInTheLoopOptions check;
    check.interrupt_on[tool] = policy;
    try {
      HitlPolicy built{std::move(check)};
      (void)built;
    } catch (const Error& e) {
      throw Error::InvalidArgument(field + ": " + e.what());
    }
    result[tool] = std::move(policy);
  }
  return result;
}

HumanInTheLoopOptions parse_policy(const Json& json) {
  if (!json.is_object()) throw Error::InvalidArgument("policy: must be a JSON object");
  HumanInTheLoopOptions options;
  const Json* map = &json;
  if (json.contains("interrupt_on")) {
    for (const auto& [key, value] : json.items()) {
      if (key != "interrupt_on" && key != "description_prefix")
        throw Error::InvalidArgument("policy: unknown key '" + key +
                                     "' (expected interrupt_on, description_prefix)");
    }
    map = &json["interrupt_on"];
    if (!map->is_object()) throw Error::InvalidArgument("policy.interrupt_on: must be an object");
    if (json.contains("description_prefix")) {
      if (!json["description_prefix"].is_string())
        throw Error::InvalidArgument("policy.description_prefix: must be a string");
      options.description_prefix = json["description_prefix"].get<std::string>();
    }
  }
  options.interrupt_on = parse_declared_interrupt_on(*map, "interrupt_on");
  return options;
}

HumanInTheLoopOptions load_policy_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error::InvalidArgument("policy file " + path + ": cannot be read");
  Json json;
  try {
    json = Json::parse(in);
  } catch (const Json::parse_error& e) {
    throw Error::InvalidArgument("policy file " + path + ": not valid JSON: " + e.what());
  }
  try {
    return parse_policy(json);
  } catch (const Error& e) {
    throw Error::InvalidArgument("policy file " + path + ": " + e.what());
  }
}

}  // namespace tollgate

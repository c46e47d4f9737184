// FilesystemPermission rules: first match decides, and the review policy they imply for the
// filesystem tools (HITL_SEMANTICS.md §6.4).
#include <string>
#include <vector>

#include "agent/filesystem_paths.h"
#include "tollgate/error.h"
#include "tollgate/filesystem.h"

namespace tollgate {
namespace {

bool overlaps(const std::string& a, const std::string& b) {
  return path_within(a, b) || path_within(b, a);
}

const Json* path_arg(const ToolCallReview& call, const char* name) {
  const Json& args = call.tool_call.contains("args") ? call.tool_call["args"] : null_json();
  if (!args.is_object()) return nullptr;
  const auto it = args.find(name);
  return it == args.end() ? nullptr : &*it;
}

WhenFn exact_when(std::vector<FilesystemPermission> rules, FilesystemOperation op,
                  const char* arg) {
  return [rules = std::move(rules), op, arg](const ToolCallReview& call) {
    const Json* raw = path_arg(call, arg);
    if (raw == nullptr || !raw->is_string()) return false;  // the tool refuses it anyway
    try {
      return check_permission(rules, op, normalize_virtual_path(raw->get<std::string>())) ==
             PermissionMode::kInterrupt;
    } catch (const Error&) {
      return false;  // refused by the tool before it touches anything
    }
  };
}

WhenFn bulk_when(const std::vector<FilesystemPermission>& rules, FilesystemOperation op,
                 const char* arg, bool check_pattern) {
  std::vector<std::string> anchors;
  for (const auto& rule : rules) {
    if (rule.mode() != PermissionMode::kInterrupt || !rule.covers(op)) continue;
    for (const auto& p : rule.paths()) anchors.push_back(glob_anchor(p));
  }
  return [anchors = std::move(anchors), arg, check_pattern](const ToolCallReview& call) {
    if (anchors.empty()) return false;
    const Json* raw = path_arg(call, arg);
    if (raw == nullptr || raw->is_null()) return true;  // no path: it can reach anything
    if (!raw->is_string()) return false;
    std::string path;
    try {
      path = normalize_virtual_path(raw->get<std::string>());
    } catch (const Error&) {
      return false;
    }
    for (const auto& anchor : anchors) {
      if (overlaps(path, anchor)) return true;
    }
    if (!check_pattern) return false;
    const Json* pattern = path_arg(call, "pattern");
    if (pattern == nullptr || !pattern->is_string()) return false;
    std::string text = pattern->get<std::string>();
    for (char& c : text) {
      if (c == '\\') c = '/';
    }
    if (has_component(text, "..")) return true;  // may climb anywhere
    if (text.empty() || text[0] != '/') return false;
    const std::string pattern_anchor = glob_anchor(text);
    for (const auto& anchor : anchors) {
      if (overlaps(pattern_anchor, anchor)) return true;
    }
    return false;
  };
}

}  // namespace

FilesystemPermission::FilesystemPermission(std::vector<std::string> operations,
                                           std::vector<std::string> paths, std::string mode)
    : paths_(std::move(paths)) {
  if (operations.empty()) {
    throw Error::InvalidArgument("FilesystemPermission: operations must not be empty");
  }
  for (const auto& op : operations) {
    if (op == "read") {
      read_ = true;
    } else if (op == "write") {
      write_ = true;
    } else {
      throw Error::InvalidArgument("FilesystemPermission: unknown operation '" + op +
                                   "' (expected 'read' or 'write')");
    }
  }
  if (mode == "allow") {
    mode_ = PermissionMode::kAllow;
  } else if (mode == "deny") {
    mode_ = PermissionMode::kDeny;
  } else if (mode == "interrupt") {
    mode_ = PermissionMode::kInterrupt;
  } else {
    throw Error::InvalidArgument("FilesystemPermission: unknown mode '" + mode +
                                 "' (expected 'allow', 'deny' or 'interrupt')");
  }
  if (paths_.empty()) throw Error::InvalidArgument("FilesystemPermission: paths must not be empty");
  for (const auto& path : paths_) {
    std::string slashes = path;
    for (char& c : slashes) {
      if (c == '\\') c = '/';
    }
    if (path.empty() || path[0] != '/') {
      throw Error::InvalidArgument("Permission path must start with '/': '" + path + "'");
    }
    if (has_component(slashes, "..")) {
      throw Error::InvalidArgument("Permission path must not contain '..': '" + path + "'");
    }
    if (has_component(slashes, "~")) {
      throw Error::InvalidArgument("Permission path must not contain '~': '" + path + "'");
    }
    glob_match("/", path);  // refuses a pattern of too many alternatives now, not per call
  }
}

bool FilesystemPermission::covers(FilesystemOperation operation) const {
  return operation == FilesystemOperation::kRead ? read_ : write_;
}

bool FilesystemPermission::matches(std::string_view normalized_path) const {
  for (const auto& pattern : paths_) {
    if (glob_match(normalized_path, pattern)) return true;
  }
  return false;
}

std::vector<FilesystemPermission> parse_filesystem_permissions(const Json& json) {
  if (!json.is_array()) throw Error::InvalidArgument("permissions: expected a list of rules");
  std::vector<FilesystemPermission> rules;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const std::string where = "permissions[" + std::to_string(i) + "]";
    const Json& rule = json[i];
    if (!rule.is_object()) throw Error::InvalidArgument(where + ": expected an object");
    for (const auto& [key, value] : rule.items()) {
      if (key != "operations" && key != "paths" && key != "mode") {
        throw Error::InvalidArgument(where + ": unknown key '" + key + "'");
      }
    }
    const auto strings = [&](const char* key) {
      const Json& list = rule.contains(key) ? rule[key] : null_json();
      if (!list.is_array()) {
        throw Error::InvalidArgument(where + "." + key + ": expected a list of strings");
      }
      std::vector<std::string> out;
      for (std::size_t k = 0; k < list.size(); ++k) {
        if (!list[k].is_string()) {
          throw Error::InvalidArgument(where + "." + key + "[" + std::to_string(k) +
                                       "]: expected a string");
        }
        out.push_back(list[k].get<std::string>());
      }
      return out;
    };
    const Json& mode = rule.contains("mode") ? rule["mode"] : Json("allow");
    if (!mode.is_string()) throw Error::InvalidArgument(where + ".mode: expected a string");
    try {
      rules.emplace_back(strings("operations"), strings("paths"), mode.get<std::string>());
    } catch (const Error& e) {
      throw Error::InvalidArgument(where + ": " + e.what());
    }
  }
  return rules;
}

PermissionMode check_permission(const std::vector<FilesystemPermission>& rules,
                                FilesystemOperation operation, std::string_view path) {
  for (const auto& rule : rules) {
    if (rule.covers(operation) && rule.matches(path)) return rule.mode();
  }
  return PermissionMode::kAllow;
}

InterruptOn interrupt_on_from_permissions(const std::vector<FilesystemPermission>& rules) {
  bool read = false, write = false;
  for (const auto& rule : rules) {
    if (rule.mode() != PermissionMode::kInterrupt) continue;
    read = read || rule.covers(FilesystemOperation::kRead);
    write = write || rule.covers(FilesystemOperation::kWrite);
  }
  InterruptOn out;
  const auto add = [&out](const char* tool, WhenFn when) {
    InterruptOnConfig config;
    config.allowed_decisions = {"approve", "edit", "reject", "respond"};
    config.when = std::move(when);
    out[tool] = ToolReviewPolicy::with(std::move(config));
  };
  using Op = FilesystemOperation;
  if (read) {
    add("ls", bulk_when(rules, Op::kRead, "path", false));
    add("read_file", exact_when(rules, Op::kRead, "file_path"));
    add("glob", bulk_when(rules, Op::kRead, "path", true));
    add("grep", bulk_when(rules, Op::kRead, "path", false));
  }
  if (write) {
    add("write_file", exact_when(rules, Op::kWrite, "file_path"));
    add("edit_file", exact_when(rules, Op::kWrite, "file_path"));
    add("delete", bulk_when(rules, Op::kWrite, "file_path", false));
  }
  return out;
}

}  // namespace tollgate

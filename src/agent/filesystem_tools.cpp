// The filesystem tools of a deep agent (ls, read_file, write_file, edit_file, delete, glob,
// grep): argument checks, permission checks, the backend call, and results in deepagents'
// words (src/agent/deep_agent_texts.h).
#include <algorithm>
#include <map>

#include "agent/deep_agent_texts.h"
#include "agent/filesystem_paths.h"
#include "agent/hitl_texts.h"
#include "agent/python_format.h"
#include "tollgate/error.h"
#include "tollgate/filesystem.h"
#include "tollgate/graph.h"

namespace tollgate {
namespace {

using hitl_texts::format_text;
namespace texts = deep_texts;

constexpr std::size_t kResultCharLimit = 20000 * 4;  // deepagents' tool result token limit
constexpr std::size_t kMaxLineLength = 5000;
constexpr long long kDefaultReadLimit = 100;

struct Shared {
  std::shared_ptr<const FilesystemBackend> backend;
  std::vector<FilesystemPermission> rules;
};

// A tool result the agent completes into a ToolMessage (run_tool_call fills id and name).
Json result_message(std::string content, bool error = false) {
  return Json{{"type", "tool"}, {"content", std::move(content)},
              {"status", error ? "error" : "success"}};
}

Json error_message(const std::string& text) {
  return result_message(format_text(texts::kError, {{"message", text}}), true);
}

std::string truncated(std::string text) {
  if (text.size() <= kResultCharLimit) return text;
  text.resize(kResultCharLimit);
  return text + "\n" + std::string(texts::kTruncated);
}

std::string path_list(const std::vector<std::string>& paths) {
  if (paths.empty()) return std::string(texts::kNoFilesFound);
  return truncated(python_repr(Json(paths)));
}

const char* op_name(FilesystemOperation op) {
  return op == FilesystemOperation::kRead ? "read" : "write";
}

bool denied(const Shared& fs, FilesystemOperation op, const std::string& path) {
  return check_permission(fs.rules, op, path) == PermissionMode::kDeny;
}

Json permission_denied(FilesystemOperation op, const std::string& path) {
  return result_message(format_text(texts::kPermissionDenied, {{"op", op_name(op)}, {"path", path}}),
                      true);
}

// One tool call's view of the filesystem: the step's files and this call's writes, handed
// back to the agent state when the call ends.
class CallScope {
 public:
  explicit CallScope(const ToolContext& context) : context_(context) {
    if (context.runtime != nullptr) {
      const Json& files = context.runtime->graph_state()["files"];
      call_.files = &files;
    }
    call_.files_update = &update_;
  }
  const FilesystemCall& call() const { return call_; }
  // Publishes the call's writes to the "files" channel.
  void commit() {
    if (!update_.is_object()) return;
    if (context_.state_update == nullptr) {
      throw Error::Internal("the in-state filesystem was used outside an agent's tools node");
    }
    Json& state = *context_.state_update;
    if (!state.is_object()) state = Json::object();
    Json& files = state["files"];
    if (!files.is_object()) files = Json::object();
    for (auto& [path, file] : update_.items()) files[path] = std::move(file);
  }

 private:
  const ToolContext& context_;
  FilesystemCall call_;
  Json update_;
};

std::string arg_string(const Json& args, const char* key) {
  const auto it = args.find(key);
  return it != args.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Runs `body` with the path normalised; a refused path or a backend failure is the model's
// error ToolMessage, as deepagents answers.
template <typename Body>
Json with_path(const std::string& raw, Body&& body) {
  std::string path;
  try {
    path = normalize_virtual_path(raw);
  } catch (const Error& e) {
    return error_message(e.what());
  }
  try {
    return body(path);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kInternal) throw;
    return error_message(e.what());
  }
}

Json schema(Json properties, std::vector<std::string> required) {
  return Json{{"type", "object"}, {"properties", std::move(properties)}, {"required", required}};
}

Json prop(const char* type, std::string_view description) {
  return Json{{"type", type}, {"description", std::string(description)}};
}

// ------------------------------------------------------------------------------ ls

Tool ls_tool(std::shared_ptr<const Shared> fs) {
  return Tool("ls", std::string(texts::kLsDescription),
              schema({{"path", prop("string", texts::kLsPathArg)}}, {"path"}),
              [fs](const Json& args, const ToolContext& context) -> Json {
                return with_path(arg_string(args, "path"), [&](const std::string& path) {
                  if (denied(*fs, FilesystemOperation::kRead, path)) {
                    return permission_denied(FilesystemOperation::kRead, path);
                  }
                  CallScope scope(context);
                  std::vector<std::string> paths;
                  for (const auto& entry : fs->backend->ls(scope.call(), path)) {
                    std::string checked = entry.path;
                    if (entry.is_dir && checked.size() > 1) checked.pop_back();
                    if (!denied(*fs, FilesystemOperation::kRead, checked)) {
                      paths.push_back(entry.path);
                    }
                  }
                  return result_message(path_list(paths));
                });
              });
}

// ------------------------------------------------------------------------ read_file

std::vector<std::string> split_lines(const std::string& content) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < content.size()) {
    std::size_t end = content.find_first_of("\r\n", start);
    if (end == std::string::npos) {
      lines.push_back(content.substr(start));
      break;
    }
    lines.push_back(content.substr(start, end - start));
    start = end + (content[end] == '\r' && end + 1 < content.size() && content[end + 1] == '\n'
                       ? 2
                       : 1);
  }
  return lines;
}

std::string numbered(const std::vector<std::string>& lines, std::size_t first,
                     std::size_t last) {
  std::vector<std::pair<std::string, std::string_view>> rows;
  std::size_t width = 0;
  for (std::size_t i = first; i < last; ++i) {
    const std::string& line = lines[i];
    const std::string number = std::to_string(i + 1);
    std::size_t chunk = 0;
    do {
      std::string marker = chunk == 0 ? number : number + "." + std::to_string(chunk);
      width = std::max(width, marker.size());
      rows.emplace_back(std::move(marker),
                        std::string_view(line).substr(chunk * kMaxLineLength, kMaxLineLength));
      ++chunk;
    } while (chunk * kMaxLineLength < line.size());
  }
  std::string out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) out += '\n';
    out.append(width - rows[i].first.size(), ' ');
    out += rows[i].first;
    out += "  ";
    out += rows[i].second;
  }
  return out;
}

long long arg_integer(const Json& args, const char* key, long long fallback) {
  const auto it = args.find(key);
  return it != args.end() && it->is_number_integer() ? it->get<long long>() : fallback;
}

Json read_window(const std::string& content, long long offset, long long limit) {
  if (content.find_first_not_of(" \t\r\n\v\f") == std::string::npos) {
    return result_message(std::string(texts::kEmptyFile));
  }
  const long long start = std::max(offset, 0LL);
  limit = std::max(limit, 0LL);
  if (limit == 0) {
    return result_message(format_text(texts::kNoLinesRequested, {{"limit", std::to_string(limit)}}));
  }
  const std::vector<std::string> lines = split_lines(content);
  const auto total = static_cast<long long>(lines.size());
  if (start >= total) {
    return error_message(format_text(
        texts::kOffsetPastEnd,
        {{"offset", std::to_string(offset)}, {"total", std::to_string(total)}}));
  }
  const long long end = std::min(start + limit, total);
  std::string text = truncated(numbered(lines, static_cast<std::size_t>(start),
                                        static_cast<std::size_t>(end)));
  if (end < total) {
    const long long count = end - start, remaining = total - end;
    text += format_text(texts::kLinesRemaining,
                        {{"count", std::to_string(count)},
                         {"unit", count == 1 ? "line" : "lines"},
                         {"start", std::to_string(start + 1)},
                         {"end", std::to_string(end)},
                         {"total", std::to_string(total)},
                         {"remaining", std::to_string(remaining)},
                         {"remaining_unit", remaining == 1 ? "line" : "lines"},
                         {"next", std::to_string(end)}});
  }
  if (offset < 0) text += format_text(texts::kNegativeOffset, {{"offset", std::to_string(offset)}});
  return result_message(std::move(text));
}

Tool read_file_tool(std::shared_ptr<const Shared> fs) {
  return Tool(
      "read_file", std::string(texts::kReadFileDescription),
      schema({{"file_path", prop("string", texts::kReadPathArg)},
              {"offset", prop("integer", texts::kReadOffsetArg)},
              {"limit", prop("integer", texts::kReadLimitArg)}},
             {"file_path"}),
      [fs](const Json& args, const ToolContext& context) -> Json {
        return with_path(arg_string(args, "file_path"), [&](const std::string& path) {
          if (denied(*fs, FilesystemOperation::kRead, path)) {
            return permission_denied(FilesystemOperation::kRead, path);
          }
          CallScope scope(context);
          return read_window(fs->backend->read(scope.call(), path), arg_integer(args, "offset", 0),
                             arg_integer(args, "limit", kDefaultReadLimit));
        });
      });
}

// ----------------------------------------------------------------- write_file, edit_file

Tool write_file_tool(std::shared_ptr<const Shared> fs) {
  return Tool("write_file", std::string(texts::kWriteFileDescription),
              schema({{"file_path", prop("string", texts::kWritePathArg)},
                      {"content", prop("string", texts::kWriteContentArg)}},
                     {"file_path", "content"}),
              [fs](const Json& args, const ToolContext& context) -> Json {
                return with_path(arg_string(args, "file_path"), [&](const std::string& path) {
                  if (denied(*fs, FilesystemOperation::kWrite, path)) {
                    return permission_denied(FilesystemOperation::kWrite, path);
                  }
                  CallScope scope(context);
                  fs->backend->write(scope.call(), path, arg_string(args, "content"));
                  scope.commit();
                  return result_message(format_text(texts::kUpdatedFile, {{"path", path}}));
                });
              });
}

std::size_t count_occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

std::string replace_all(const std::string& text, const std::string& from, const std::string& to) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, start)) {
    out.append(text, start, at - start);
    out += to;
    start = at + from.size();
  }
  out.append(text, start);
  return out;
}

Tool edit_file_tool(std::shared_ptr<const Shared> fs) {
  return Tool(
      "edit_file", std::string(texts::kEditFileDescription),
      schema({{"file_path", prop("string", texts::kEditPathArg)},
              {"old_string", prop("string", texts::kEditOldArg)},
              {"new_string", prop("string", texts::kEditNewArg)},
              {"replace_all", prop("boolean", texts::kEditReplaceAllArg)}},
             {"file_path", "old_string", "new_string"}),
      [fs](const Json& args, const ToolContext& context) -> Json {
        return with_path(arg_string(args, "file_path"), [&](const std::string& path) {
          if (denied(*fs, FilesystemOperation::kWrite, path)) {
            return permission_denied(FilesystemOperation::kWrite, path);
          }
          const std::string old_string = arg_string(args, "old_string");
          const std::string new_string = arg_string(args, "new_string");
          const bool all = args.value("replace_all", false);
          CallScope scope(context);
          const std::string content = fs->backend->read(scope.call(), path);
          const std::size_t n = old_string.empty() ? 0 : count_occurrences(content, old_string);
          if (n == 0) {
            return result_message(format_text(texts::kStringNotFound, {{"old", old_string}}), true);
          }
          if (n > 1 && !all) {
            return result_message(format_text(texts::kStringAmbiguous,
                                            {{"old", old_string}, {"n", std::to_string(n)}}),
                                true);
          }
          fs->backend->write(scope.call(), path, replace_all(content, old_string, new_string));
          scope.commit();
          return result_message(
              format_text(texts::kReplaced, {{"n", std::to_string(n)}, {"path", path}}));
        });
      });
}

// ---------------------------------------------------------------------------- delete

// The deny patterns a recursive delete of `path` could violate: one that matches the path
// or one of its ancestors, or one that reaches into its subtree. Fails closed.
std::vector<std::string> denying_patterns(const Shared& fs, const std::string& path) {
  std::vector<std::string> out;
  for (const auto& rule : fs.rules) {
    if (rule.mode() != PermissionMode::kDeny || !rule.covers(FilesystemOperation::kWrite)) continue;
    for (const auto& pattern : rule.paths()) {
      const std::string anchor = glob_anchor(pattern);
      bool hit = path_within(anchor, path) || glob_match(path, pattern);
      for (std::string up = path; !hit && path_within(up, anchor) && up != anchor;) {
        up = up.substr(0, std::max<std::size_t>(up.rfind('/'), 1));
        hit = glob_match(up, pattern);
      }
      if (hit) out.push_back(pattern);
    }
  }
  return out;
}

Tool delete_tool(std::shared_ptr<const Shared> fs) {
  return Tool("delete", std::string(texts::kDeleteDescription),
              schema({{"file_path", prop("string", texts::kDeletePathArg)}}, {"file_path"}),
              [fs](const Json& args, const ToolContext& context) -> Json {
                return with_path(arg_string(args, "file_path"), [&](const std::string& path) {
                  const std::vector<std::string> patterns = denying_patterns(*fs, path);
                  if (!patterns.empty()) {
                    std::string list;
                    for (const auto& p : patterns) list += (list.empty() ? "" : ", ") + p;
                    return result_message(format_text(texts::kPermissionDeniedDelete,
                                                    {{"path", path}, {"patterns", list}}),
                                        true);
                  }
                  CallScope scope(context);
                  fs->backend->remove(scope.call(), path);
                  scope.commit();
                  return result_message(format_text(texts::kDeleted, {{"path", path}}));
                });
              });
}

// ---------------------------------------------------------------------- glob, grep

std::string relative_to(const std::string& path, const std::string& base) {
  if (base == "/") return path.substr(1);
  return path.size() > base.size() ? path.substr(base.size() + 1) : path.substr(path.rfind('/') + 1);
}

// deepagents' file filter: a pattern without "/" matches the file name at any depth, one
// with "/" the path relative to the search root.
bool file_filter(const std::string& path, const std::string& base, const std::string& pattern) {
  if (pattern.find('/') == std::string::npos) {
    return glob_match(path.substr(path.rfind('/') + 1), pattern, false);
  }
  const std::string anchored = pattern[0] == '/' ? pattern.substr(1) : pattern;
  return glob_match(relative_to(path, base), anchored, false);
}

std::string optional_base(const Json& args) {
  const auto it = args.find("path");
  return it != args.end() && it->is_string() ? it->get<std::string>() : std::string("/");
}

Tool glob_tool(std::shared_ptr<const Shared> fs) {
  return Tool("glob", std::string(texts::kGlobDescription),
              schema({{"pattern", prop("string", texts::kGlobPatternArg)},
                      {"path", prop("string", texts::kGlobPathArg)}},
                     {"pattern"}),
              [fs](const Json& args, const ToolContext& context) -> Json {
                return with_path(optional_base(args), [&](const std::string& base) {
                  if (denied(*fs, FilesystemOperation::kRead, base)) {
                    return permission_denied(FilesystemOperation::kRead, base);
                  }
                  std::string pattern = arg_string(args, "pattern");
                  std::replace(pattern.begin(), pattern.end(), '\\', '/');
                  if (has_component(pattern, "..")) {
                    return error_message("Path traversal not allowed: " + pattern);
                  }
                  CallScope scope(context);
                  std::vector<std::string> paths;
                  for (const auto& file : fs->backend->walk(scope.call(), base)) {
                    if (file_filter(file.path, base, pattern) &&
                        !denied(*fs, FilesystemOperation::kRead, file.path)) {
                      paths.push_back(file.path);
                    }
                  }
                  return result_message(path_list(paths));
                });
              });
}

struct GrepHit {
  std::string path;
  std::size_t line;
  std::string text;
};

std::string format_grep(const std::vector<GrepHit>& hits, const std::string& mode) {
  if (hits.empty()) return std::string(texts::kNoMatchesFound);
  std::map<std::string, std::vector<const GrepHit*>> by_path;
  for (const auto& hit : hits) by_path[hit.path].push_back(&hit);
  std::string out;
  for (const auto& [path, list] : by_path) {
    if (!out.empty()) out += '\n';
    if (mode == "count") {
      out += path + ": " + std::to_string(list.size());
    } else if (mode == "content") {
      out += path + ":";
      for (const GrepHit* hit : list) out += "\n  " + std::to_string(hit->line) + ": " + hit->text;
    } else {
      out += path;
    }
  }
  return truncated(std::move(out));
}

Tool grep_tool(std::shared_ptr<const Shared> fs) {
  Json modes = prop("string", texts::kGrepOutputModeArg);
  modes["enum"] = {"files_with_matches", "content", "count"};
  Json max_count = prop("integer", "Optional cap on the total number of matches returned.");
  max_count["minimum"] = 1;
  return Tool(
      "grep", std::string(texts::kGrepDescription),
      schema({{"pattern", prop("string", texts::kGrepPatternArg)},
              {"path", prop("string", texts::kGrepPathArg)},
              {"glob", prop("string", texts::kGrepGlobArg)},
              {"output_mode", modes},
              {"max_count", max_count}},
             {"pattern"}),
      [fs](const Json& args, const ToolContext& context) -> Json {
        return with_path(optional_base(args), [&](const std::string& base) {
          if (denied(*fs, FilesystemOperation::kRead, base)) {
            return permission_denied(FilesystemOperation::kRead, base);
          }
          const std::string pattern = arg_string(args, "pattern");
          const std::string filter = arg_string(args, "glob");
          const long long cap = arg_integer(args, "max_count", 0);
          CallScope scope(context);
          std::vector<GrepHit> hits;
          for (const auto& file : fs->backend->walk(scope.call(), base)) {
            if (denied(*fs, FilesystemOperation::kRead, file.path)) continue;  // never read
            if (!filter.empty() && !file_filter(file.path, base, filter)) continue;
            std::string content;
            try {
              content = fs->backend->read(scope.call(), file.path);
            } catch (const Error&) {
              continue;  // vanished or refused since the walk
            }
            const std::vector<std::string> lines = split_lines(content);
            for (std::size_t i = 0; i < lines.size(); ++i) {
              if (pattern.empty() || lines[i].find(pattern) == std::string::npos) continue;
              if (cap > 0 && static_cast<long long>(hits.size()) >= cap) break;
              hits.push_back(GrepHit{file.path, i + 1, lines[i]});
            }
          }
          return result_message(format_grep(hits, args.value("output_mode", "files_with_matches")));
        });
      });
}

}  // namespace

const std::vector<std::string>& filesystem_tool_names() {
  static const std::vector<std::string> names{"ls",     "read_file", "write_file", "edit_file",
                                              "delete", "glob",      "grep"};
  return names;
}

std::vector<Tool> make_filesystem_tools(std::shared_ptr<const FilesystemBackend> backend,
                                        std::vector<FilesystemPermission> permissions) {
  if (!backend) throw Error::InvalidArgument("make_filesystem_tools: backend is required");
  auto fs = std::make_shared<const Shared>(Shared{std::move(backend), std::move(permissions)});
  return {ls_tool(fs),     read_file_tool(fs), write_file_tool(fs), edit_file_tool(fs),
          delete_tool(fs), glob_tool(fs),      grep_tool(fs)};
}

}  // namespace tollgate

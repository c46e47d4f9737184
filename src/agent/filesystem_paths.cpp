// Virtual paths of the deep agent's filesystem: one canonical spelling per path, and the glob
// matcher that permission rules and the glob/grep tools share.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "agent/filesystem_paths.h"
#include "tollgate/error.h"
#include "tollgate/filesystem.h"

namespace tollgate {
namespace {

// A model-written pattern must not expand into more alternatives than this.
constexpr std::size_t kMaxBraceExpansions = 256;

std::vector<std::string_view> split_components(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = path.find('/', start);
    const std::size_t stop = end == std::string_view::npos ? path.size() : end;
    if (stop > start) parts.push_back(path.substr(start, stop - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

// The end of the brace group opening at `open`, or npos when unbalanced.
std::size_t closing_brace(std::string_view pattern, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < pattern.size(); ++i) {
    if (pattern[i] == '{') ++depth;
    if (pattern[i] == '}' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// The top-level alternatives inside a brace group's body ("a,{b,c}" -> "a", "{b,c}").
std::vector<std::string_view> alternatives(std::string_view body) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '{') ++depth;
    if (body[i] == '}') --depth;
    if (body[i] == ',' && depth == 0) {
      out.push_back(body.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(body.substr(start));
  return out;
}

void expand_braces(std::string_view pattern, std::vector<std::string>& out) {
  const std::size_t open = pattern.find('{');
  const std::size_t close =
      open == std::string_view::npos ? std::string_view::npos : closing_brace(pattern, open);
  if (close == std::string_view::npos) {
    out.emplace_back(pattern);
    return;
  }
  const std::string prefix(pattern.substr(0, open));
  const std::string_view suffix = pattern.substr(close + 1);
  for (std::string_view alt : alternatives(pattern.substr(open + 1, close - open - 1))) {
    if (out.size() > kMaxBraceExpansions) {
      throw Error::InvalidArgument("Invalid glob pattern: too many {a,b} alternatives");
    }
    expand_braces(prefix + std::string(alt) + std::string(suffix), out);
  }
}

// [abc] / [!a-z] at pattern[i]; sets `end` past the class. False when the class is unclosed
// (then '[' is a literal).
bool class_matches(std::string_view pattern, std::size_t i, char c, std::size_t& end,
                   bool& matched) {
  std::size_t j = i + 1;
  const bool negate = j < pattern.size() && (pattern[j] == '!' || pattern[j] == '^');
  if (negate) ++j;
  matched = false;
  bool first = true;
  for (; j < pattern.size() && (first || pattern[j] != ']'); ++j, first = false) {
    if (j + 2 < pattern.size() && pattern[j + 1] == '-' && pattern[j + 2] != ']') {
      if (pattern[j] <= c && c <= pattern[j + 2]) matched = true;
      j += 2;
    } else if (pattern[j] == c) {
      matched = true;
    }
  }
  if (j >= pattern.size()) return false;
  end = j + 1;
  matched = matched != negate;
  return true;
}

// One path component against one pattern component (no '/'), with star backtracking.
bool component_matches(std::string_view name, std::string_view pattern) {
  std::size_t n = 0, p = 0, star_p = std::string_view::npos, star_n = 0;
  while (n < name.size()) {
    if (p < pattern.size()) {
      const char pc = pattern[p];
      if (pc == '*') {
        star_p = p++;
        star_n = n;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++n;
        continue;
      }
      if (pc == '[') {
        std::size_t end = 0;
        bool matched = false;
        if (class_matches(pattern, p, name[n], end, matched)) {
          if (matched) {
            p = end;
            ++n;
            continue;
          }
        } else if (name[n] == '[') {
          ++p;
          ++n;
          continue;
        }
      } else if (pc == name[n]) {
        ++p;
        ++n;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p + 1;
    n = ++star_n;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool hidden(std::string_view name) { return !name.empty() && name[0] == '.'; }

// Component lists, `**` matching any number of path components; memoised (the lists are
// short, and a pattern of many `**` must not take exponential time).
bool components_match(const std::vector<std::string_view>& path,
                      const std::vector<std::string_view>& pattern, bool match_dot_names) {
  const std::size_t rows = pattern.size() + 1, cols = path.size() + 1;
  // reachable[i][j]: pattern[i:] can match path[j:].
  std::vector<char> reachable(rows * cols, 0);
  reachable[pattern.size() * cols + path.size()] = 1;
  for (std::size_t i = pattern.size(); i-- > 0;) {
    for (std::size_t j = path.size() + 1; j-- > 0;) {
      bool ok = false;
      if (pattern[i] == "**") {
        ok = reachable[(i + 1) * cols + j] != 0;  // zero components
        if (!ok && j < path.size() && (match_dot_names || !hidden(path[j]))) {
          ok = reachable[i * cols + j + 1] != 0;  // one more
        }
      } else if (j < path.size()) {
        const bool dot_ok = match_dot_names || !hidden(path[j]) || hidden(pattern[i]);
        ok = dot_ok && component_matches(path[j], pattern[i]) &&
             reachable[(i + 1) * cols + j + 1] != 0;
      }
      reachable[i * cols + j] = ok ? 1 : 0;
    }
  }
  return reachable[0] != 0;
}

}  // namespace

std::string normalize_virtual_path(std::string_view path) {
  const auto refuse = [&] {
    return Error::InvalidArgument("Path traversal not allowed: " + std::string(path));
  };
  if (!path.empty() && path[0] == '~') throw refuse();
  if (path.find('\0') != std::string_view::npos) throw refuse();
  if (path.size() >= 2 && std::isalpha(static_cast<unsigned char>(path[0])) && path[1] == ':') {
    throw Error::InvalidArgument("Windows absolute paths are not supported: " +
                                 std::string(path) +
                                 ". Please use virtual paths starting with / (e.g., "
                                 "/workspace/file.txt)");
  }
  std::string slashes(path);
  std::replace(slashes.begin(), slashes.end(), '\\', '/');
  std::string out;
  for (std::string_view part : split_components(slashes)) {
    if (part == ".") continue;
    if (part == "..") throw refuse();
    out += '/';
    out += part;
  }
  return out.empty() ? "/" : out;
}

std::string glob_anchor(std::string_view pattern) {
  std::string anchor;
  for (std::string_view part : split_components(pattern)) {
    if (part.find_first_of("*?[{") != std::string_view::npos) break;
    anchor += '/';
    anchor += part;
  }
  return anchor.empty() ? "/" : anchor;
}

bool path_within(std::string_view path, std::string_view dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.substr(0, dir.size()) == dir &&
                         path[dir.size()] == '/');
}

bool has_component(std::string_view path, std::string_view component) {
  for (std::string_view part : split_components(path)) {
    if (part == component) return true;
  }
  return false;
}

bool glob_match(std::string_view path, std::string_view pattern, bool match_dot_names) {
  std::vector<std::string> expanded;
  expand_braces(pattern, expanded);
  const std::vector<std::string_view> path_parts = split_components(path);
  for (const std::string& alt : expanded) {
    if (components_match(path_parts, split_components(alt), match_dot_names)) return true;
  }
  return false;
}

}  // namespace tollgate

// The deep agent's filesystem: a backend that stores files, the tools the model uses on it
// (ls, read_file, write_file, edit_file, glob, grep, delete) and the permission rules that
// allow, deny or pause (for a person's review) each access.
//
//   auto backend = make_directory_backend("/srv/agent-files");   // or make_state_backend()
//   std::vector<FilesystemPermission> rules{
//       FilesystemPermission({"write"}, {"/secrets/**"}, "interrupt"),
//       FilesystemPermission({"read", "write"}, {"/private/**"}, "deny")};
//   std::vector<Tool> tools = make_filesystem_tools(backend, rules);
//   InterruptOn review = interrupt_on_from_permissions(rules);   // for HumanInTheLoop
//
// Paths are virtual and absolute ("/notes.txt"). A path with a ".." component or starting
// with "~" is refused; "//", "/./" and a missing leading "/" are normalised away, so every
// spelling of a path meets the same permission rule.
//
// Thread-safety: backends and tools are immutable once built and may serve parallel tool
// calls of many runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tollgate/human_in_the_loop.h"
#include "tollgate/json.h"
#include "tollgate/tool.h"

namespace tollgate {

// ------------------------------------------------------------------------------- paths

// The canonical form of a virtual path: starts with "/", no empty or "." components, no
// trailing "/" (except the root). Throws Error(kInvalidArgument) "Path traversal not allowed:
// <path>" for a ".." component or a leading "~", and for a Windows drive path.
std::string normalize_virtual_path(std::string_view path);

// Glob match of a whole path: `*` and `?` within one component, `**` as a whole component
// for any number of components, `[abc]`/`[!a-z]` classes and `{a,b}` alternatives (nested
// too). Names starting with "." match wildcards too when `match_dot_names` (permission rules
// fail closed: "/secrets/**" covers "/secrets/.env"); otherwise only a pattern component
// starting with "." matches them (what a listing wants).
bool glob_match(std::string_view path, std::string_view pattern, bool match_dot_names = true);

// ------------------------------------------------------------------------- permissions

enum class FilesystemOperation { kRead, kWrite };
enum class PermissionMode { kAllow, kDeny, kInterrupt };

// One access rule: the operations it covers ("read", "write"), the absolute path globs it
// covers and what happens on a match ("allow", "deny", "interrupt" = a person reviews the
// call). Rules are checked in order; the first that covers the operation and matches the
// path decides; no match allows.
class FilesystemPermission {
 public:
  // Throws Error(kInvalidArgument) naming the problem: an unknown operation or mode, no
  // operation or path, a path that does not start with "/" or has a ".." or "~" component.
  FilesystemPermission(std::vector<std::string> operations, std::vector<std::string> paths,
                       std::string mode = "allow");

  bool covers(FilesystemOperation operation) const;
  bool matches(std::string_view normalized_path) const;  // any of its globs
  const std::vector<std::string>& paths() const { return paths_; }
  PermissionMode mode() const { return mode_; }

 private:
  bool read_ = false;
  bool write_ = false;
  std::vector<std::string> paths_;
  PermissionMode mode_ = PermissionMode::kAllow;
};

// Parses [{"operations": [...], "paths": [...], "mode": "..."}]. Throws Error(kInvalidArgument)
// naming the entry ("permissions[1].paths[0]: ...").
std::vector<FilesystemPermission> parse_filesystem_permissions(const Json& json);

// The decision for `operation` on a normalised path: the first matching rule's mode, or allow.
PermissionMode check_permission(const std::vector<FilesystemPermission>& rules,
                                FilesystemOperation operation, std::string_view path);

// interrupt_on entries for the filesystem tools that an "interrupt" rule can reach, each with
// all four decisions and a `when` predicate: read_file / write_file / edit_file pause when
// their exact path is decided "interrupt"; ls / glob / grep / delete pause when the subtree
// they touch overlaps an interrupt rule's literal prefix (a call without a path, a glob
// pattern with "..", pause always). Empty when no rule interrupts.
InterruptOn interrupt_on_from_permissions(const std::vector<FilesystemPermission>& rules);

// ------------------------------------------------------------------------------ backend

struct FileInfo {
  std::string path;  // virtual; directories end with "/"
  bool is_dir = false;
  std::int64_t size = 0;
  std::string modified_at;  // ISO 8601, or empty
};

// What a backend call sees of the run: the thread's in-state files and where their changes go.
// Only the state backend uses them.
struct FilesystemCall {
  const Json* files = nullptr;   // the state's "files" at the start of the step (may be null)
  Json* files_update = nullptr;  // this call's writes to "files": {path: file | null}
};

// Where files live. Paths given to a backend are normalised (normalize_virtual_path). Failures
// throw Error: kNotFound "File '<path>' not found" (or "Directory ..."), kInvalidArgument for
// what the backend refuses (a symlink, a path outside its root, a non-regular file).
class FilesystemBackend {
 public:
  virtual ~FilesystemBackend() = default;
  // The entries directly inside `dir`, sorted by path.
  virtual std::vector<FileInfo> ls(const FilesystemCall& call, const std::string& dir) const = 0;
  // Every file (not directory) at or below `dir`, sorted by path.
  virtual std::vector<FileInfo> walk(const FilesystemCall& call, const std::string& dir) const = 0;
  virtual std::string read(const FilesystemCall& call, const std::string& path) const = 0;
  // Creates the file (and its parent directories) or replaces its content.
  virtual void write(const FilesystemCall& call, const std::string& path,
                     const std::string& content) const = 0;
  // Removes a file, or a directory with everything inside it.
  virtual void remove(const FilesystemCall& call, const std::string& path) const = 0;
  // True when its files live in the graph state's "files" channel.
  virtual bool uses_state() const { return false; }
};

// Files in the graph state ("files": {path: {"content", "encoding", "created_at",
// "modified_at"}}), checkpointed with the thread and shared with subagents.
std::shared_ptr<const FilesystemBackend> make_state_backend();

// Files in a real directory, confined to it: every path is resolved component by component
// from a descriptor of `root` with O_NOFOLLOW, so "..", symlinks (dangling ones too) and a
// symlink swapped in between a check and an open never lead outside. Symlinks inside the root
// are refused, not followed, and not listed. Throws Error(kInvalidArgument) when `root` is
// not a directory (it is created when missing).
std::shared_ptr<const FilesystemBackend> make_directory_backend(const std::string& root);

// --------------------------------------------------------------------------------- tools

// ls, read_file, write_file, edit_file, delete, glob, grep over `backend`, each checking
// `permissions` before it touches a path ("deny": an error ToolMessage "Error: permission
// denied for <read|write> on <path>"; listings leave denied paths out). Names, arguments and
// results follow deepagents' (docs/deep_agents.md); texts in src/agent/deep_agent_texts.cpp.
std::vector<Tool> make_filesystem_tools(std::shared_ptr<const FilesystemBackend> backend,
                                        std::vector<FilesystemPermission> permissions = {});

// The names of those tools, in their order.
const std::vector<std::string>& filesystem_tool_names();

}  // namespace tollgate

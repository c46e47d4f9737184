// The in-state filesystem: files live in the graph state's "files" channel, so they are
// checkpointed with the thread, forked with it and handed to subagents.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <set>

#include "agent/deep_agent_texts.h"
#include "agent/hitl_texts.h"
#include "tollgate/error.h"
#include "tollgate/filesystem.h"

namespace tollgate {
namespace {

using hitl_texts::format_text;

// Python's datetime.now(timezone.utc).isoformat(): 2026-09-01T12:00:00.123456+00:00.
std::string now_iso() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1000000;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%06lld+00:00",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(micros));
  return buffer;
}

// A stored file's text; older deepagents stored a list of lines.
std::string content_of(const Json& file) {
  const Json& content = file.contains("content") ? file["content"] : null_json();
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (std::size_t i = 0; i < content.size(); ++i) {
      if (i > 0) text += '\n';
      if (content[i].is_string()) text += content[i].get<std::string>();
    }
  }
  return text;
}

class StateBackend final : public FilesystemBackend {
 public:
  bool uses_state() const override { return true; }

  std::vector<FileInfo> ls(const FilesystemCall& call, const std::string& dir) const override {
    const Json files = current(call);
    const std::string prefix = dir == "/" ? "/" : dir + "/";
    std::vector<FileInfo> entries;
    std::set<std::string> subdirs;
    for (const auto& [path, file] : files.items()) {
      if (path.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string rest = path.substr(prefix.size());
      const std::size_t slash = rest.find('/');
      if (slash != std::string::npos) {
        subdirs.insert(prefix + rest.substr(0, slash) + "/");
        continue;
      }
      entries.push_back(info(path, file));
    }
    for (const auto& d : subdirs) entries.push_back(FileInfo{d, true, 0, ""});
    std::sort(entries.begin(), entries.end(),
              [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
    return entries;
  }

  std::vector<FileInfo> walk(const FilesystemCall& call, const std::string& dir) const override {
    const Json files = current(call);
    std::vector<FileInfo> out;
    for (const auto& [path, file] : files.items()) {
      if (dir == "/" || path == dir || path.compare(0, dir.size() + 1, dir + "/") == 0) {
        out.push_back(info(path, file));
      }
    }
    return out;  // a JSON object iterates in key order: sorted
  }

  std::string read(const FilesystemCall& call, const std::string& path) const override {
    const Json files = current(call);
    const auto it = files.find(path);
    if (it == files.end()) {
      throw Error::NotFound(format_text(deep_texts::kFileNotFound, {{"path", path}}));
    }
    return content_of(*it);
  }

  void write(const FilesystemCall& call, const std::string& path,
             const std::string& content) const override {
    const Json files = current(call);
    const auto it = files.find(path);
    const std::string now = now_iso();
    Json file{{"content", content}, {"encoding", "utf-8"}, {"created_at", now},
              {"modified_at", now}};
    if (it != files.end() && it->contains("created_at")) file["created_at"] = (*it)["created_at"];
    update(call)[path] = std::move(file);
  }

  void remove(const FilesystemCall& call, const std::string& path) const override {
    const Json files = current(call);
    const std::string prefix = path == "/" ? "/" : path + "/";
    bool found = false;
    for (const auto& [key, file] : files.items()) {
      if (key == path || key.compare(0, prefix.size(), prefix) == 0) {
        update(call)[key] = nullptr;
        found = true;
      }
    }
    if (!found) throw Error::NotFound(format_text(deep_texts::kFileNotFound, {{"path", path}}));
  }

 private:
  static FileInfo info(const std::string& path, const Json& file) {
    return FileInfo{path, false, static_cast<std::int64_t>(content_of(file).size()),
                    file.value("modified_at", "")};
  }

  // The files as this call sees them: the step's state with the call's own writes applied.
  static Json current(const FilesystemCall& call) {
    Json files = call.files != nullptr && call.files->is_object() ? *call.files : Json::object();
    if (call.files_update != nullptr && call.files_update->is_object()) {
      for (const auto& [path, file] : call.files_update->items()) {
        if (file.is_null()) {
          files.erase(path);
        } else {
          files[path] = file;
        }
      }
    }
    return files;
  }

  static Json& update(const FilesystemCall& call) {
    if (call.files_update == nullptr) {
      throw Error::Internal("the in-state filesystem needs the agent state (no files_update)");
    }
    if (!call.files_update->is_object()) *call.files_update = Json::object();
    return *call.files_update;
  }
};

}  // namespace

std::shared_ptr<const FilesystemBackend> make_state_backend() {
  return std::make_shared<StateBackend>();
}

}  // namespace tollgate

// The real-directory filesystem, confined to its root. Nothing is resolved by path string:
// every operation walks the virtual path's components from a descriptor of the root with
// openat(O_NOFOLLOW), so a "..", a symlink (dangling or not) or a symlink swapped in after a
// check cannot lead outside — the open itself is the check.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "agent/deep_agent_texts.h"
#include "agent/hitl_texts.h"
#include "tollgate/error.h"
#include "tollgate/filesystem.h"

namespace tollgate {
namespace {

using hitl_texts::format_text;

constexpr std::size_t kMaxReadBytes = 16u << 20;  // a model cannot use more anyway
constexpr std::size_t kMaxWalkEntries = 100000;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 1;
  while (start < path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += "/" + parts[i];
  return out.empty() ? "/" : out;
}

Error not_found(const std::string& path) {
  return Error::NotFound(format_text(deep_texts::kFileNotFound, {{"path", path}}));
}

Error refused_symlink(const std::string& path) {
  return Error::InvalidArgument("Refusing to follow a symbolic link: " + path);
}

std::string iso_time(const struct timespec& ts) {
  std::tm tm{};
  gmtime_r(&ts.tv_sec, &tm);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%06ld+00:00",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long>(ts.tv_nsec / 1000));
  return buffer;
}

// A new open file description of the directory `fd` (a dup would share its read position
// with every other reader of the directory).
int reopen(int fd) {
  const int out = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (out < 0) throw Error::Unavailable(std::string("cannot open directory: ") + std::strerror(errno));
  return out;
}

// Why opening `name` under `dir` failed, as the error the tool shows.
Error open_error(int dir, const std::string& name, const std::string& shown, int error) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
    return refused_symlink(shown);
  }
  if (error == ENOENT) return not_found(shown);
  if (error == ENOTDIR) return Error::InvalidArgument("Not a directory: " + shown);
  if (error == EISDIR) return Error::InvalidArgument("Is a directory: " + shown);
  return Error::Unavailable(shown + ": " + std::strerror(error));
}

class DirectoryBackend final : public FilesystemBackend {
 public:
  explicit DirectoryBackend(const std::string& root) : root_(root) {
    std::error_code ec;
    std::filesystem::create_directories(root, ec);
    root_fd_ = Fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (root_fd_.get() < 0) {
      throw Error::InvalidArgument("filesystem root '" + root +
                                   "' is not a directory: " + std::strerror(errno));
    }
  }

  std::vector<FileInfo> ls(const FilesystemCall&, const std::string& dir) const override {
    const auto parts = components(dir);
    Fd fd = open_dir(parts, parts.size(), false);
    std::vector<FileInfo> entries;
    list(fd.get(), dir, entries, false, 0);
    std::sort(entries.begin(), entries.end(),
              [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
    return entries;
  }

  std::vector<FileInfo> walk(const FilesystemCall&, const std::string& dir) const override {
    const auto parts = components(dir);
    std::vector<FileInfo> files;
    if (!parts.empty()) {
      Fd parent = open_dir(parts, parts.size() - 1, false);
      struct stat st {};
      if (::fstatat(parent.get(), parts.back().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return files;  // nothing there: no matches
      }
      if (S_ISREG(st.st_mode)) {
        files.push_back(FileInfo{dir, false, st.st_size, iso_time(st.st_mtim)});
        return files;
      }
      if (!S_ISDIR(st.st_mode)) return files;
    }
    Fd fd = open_dir(parts, parts.size(), false);
    list(fd.get(), dir, files, true, 0);
    std::sort(files.begin(), files.end(),
              [](const FileInfo& a, const FileInfo& b) { return a.path < b.path; });
    return files;
  }

  std::string read(const FilesystemCall&, const std::string& path) const override {
    const auto parts = components(path);
    if (parts.empty()) throw Error::InvalidArgument("Is a directory: /");
    Fd dir = open_dir(parts, parts.size() - 1, false);
    Fd fd(::openat(dir.get(), parts.back().c_str(),
                   O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (fd.get() < 0) throw open_error(dir.get(), parts.back(), path, errno);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      throw Error::InvalidArgument(S_ISDIR(st.st_mode) ? "Is a directory: " + path
                                                       : "Not a regular file: " + path);
    }
    if (static_cast<std::size_t>(st.st_size) > kMaxReadBytes) {
      throw Error::InvalidArgument("File too large to read: " + path);
    }
    std::string content;
    char buffer[65536];
    for (;;) {
      const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error::Unavailable(path + ": " + std::strerror(errno));
      if (n == 0) break;
      content.append(buffer, static_cast<std::size_t>(n));
      if (content.size() > kMaxReadBytes) {
        throw Error::InvalidArgument("File too large to read: " + path);
      }
    }
    return content;
  }

  void write(const FilesystemCall&, const std::string& path,
             const std::string& content) const override {
    const auto parts = components(path);
    if (parts.empty()) throw Error::InvalidArgument("Is a directory: /");
    Fd dir = open_dir(parts, parts.size() - 1, true);
    Fd fd(::openat(dir.get(), parts.back().c_str(),
                   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
                   0644));
    if (fd.get() < 0) throw open_error(dir.get(), parts.back(), path, errno);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      throw Error::InvalidArgument("Not a regular file: " + path);
    }
    std::size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error::Unavailable(path + ": " + std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
  }

  void remove(const FilesystemCall&, const std::string& path) const override {
    const auto parts = components(path);
    if (parts.empty()) throw Error::InvalidArgument("Refusing to delete the root directory");
    Fd dir = open_dir(parts, parts.size() - 1, false);
    struct stat st {};
    if (::fstatat(dir.get(), parts.back().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      throw not_found(path);
    }
    if (S_ISLNK(st.st_mode)) throw refused_symlink(path);
    remove_entry(dir.get(), parts.back(), S_ISDIR(st.st_mode), path, 0);
  }

 private:
  // The directory at parts[0, n), each component opened with O_NOFOLLOW under the previous
  // one; missing ones are created when `create`.
  Fd open_dir(const std::vector<std::string>& parts, std::size_t n, bool create) const {
    Fd current(reopen(root_fd_.get()));
    for (std::size_t i = 0; i < n; ++i) {
      const char* name = parts[i].c_str();
      int fd = ::openat(current.get(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT && create) {
        if (::mkdirat(current.get(), name, 0755) != 0 && errno != EEXIST) {
          throw Error::Unavailable(join(parts, i + 1) + ": " + std::strerror(errno));
        }
        fd = ::openat(current.get(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      }
      if (fd < 0) {
        const int error = errno;
        throw open_error(current.get(), parts[i], join(parts, i + 1), error);
      }
      current.reset(fd);
    }
    return current;
  }

  // Entries of the open directory `fd` (virtual path `dir`); recursive walks collect files
  // only. Symlinks are skipped: they are never followed, so they are not offered either.
  void list(int fd, const std::string& dir, std::vector<FileInfo>& out, bool recursive,
            int depth) const {
    if (depth > 64) return;
    DIR* stream = ::fdopendir(reopen(fd));
    if (stream == nullptr) throw Error::Unavailable(dir + ": " + std::strerror(errno));
    const std::string prefix = dir == "/" ? "/" : dir + "/";
    std::vector<std::string> subdirs;
    while (struct dirent* entry = ::readdir(stream)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      struct stat st {};
      if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        if (recursive) {
          subdirs.push_back(name);
        } else {
          out.push_back(FileInfo{prefix + name + "/", true, 0, iso_time(st.st_mtim)});
        }
      } else if (S_ISREG(st.st_mode)) {
        out.push_back(FileInfo{prefix + name, false, st.st_size, iso_time(st.st_mtim)});
      }
      if (out.size() > kMaxWalkEntries) break;
    }
    ::closedir(stream);
    for (const auto& name : subdirs) {
      const int child = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0) continue;
      Fd owned(child);
      list(owned.get(), prefix + name, out, true, depth + 1);
      if (out.size() > kMaxWalkEntries) return;
    }
  }

  void remove_entry(int dir, const std::string& name, bool is_dir, const std::string& shown,
                    int depth) const {
    if (is_dir) {
      if (depth > 64) throw Error::InvalidArgument("Directory too deep to delete: " + shown);
      Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (fd.get() < 0) throw open_error(dir, name, shown, errno);
      DIR* stream = ::fdopendir(reopen(fd.get()));
      if (stream == nullptr) throw Error::Unavailable(shown + ": " + std::strerror(errno));
      std::vector<std::pair<std::string, bool>> children;
      while (struct dirent* entry = ::readdir(stream)) {
        const std::string child = entry->d_name;
        if (child == "." || child == "..") continue;
        struct stat st {};
        if (::fstatat(fd.get(), child.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        children.emplace_back(child, S_ISDIR(st.st_mode));  // a link is unlinked, not followed
      }
      ::closedir(stream);
      for (const auto& [child, child_is_dir] : children) {
        remove_entry(fd.get(), child, child_is_dir, shown + "/" + child, depth + 1);
      }
    }
    if (::unlinkat(dir, name.c_str(), is_dir ? AT_REMOVEDIR : 0) != 0) {
      throw Error::Unavailable(shown + ": " + std::strerror(errno));
    }
  }

  std::string root_;
  Fd root_fd_;
};

}  // namespace

std::shared_ptr<const FilesystemBackend> make_directory_backend(const std::string& root) {
  return std::make_shared<DirectoryBackend>(root);
}

}  // namespace tollgate

#include "server/static_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>

#include "tollgate/error.h"

namespace tollgate::server {
namespace {

namespace fs = std::filesystem;

std::string content_type_of(const fs::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json" || ext == ".map") return "application/json";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".ico") return "image/x-icon";
  if (ext == ".woff2") return "font/woff2";
  return "application/octet-stream";
}

bool read_file(const fs::path& file, std::string& out) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  out = buffer.str();
  return true;
}

HttpResponse file_response(const fs::path& file, std::string body) {
  HttpResponse response;
  response.content_type = content_type_of(file);
  response.body = std::move(body);
  // Vite fingerprints asset names, so they never change; index.html must always be fresh.
  response.add_header("Cache-Control", file.parent_path().filename() == "assets"
                                           ? "public, max-age=31536000, immutable"
                                           : "no-cache");
  return response;
}

const char* kNotBuiltPage =
    "<!doctype html><meta charset=utf-8><title>Tollgate</title>"
    "<body style=\"font-family:sans-serif;max-width:40em;margin:4em auto\">"
    "<h1>Tollgate is running</h1><p>The Agent Server API is available on this address, but the "
    "review console was not built. Run <code>scripts/build-web.sh</code> (needs Node.js 20 and "
    "npm) and reload this page.</p></body>";

// The longest request path the console answers with a file, and the longest name in it. The
// console's own paths are short; the file system refuses names over 255 bytes and long paths
// (NAME_MAX, PATH_MAX), so a longer path is simply not a console file and never reaches it.
constexpr std::size_t kMaxPathBytes = 1024;
constexpr std::size_t kMaxNameBytes = 255;

// Whether `relative` (the request path without its leading '/') may name a file of the
// console: bounded lengths, no control bytes (a decoded %00 would cut the name short), and no
// "." or ".." step.
bool acceptable_relative_path(std::string_view relative) {
  if (relative.size() > kMaxPathBytes) return false;
  for (char c : relative) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  std::size_t start = 0;
  while (start <= relative.size()) {
    std::size_t end = relative.find('/', start);
    if (end == std::string_view::npos) end = relative.size();
    const std::string_view name = relative.substr(start, end - start);
    if (name.size() > kMaxNameBytes || name == "." || name == "..") return false;
    start = end + 1;
  }
  return true;
}

// The file under `root` that `relative` names, or nullopt when it names none: missing, not a
// regular file, outside `root` (through a symbolic link), or unresolvable (a link loop). Uses
// only the error-code forms of std::filesystem: a client's path never throws.
std::optional<fs::path> console_file(const fs::path& root, std::string_view relative) {
  std::error_code ec;
  const fs::path candidate = fs::weakly_canonical(root / fs::path(relative), ec);
  if (ec) return std::nullopt;
  const auto [end, _] = std::mismatch(root.begin(), root.end(), candidate.begin(), candidate.end());
  if (end != root.end() || !fs::is_regular_file(candidate, ec) || ec) return std::nullopt;
  return candidate;
}

fs::path resolve_root(const std::string& folder) {
  std::error_code ec;
  fs::path root = fs::weakly_canonical(fs::absolute(folder, ec), ec);
  if (ec) throw Error::InvalidArgument("console_dir: cannot resolve " + folder + ": " + ec.message());
  return root;
}

}  // namespace

Handler make_console_handler(std::string folder) {
  return [root = resolve_root(folder)](HttpRequest& request) {
    const fs::path index = root / "index.html";
    std::string_view relative = request.path;
    while (!relative.empty() && relative.front() == '/') relative.remove_prefix(1);
    if (!relative.empty()) {
      if (!acceptable_relative_path(relative)) return HttpResponse::error(404, "Not found");
      std::string body;
      if (auto file = console_file(root, relative); file && read_file(*file, body)) {
        return file_response(*file, std::move(body));
      }
      // A missing asset is a real 404; any other path is a page of the single-page app.
      if (relative.rfind("assets/", 0) == 0 || fs::path(relative).has_extension()) {
        return HttpResponse::error(404, "Not found");
      }
    }
    std::string body;
    if (read_file(index, body)) return file_response(index, std::move(body));
    HttpResponse response;
    response.content_type = "text/html; charset=utf-8";
    response.body = kNotBuiltPage;
    return response;
  };
}

}  // namespace tollgate::server

#include "server/static_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

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

}  // namespace

Handler make_console_handler(std::string folder) {
  return [root = fs::weakly_canonical(fs::absolute(folder))](HttpRequest& request) {
    const fs::path index = root / "index.html";
    std::string relative = request.path;
    while (!relative.empty() && relative.front() == '/') relative.erase(0, 1);
    if (!relative.empty()) {
      const fs::path candidate = fs::weakly_canonical(root / relative);
      const auto [end, _] = std::mismatch(root.begin(), root.end(), candidate.begin(), candidate.end());
      std::string body;
      if (end == root.end() && fs::is_regular_file(candidate) && read_file(candidate, body)) {
        return file_response(candidate, std::move(body));
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

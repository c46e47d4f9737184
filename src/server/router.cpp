#include "server/router.h"

#include "tollgate/error.h"

namespace tollgate::server {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> segments;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) segments.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return segments;
}

void Router::add(std::string method, const std::string& pattern, Handler handler) {
  routes_.push_back(Route{std::move(method), split_path(pattern), std::move(handler)});
}

HttpResponse Router::dispatch(HttpRequest& request) const {
  const std::vector<std::string> segments = split_path(request.path);
  bool path_known = false;
  for (const Route& route : routes_) {
    if (route.segments.size() != segments.size()) continue;
    std::vector<std::string> params;
    bool match = true;
    for (std::size_t i = 0; i < segments.size() && match; ++i) {
      if (!route.segments[i].empty() && route.segments[i][0] == ':') {
        params.push_back(segments[i]);
      } else {
        match = route.segments[i] == segments[i];
      }
    }
    if (!match) continue;
    path_known = true;
    if (route.method != request.method) continue;
    request.params = std::move(params);
    try {
      return route.handler(request);
    } catch (const HttpError& e) {
      return HttpResponse::error(e.status(), e.what());
    } catch (const Error& e) {
      return HttpResponse::error(http_status(e.code()), e.what());
    } catch (const Json::exception& e) {
      return HttpResponse::error(400, std::string("Invalid request: ") + e.what());
    } catch (const std::exception& e) {
      return HttpResponse::error(500, std::string("Internal error: ") + e.what());
    }
  }
  if (path_known) return HttpResponse::error(405, "Method not allowed");
  if (get_fallback_ && (request.method == "GET" || request.method == "HEAD")) {
    return get_fallback_(request);
  }
  return HttpResponse::error(404, "Not found");
}

}  // namespace tollgate::server

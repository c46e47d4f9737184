#include "server/router.h"

#include "server/log.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

// Runs a handler and turns whatever it throws into an answer. An Error is the client's or
// the world's (its code decides the status); anything else is a bug in the server: 500,
// logged with the request it happened on. Request fields are read by checked readers that
// throw Error(kInvalidArgument) naming the field, so a JSON type error that gets here was
// not the client's fault.
HttpResponse guarded(const Handler& handler, HttpRequest& request) {
  const auto internal = [&request](const std::string& message) {
    log_error(request.method + " " + request.path + ": " + message);
    return HttpResponse::error(500, message);
  };
  try {
    return handler(request);
  } catch (const Error& e) {
    if (http_status(e.code()) >= 500) log_error(request.method + " " + request.path + ": " + e.what());
    return HttpResponse::error(http_status(e.code()), e.what());
  } catch (const std::exception& e) {
    return internal(std::string("Internal error: ") + e.what());
  } catch (...) {
    return internal("Internal error: unknown exception");
  }
}

}  // namespace

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
  routes_.push_back(Route{std::move(method), split_path(pattern), std::move(handler), false});
}

void Router::add_open(std::string method, const std::string& pattern, Handler handler) {
  routes_.push_back(Route{std::move(method), split_path(pattern), std::move(handler), true});
}

bool Router::authenticate(HttpRequest& request, bool open, std::string& refusal) const {
  if (!auth_step_) {
    request.identity = Identity::local();
    return true;
  }
  std::optional<Identity> identity = auth_step_(request, refusal);
  request.identity = identity ? std::move(*identity) : Identity{};
  return identity.has_value() || open;
}

HttpResponse Router::dispatch(HttpRequest& request) const {
  const std::vector<std::string> segments = split_path(request.path);
  const Route* matched = nullptr;
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
    matched = &route;
    break;
  }
  const bool fallback = matched == nullptr && !path_known && get_fallback_ &&
                        (request.method == "GET" || request.method == "HEAD");
  std::string refusal;
  if (!authenticate(request, fallback || (matched != nullptr && matched->open), refusal)) {
    HttpResponse response = HttpResponse::error(401, refusal.empty() ? "Unauthorized" : refusal);
    response.add_header("WWW-Authenticate", "Bearer");
    return response;
  }
  if (matched != nullptr) return guarded(matched->handler, request);
  if (path_known) return HttpResponse::error(405, "Method not allowed");
  if (fallback) return guarded(get_fallback_, request);
  return HttpResponse::error(404, "Not found");
}

}  // namespace tollgate::server

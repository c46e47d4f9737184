// Maps (method, path) to a handler. Patterns are paths whose segments may be ":name"
// placeholders; the matched segments become HttpRequest::params in order.
#pragma once

#include <string>
#include <vector>

#include "server/http_types.h"

namespace tollgate::server {

// Thread-safety: fill it before serving; dispatch() is then safe from any thread.
class Router {
 public:
  void add(std::string method, const std::string& pattern, Handler handler);
  // Runs the matching handler and turns exceptions into JSON error responses: 404 for an
  // unknown path, 405 for a known path with another method, an Error's status, and 500 for anything else (logged).
  HttpResponse dispatch(HttpRequest& request) const;
  // Answers GET requests for paths no route knows (e.g. the console's files).
  void set_get_fallback(Handler handler) { get_fallback_ = std::move(handler); }

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    Handler handler;
  };
  std::vector<Route> routes_;
  Handler get_fallback_;
};

// Splits "/a/b/c" into {"a","b","c"} (empty segments dropped).
std::vector<std::string> split_path(const std::string& path);

}  // namespace tollgate::server

// Maps (method, path) to a handler. Patterns are paths whose segments may be ":name"
// placeholders; the matched segments become HttpRequest::params in order.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "server/http_types.h"

namespace tollgate::server {

// Who a request comes from: the identity its credential proves, or nullopt when it carries
// no credential or one that is not valid (then `refusal` says which, for the 401's detail).
using AuthStep = std::function<std::optional<Identity>(const HttpRequest& request,
                                                       std::string& refusal)>;

// Thread-safety: fill it before serving; dispatch() is then safe from any thread.
class Router {
 public:
  void add(std::string method, const std::string& pattern, Handler handler);
  // A route anyone may call without a credential (GET /ok, GET /info). Its handler sees the
  // credential's identity when a valid one came, else an empty identity.
  void add_open(std::string method, const std::string& pattern, Handler handler);
  // Runs the auth step, then the matching handler, and turns exceptions into JSON error
  // responses: 401 when the auth step refuses a request for anything but an open route or
  // the GET fallback (before the path is even looked up further: an unknown path is 401 too),
  // 404 for an unknown path, 405 for a known path with another method, an Error's status, and
  // 500 for anything else (logged).
  HttpResponse dispatch(HttpRequest& request) const;
  // Answers GET requests for paths no route knows (e.g. the console's files); open.
  void set_get_fallback(Handler handler) { get_fallback_ = std::move(handler); }
  // Sets request.identity before any handler runs. Without one, every request comes from
  // Identity::local().
  void set_auth_step(AuthStep step) { auth_step_ = std::move(step); }
  bool has_auth_step() const { return static_cast<bool>(auth_step_); }

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;
    Handler handler;
    bool open = false;
  };
  // Sets request.identity; false (and `refusal` says why) when the request may not go on.
  bool authenticate(HttpRequest& request, bool open, std::string& refusal) const;

  std::vector<Route> routes_;
  Handler get_fallback_;
  AuthStep auth_step_;
};

// Splits "/a/b/c" into {"a","b","c"} (empty segments dropped).
std::vector<std::string> split_path(const std::string& path);

}  // namespace tollgate::server

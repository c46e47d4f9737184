// Which browser pages may call the API (docs/security.md). A page's requests carry its Origin;
// one from an origin not allowed is refused (403) before it reaches a handler, so a page of
// another site can neither read answers nor post decisions, even with "simple" requests that
// skip the preflight. Requests without an Origin (curl, the SDK in Node) are not concerned.
#pragma once

#include <string>
#include <vector>

namespace tollgate::server {

// Thread-safety: immutable; allows() may be called from any thread.
class CorsPolicy {
 public:
  // `origins`: exact origins ("https://review.example.com"), or "*" for every origin. Empty:
  // loopback origins only (http://localhost:<port>, http://127.0.0.1:<port>, http://[::1]:<port>).
  // `trust_own_origin`: a page of the origin the request was sent to (the Host header, e.g.
  // the console the server serves) may call it too. Only with credentials: without them, a
  // page of a rebound DNS name (evil.example resolving to 127.0.0.1) would count as the
  // server's own.
  explicit CorsPolicy(std::vector<std::string> origins = {}, bool trust_own_origin = false);

  // Whether a page of `origin` may call a server reached as `host` (the Host header).
  bool allows(const std::string& origin, const std::string& host) const;

 private:
  std::vector<std::string> origins_;  // lower case, no trailing slash
  bool trust_own_origin_;
};

// Whether a Host header names the loopback interface (localhost, 127.0.0.1, [::1], with or
// without a port). A server without credentials answers only such requests, so that a page
// of a rebound DNS name cannot read it through the browser either.
bool is_loopback_host_header(const std::string& host);

// Whether `origin` is http://localhost, http://127.0.0.1 or http://[::1], on any port.
bool is_loopback_origin(const std::string& origin);

}  // namespace tollgate::server

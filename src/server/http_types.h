// The request and response values handlers see, independent of the HTTP library.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/identity.h"
#include "tollgate/json.h"

namespace tollgate::server {

struct HttpRequest {
  std::string method;  // upper case: GET, POST, ...
  std::string path;    // percent-decoded, without the query string
  std::multimap<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::vector<std::string> params;  // path parameters captured by the route, in order
  // Who is asking: set by the router's auth step before a handler runs (Identity::local()
  // on a server without authentication); empty (no id, no roles) until then.
  Identity identity;

  // The first value of a query parameter, or nullopt.
  std::optional<std::string> query_value(const std::string& name) const;
  std::vector<std::string> query_values(const std::string& name) const;
  std::string header(const std::string& lower_name) const;
  // The body parsed as JSON; an empty body is `empty_value`. Malformed JSON, or JSON nested
  // deeper than kMaxJsonDepth (256) levels, throws Error(kInvalidArgument) saying which and
  // where; a deep body is refused while parsing, before any deep tree exists.
  Json json_body(const Json& empty_value = Json::object()) const;
};

class HttpResponse;

// The body of a streamed (chunked) response, pulled by the connection. All methods but
// set_waker are called on the connection's strand, never concurrently.
class StreamBody {
 public:
  virtual ~StreamBody() = default;
  enum class Poll { kData, kWait, kDone };
  // Called before the response head is written, and again after each wake until it returns
  // true. It may rewrite `head` (status, headers, or turn it into a plain response by
  // setting head.body and clearing head.stream). It runs on an I/O thread, so it must not
  // read the stores: when the head needs them, it returns true with head.settle set.
  virtual bool head_ready(HttpResponse& head) = 0;
  // Appends bytes to send to `out`. kWait: nothing more now, wait for a wake; kDone: the
  // response ends after `out`.
  virtual Poll poll(std::string& out) = 0;
  // `wake` may be called from any thread, any number of times, until the body is destroyed.
  virtual void set_waker(std::function<void()> wake) = 0;
  // The client went away before kDone.
  virtual void on_disconnect() {}
  // Bytes to send when nothing was sent for a while (empty: no heartbeats).
  virtual std::string heartbeat() const { return {}; }
};

class HttpResponse {
 public:
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Set: the body instead of `body`, sent from where it is kept (a run's result, which every
  // answer waiting for the run shares), never copied.
  std::shared_ptr<const std::string> shared_body;
  std::shared_ptr<StreamBody> stream;  // set: a chunked streamed response
  // Set by a stream's head_ready() when the head is decided by what the stores hold: the
  // server calls it on its handler pool and sends the response it returns (plain or streamed)
  // instead; nullopt means not ready after all, and head_ready() is asked again on the next
  // wake.
  std::function<std::optional<HttpResponse>()> settle;

  static HttpResponse json(const Json& value, int status = 200);
  // A JSON body already written as text.
  static HttpResponse json_text(std::string text, int status = 200);
  // json_text of text kept elsewhere: sent from there (shared_body).
  static HttpResponse json_shared(std::shared_ptr<const std::string> text, int status = 200);
  static HttpResponse error(int status, const std::string& message);
  static HttpResponse empty(int status);
  void add_header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
  }
};

using Handler = std::function<HttpResponse(HttpRequest&)>;

}  // namespace tollgate::server

// A minimal HTTP POST over libcurl, for the model providers. One call = one request; no state is
// kept between calls, so concurrent calls from several threads are safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tollgate::models {

struct HttpRequest {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::chrono::milliseconds timeout{120000};
  std::chrono::milliseconds connect_timeout{10000};
};

struct HttpResponse {
  long status = 0;                             // 0 when the transport failed
  std::map<std::string, std::string> headers;  // names lower-cased; last value wins
  std::string body;             // error bodies always; success bodies unless streamed
  std::string transport_error;  // set when no complete response arrived
  bool timed_out = false;
  bool streamed_any = false;  // on_data received at least one piece
};

// Receives body pieces of a 2xx response as they arrive. Throwing from it aborts the transfer
// and the exception propagates out of http_post.
using HttpDataSink = std::function<void(std::string_view piece)>;

// Sends a POST. With `on_data`, successful bodies go to the sink instead of HttpResponse::body;
// non-2xx bodies are always collected in HttpResponse::body. Never throws for network failures:
// they are reported in transport_error.
HttpResponse http_post(const HttpRequest& request, const HttpDataSink* on_data = nullptr);

}  // namespace tollgate::models

// A fake HTTP server on 127.0.0.1 for the provider tests: replays scripted responses in order
// (one per request, body written in the given pieces so streams arrive in parts) and records
// every request so tests assert what was sent. One thread serves one connection at a time;
// requests must carry Content-Length (curl's POSTs do). Thread-safe: enqueue/requests may be
// called while the server runs.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tollgate/json.h"

namespace tollgate::testing {

struct RecordedRequest {
  std::string method;
  std::string target;                          // path and query
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  Json json() const { return Json::parse(body); }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

struct ScriptedResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> body_parts;
  std::chrono::milliseconds delay{0};  // waits this long before answering

  static ScriptedResponse json(int status, const Json& body);
  // An SSE body: each event is sent as its own piece, already framed by the caller
  // ("event: x\ndata: {...}\n\n") or, for plain data events, given as the data alone.
  static ScriptedResponse sse(const std::vector<std::string>& data_events);
  static ScriptedResponse raw_sse(std::vector<std::string> framed_pieces);
  static ScriptedResponse ndjson(const std::vector<Json>& lines);
};

class FakeHttpServer {
 public:
  FakeHttpServer();
  ~FakeHttpServer();
  FakeHttpServer(const FakeHttpServer&) = delete;
  FakeHttpServer& operator=(const FakeHttpServer&) = delete;

  void enqueue(ScriptedResponse response);
  std::string base_url() const;
  std::vector<RecordedRequest> requests() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tollgate::testing

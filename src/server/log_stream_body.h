// LogStreamBody: streams an EventLog as SSE from a cursor, optionally filtered, holding the
// response head back until a gate opens (so a run refused at its start answers with an
// HTTP error instead of an empty stream).
#pragma once

#include <functional>
#include <memory>

#include "server/event_log.h"
#include "server/http_types.h"

namespace tollgate::server {

class LogStreamBody : public StreamBody {
 public:
  struct Options {
    std::size_t start = 0;                         // first entry index to send
    std::function<bool(const LogEntry&)> filter;   // empty: every entry
    std::function<bool(HttpResponse&)> head_gate;  // empty: head at once
    std::function<void()> on_disconnect;
    bool heartbeats = true;
    // The body streams no entry and only waits for the log's end (a /runs/wait answer): it is
    // woken when the log closes, not at every append.
    bool until_close_only = false;
  };
  LogStreamBody(std::shared_ptr<EventLog> log, Options options);
  ~LogStreamBody() override;

  bool head_ready(HttpResponse& head) override;
  Poll poll(std::string& out) override;
  void set_waker(std::function<void()> wake) override;
  void on_disconnect() override;
  std::string heartbeat() const override;

 private:
  std::shared_ptr<EventLog> log_;
  Options options_;
  std::size_t cursor_;
  int token_ = 0;
};

}  // namespace tollgate::server

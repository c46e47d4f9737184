// The HTTP/1.1 front end: accepts connections on a small I/O thread pool, parses requests
// (keep-alive, body limit), adds CORS headers, dispatches to a Router and writes plain or
// streamed (chunked) responses. Handlers run on the I/O threads and must not block; long
// work (runs) happens elsewhere and reaches a connection through a StreamBody.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "server/router.h"

namespace tollgate::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::size_t threads = 2;
  std::size_t max_body_bytes = 4 << 20;
  int heartbeat_seconds = 10;
};

// Thread-safety: start() once, stop() from any thread (idempotent). The router must outlive
// the server.
class HttpServer {
 public:
  HttpServer(const Router& router, HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void start();  // binds and listens; throws Error(kUnavailable) if the address is taken
  void stop();
  std::uint16_t port() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Decodes %XX escapes (and '+' as space when `plus_as_space`).
std::string percent_decode(const std::string& text, bool plus_as_space = false);

}  // namespace tollgate::server

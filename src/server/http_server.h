// The HTTP/1.1 front end: accepts connections on a small I/O thread pool, parses requests
// (keep-alive, limits), adds CORS headers, dispatches to a Router and writes plain or
// streamed (chunked) responses. The I/O threads only move bytes: the router's handlers run on
// a pool of their own (they read and write the stores), and a streamed body is polled on the
// I/O threads, so it must not block; long work (runs) happens elsewhere and reaches a
// connection through a StreamBody.
//
// Nothing a client sends ends the process: a request over a limit or badly framed is answered
// (413, 414, 431, 400) and its connection closed; whatever a handler or a streamed body throws
// becomes a 500 (or, once a stream has started, the end of the connection) and is logged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "server/cors_policy.h"
#include "server/request_reader.h"
#include "server/router.h"

namespace tollgate::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::size_t threads = 1;          // I/O threads
  std::size_t handler_threads = 4;  // threads running the router's handlers
  RequestLimits limits;
  int heartbeat_seconds = 10;
  CorsPolicy cors;  // which pages may call (default: loopback origins)
  // Refuse (403) requests whose Host header is not a loopback name: for a server without
  // auth, so that a page of a rebound DNS name cannot use the browser to reach it.
  bool loopback_hosts_only = false;
};

// Thread-safety: start() once, stop() from any thread (idempotent). The router must outlive
// the server.
class HttpServer {
 public:
  HttpServer(const Router& router, HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens (port() is known from then on; connections wait in the backlog);
  // throws Error(kUnavailable) if the address is taken.
  void bind();
  void start();  // binds if not yet bound, and serves
  void stop();
  std::uint16_t port() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tollgate::server

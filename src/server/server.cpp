#include "tollgate/server.h"

#include <condition_variable>
#include <mutex>

#include "server/api_service.h"
#include "server/auth.h"
#include "server/http_server.h"
#include "tollgate/error.h"

namespace tollgate {

void GraphRegistry::add(std::string graph_id, GraphFactory factory, std::string description,
                        ServedGraphOptions options) {
  entries_[std::move(graph_id)] = Entry{std::move(factory), std::move(description), options};
}

void GraphRegistry::add(std::string graph_id, std::shared_ptr<const CompiledGraph> graph,
                        std::string description, ServedGraphOptions options) {
  add(
      std::move(graph_id), [graph = std::move(graph)](std::shared_ptr<Saver>) { return graph; },
      std::move(description), options);
}

struct Server::Impl {
  ServerOptions options;
  GraphRegistry registry;
  std::unique_ptr<server::ApiService> api;
  std::unique_ptr<server::HttpServer> http;

  std::mutex mutex;  // guards running
  std::condition_variable stopped;
  bool running = false;
};

Server::Server(ServerOptions options, GraphRegistry graphs) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->registry = std::move(graphs);
}

Server::~Server() {
  stop();
}

void Server::start() {
  Impl& s = *impl_;
  if (!s.options.auth.enabled() && !s.options.allow_insecure_no_auth &&
      !server::is_loopback_host(s.options.host)) {
    throw Error::InvalidArgument(
        "host " + s.options.host +
        ": not a loopback address, and no auth is configured: anyone who can reach it could "
        "read every thread and decide every review. Configure auth (users or jwt; see "
        "docs/security.md), listen on 127.0.0.1, or accept the risk with --insecure-no-auth "
        "(ServerOptions::allow_insecure_no_auth)");
  }
  s.api = std::make_unique<server::ApiService>(s.options, s.registry);
  server::HttpServerOptions http_options;
  http_options.host = s.options.host;
  http_options.port = s.options.port;
  http_options.threads = s.options.io_threads;
  http_options.handler_threads = s.options.handler_threads;
  http_options.limits.max_body_bytes = s.options.max_body_bytes;
  http_options.heartbeat_seconds = s.options.heartbeat_seconds;
  http_options.cors = server::CorsPolicy(s.options.auth.cors_origins, s.options.auth.enabled());
  http_options.loopback_hosts_only =
      !s.options.auth.enabled() && server::is_loopback_host(s.options.host);
  s.http = std::make_unique<server::HttpServer>(s.api->router(), http_options);
  // Bound first: a replica is named by the port it serves on (ReplicaOptions::id). Requests
  // wait in the backlog until the runs a previous process left are recovered.
  s.http->bind();
  s.api->start_runs(s.http->port());
  s.http->start();
  if (s.options.public_url.empty()) {
    const bool ipv6 = s.options.host.find(':') != std::string::npos;
    s.api->set_public_url("http://" + (ipv6 ? "[" + s.options.host + "]" : s.options.host) + ":" +
                          std::to_string(s.http->port()));
  }
  std::lock_guard lock(s.mutex);
  s.running = true;
}

void Server::stop() {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.mutex);
    if (!s.running) return;
    s.running = false;
  }
  if (s.http) s.http->stop();
  if (s.api) s.api->stop_runs();
  s.stopped.notify_all();
}

void Server::wait() {
  std::unique_lock lock(impl_->mutex);
  impl_->stopped.wait(lock, [this] { return !impl_->running; });
}

std::uint16_t Server::port() const {
  return impl_->http ? impl_->http->port() : 0;
}

}  // namespace tollgate

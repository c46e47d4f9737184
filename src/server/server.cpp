#include "tollgate/server.h"

#include <condition_variable>
#include <mutex>

#include "server/static_files.h"
#include "server/api.h"
#include "server/audit_log.h"
#include "server/http_server.h"
#include "server/ids.h"
#include "server/run_manager.h"
#include "server/sqlite_store.h"
#include "server/thread_streams.h"
#include "tollgate/error.h"

namespace tollgate {

void GraphRegistry::add(std::string graph_id, GraphFactory factory, std::string description) {
  entries_[std::move(graph_id)] = Entry{std::move(factory), std::move(description)};
}

void GraphRegistry::add(std::string graph_id, std::shared_ptr<const CompiledGraph> graph,
                        std::string description) {
  add(
      std::move(graph_id), [graph = std::move(graph)](std::shared_ptr<Saver>) { return graph; },
      std::move(description));
}

struct Server::Impl {
  ServerOptions options;
  GraphRegistry registry;
  std::unique_ptr<server::SqliteStore> store;
  std::unique_ptr<server::AuditLog> audit;
  std::unique_ptr<server::ThreadStreams> streams;
  std::unique_ptr<server::RunManager> runs;
  std::unique_ptr<server::ApiContext> api;
  server::Router router;
  std::unique_ptr<server::HttpServer> http;

  std::mutex mutex;  // guards running
  std::condition_variable stopped;
  bool running = false;

  void register_system_assistants() {
    for (const auto& [graph_id, entry] : registry.entries()) {
      std::string id = server::system_assistant_id(graph_id);
      auto existing = store->get_assistant(id);
      server::AssistantRecord a = existing.value_or(server::AssistantRecord{});
      if (!existing) a.created_at = a.updated_at = server::now_millis();
      a.assistant_id = id;
      a.graph_id = graph_id;
      a.name = graph_id;
      a.description =
          entry.description.empty() ? std::nullopt : std::optional<std::string>(entry.description);
      a.metadata = Json{{"created_by", "system"}};
      store->put_assistant(a);
    }
  }
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
  if (!s.options.checkpointer) throw Error::InvalidArgument("checkpointer: required");
  s.store = std::make_unique<server::SqliteStore>(s.options.db_path);
  s.streams = std::make_unique<server::ThreadStreams>(*s.store);
  s.audit = std::make_unique<server::AuditLog>(s.options.db_path);
  s.audit->settle_lost("the server stopped before the run carrying this decision ended");
  server::GraphMap graphs;
  for (const auto& [graph_id, entry] : s.registry.entries()) {
    auto graph = entry.factory(s.options.checkpointer);
    if (!graph)
      throw Error::InvalidArgument("graph " + graph_id + ": the factory returned no graph");
    graphs.emplace(graph_id, std::move(graph));
  }
  s.register_system_assistants();
  s.runs = std::make_unique<server::RunManager>(*s.store, *s.streams, std::move(graphs),
                                                s.options.run_workers);
  s.api = std::make_unique<server::ApiContext>(
      server::ApiContext{*s.store, *s.runs, *s.streams, s.options.checkpointer, s.audit.get()});
  s.runs->set_audit_log(s.audit.get());
  server::add_meta_routes(s.router, *s.api);
  server::add_assistant_routes(s.router, *s.api);
  server::add_thread_routes(s.router, *s.api);
  server::add_run_routes(s.router, *s.api);
  server::add_protocol_routes(s.router, *s.api);
  server::add_audit_routes(s.router, *s.api);
  if (!s.options.console_dir.empty()) {
    s.router.set_get_fallback(server::make_console_handler(s.options.console_dir));
  }
  s.runs->start();
  server::HttpServerOptions http_options;
  http_options.host = s.options.host;
  http_options.port = s.options.port;
  http_options.threads = s.options.io_threads;
  http_options.max_body_bytes = s.options.max_body_bytes;
  http_options.heartbeat_seconds = s.options.heartbeat_seconds;
  s.http = std::make_unique<server::HttpServer>(s.router, http_options);
  s.http->start();
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
  if (s.runs) s.runs->stop();
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

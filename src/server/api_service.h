// The Agent Server without its listener: the stores, the run manager and the routes, opened
// from ServerOptions. tollgate::Server puts an HttpServer in front of it; an in-process driver
// (the fuzz targets) hands its router requests directly.
#pragma once

#include <memory>

#include "server/router.h"
#include "server/storage.h"
#include "tollgate/server.h"

namespace tollgate::server {

// Thread-safety: construct, then start_runs() once; router() may then be used from any
// thread. The destructor stops the runs.
class ApiService {
 public:
  // Opens the database (creating or migrating its tables), settles what a previous process
  // left unfinished, builds the graphs, registers their system assistants and the routes.
  // Runs are accepted but none executes before start_runs(). Throws Error on failure. The
  // database is options.db_path, a path or URL (storage.h).
  ApiService(const ServerOptions& options, const GraphRegistry& registry);
  // The same on storage opened by the caller (every part set).
  ApiService(const ServerOptions& options, const GraphRegistry& registry, Storage storage);
  ~ApiService();
  ApiService(const ApiService&) = delete;
  ApiService& operator=(const ApiService&) = delete;

  // Recovers runs a previous process left and starts the run workers. `port`: where the server
  // listens (names this replica when several share the database and ReplicaOptions::id is
  // empty; 0: a new name).
  void start_runs(std::uint16_t port = 0);
  void stop_runs();
  const Router& router() const;
  // The address notifications link the console by (ServerOptions::public_url, else where the
  // server listens once it is bound).
  void set_public_url(std::string url);

  struct Parts;

 private:
  // The authenticator (or the check that no auth is acceptable) and the checkpointer's check.
  void set_up_auth(const ServerOptions& options);
  void build(const ServerOptions& options, const GraphRegistry& registry, Storage storage);

  std::unique_ptr<Parts> parts_;
};

}  // namespace tollgate::server

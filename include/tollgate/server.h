// The Agent Server: serves registered graphs over the LangGraph Agent Server HTTP API
// (assistants, threads, runs, SSE streams, the v2 thread protocol) so that the official
// @langchain/langgraph-sdk client and its useStream hooks work against it unchanged.
//
//   GraphRegistry graphs;
//   graphs.add("agent", [](std::shared_ptr<Saver> saver) { return build_agent(saver); });
//   Server server({.port = 2024, .db_path = "./tollgate.db", .checkpointer = saver},
//                 std::move(graphs));
//   server.start();            // returns once listening; server.port() is the bound port
//   server.wait();             // until stop() (e.g. from a signal handler thread)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tollgate/checkpoint.h"
#include "tollgate/graph.h"

namespace tollgate {

// Builds a graph compiled with the server's checkpointer. Called once, at server start.
using GraphFactory = std::function<std::shared_ptr<const CompiledGraph>(std::shared_ptr<Saver>)>;

// The graphs a server serves, by graph id. Each gets a system assistant whose id is
// uuid5(graph_id) like the reference server's. Not thread-safe; fill it before the server
// starts, the server then owns it.
class GraphRegistry {
 public:
  // Registers a graph built from the server's checkpointer (the usual way).
  void add(std::string graph_id, GraphFactory factory, std::string description = "");
  // Registers an already compiled graph; it must carry its own checkpointer, and that
  // checkpointer should be the server's so the server can read the thread's state.
  void add(std::string graph_id, std::shared_ptr<const CompiledGraph> graph,
           std::string description = "");

  struct Entry {
    GraphFactory factory;
    std::string description;
  };
  const std::map<std::string, Entry, std::less<>>& entries() const { return entries_; }

 private:
  std::map<std::string, Entry, std::less<>> entries_;
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 2024;  // 0: pick a free port (see Server::port())
  // SQLite file of the server's tables (assistants, threads, runs, stream events). The
  // checkpointer normally uses the same file; ":memory:" keeps everything in memory.
  std::string db_path = "./tollgate.db";
  // Where the graphs keep their checkpoints. Required.
  std::shared_ptr<Saver> checkpointer;
  std::size_t io_threads = 2;            // network I/O; runs never execute here
  std::size_t run_workers = 4;           // runs executing concurrently (one per thread at most)
  std::size_t max_body_bytes = 4 << 20;  // larger request bodies get 413
  int heartbeat_seconds = 10;            // ": heartbeat" on open SSE streams; 0 disables
  // Folder of the built review console (web/dist), served at "/". Empty: no console. When the
  // folder has no index.html, "/" answers with a page saying how to build it.
  std::string console_dir;
};

// An Agent Server instance. Thread-safety: start/stop/wait/port may be called from any
// thread; stop() is idempotent. The destructor stops the server.
class Server {
 public:
  Server(ServerOptions options, GraphRegistry graphs);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Opens the database (creating or migrating its tables), recovers runs interrupted by a
  // previous process's death, binds the socket and starts serving. Throws Error on failure.
  void start();
  void stop();
  void wait();
  std::uint16_t port() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tollgate

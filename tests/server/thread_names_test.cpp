// The server's threads carry names (`top -H`, `ps -L`, perf and gdb show them), so that an
// operator can tell the I/O threads, the request handlers, the run workers and the WAL
// checkpointer apart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "server/http_server.h"
#include "server/http_test_client.h"
#include "server/router.h"
#include "tollgate/memory_saver.h"
#include "tollgate/server.h"

namespace tollgate::server {
namespace {

// How many of this process's threads are named `name` now.
int threads_named(const std::string& name) {
  int count = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) ++count;
  }
  return count;
}

// Polls (no timing is asserted) until `count` threads are named `name`; how many are.
int eventually_named(const std::string& name, int count) {
  int named = 0;
  for (int i = 0; i < 2000; ++i) {
    named = threads_named(name);
    if (named == count) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return named;
}

TEST(ThreadNames, TheHttpServersIoThreadsAndTheHandlerThatServedARequestAreNamed) {
  Router router;
  router.add("GET", "/ok", [](HttpRequest&) { return HttpResponse::json({{"ok", true}}); });
  HttpServerOptions options;
  options.threads = 2;
  options.handler_threads = 1;
  options.heartbeat_seconds = 0;
  HttpServer server(router, options);
  server.start();
  EXPECT_EQ(eventually_named("tg-http-io", 2), 2);
  // A handler thread is named at its first job.
  EXPECT_EQ(testing::http_call(server.port(), "GET", "/ok").status, 200);
  EXPECT_EQ(threads_named("tg-http-handler"), 1);
}

TEST(ThreadNames, TheRunWorkersAndTheWalCheckpointerAreNamed) {
  const std::filesystem::path db = std::filesystem::temp_directory_path() /
                                   ("tollgate_thread_names_" + std::to_string(::getpid()) + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
  {
    ServerOptions options;
    options.port = 0;
    options.db_path = db.string();
    options.checkpointer = make_memory_saver();
    options.heartbeat_seconds = 0;
    options.run_workers = 3;
    Server server(options, GraphRegistry{});
    server.start();
    EXPECT_EQ(eventually_named("tg-run", 3), 3);
    EXPECT_EQ(eventually_named("tg-wal", 1), 1);
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
}

}  // namespace
}  // namespace tollgate::server

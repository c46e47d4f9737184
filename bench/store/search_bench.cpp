// `tollgate_search_bench [--threads N] [--db FILE]`: the latency of POST /threads/search's
// store queries (ServerStore::search_threads + count_threads) over N threads in a SQLite file:
// the console's inbox (interrupted, oldest update first, 100), its thread list (newest update
// first, 50), a user's own threads, an exact metadata filter. Prints one JSON line per query
// with the median and p95 of 50 repetitions. Report only; not a test.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "server/sql_store.h"

using namespace tollgate;
using namespace tollgate::server;

namespace {

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

void fill(SqliteStore& store, int threads) {
  for (int i = 0; i < threads; ++i) {
    ThreadRecord t;
    char id[40];
    std::snprintf(id, sizeof id, "00000000-0000-7000-8000-%012d", i);
    t.thread_id = id;
    t.created_at = 1'700'000'000'000 + i;
    t.updated_at = t.created_at + (i * 7919) % threads;
    t.metadata = {{"owner", "user" + std::to_string(i % 100)},
                  {"graph_id", i % 2 ? "agent" : "deep"},
                  {"assistant_id", "a" + std::to_string(i % 2)}};
    t.status = i % 10 == 0 ? "interrupted" : (i % 17 == 0 ? "error" : "idle");
    t.values = {{"messages", Json::array({{{"type", "human"}, {"content", "hello"}}})}};
    if (t.status == "interrupted") t.interrupts = {{"task", Json::array({{{"value", "review"}}})}};
    store.create_thread(t);
  }
}

void measure(SqliteStore& store, const std::string& name, const ThreadFilter& filter,
             const ThreadPage& page) {
  std::vector<double> ms;
  std::size_t rows = 0, total = 0;
  for (int rep = 0; rep < 50; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    rows = store.search_threads(filter, page).size();
    total = store.count_threads(filter);
    ms.push_back(elapsed_ms(start));
  }
  std::sort(ms.begin(), ms.end());
  std::cout << Json{{"query", name}, {"rows", rows}, {"total", total},
                    {"median_ms", ms[ms.size() / 2]}, {"p95_ms", ms[ms.size() * 95 / 100]}}
                   .dump()
            << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 100000;
  std::string db = (std::filesystem::temp_directory_path() / "tollgate_search_bench.db").string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--threads") threads = std::stoi(argv[i + 1]);
    if (flag == "--db") db = argv[i + 1];
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  SqliteStore store(db);
  const auto start = std::chrono::steady_clock::now();
  fill(store, threads);
  std::cout << Json{{"threads", threads}, {"fill_s", elapsed_ms(start) / 1000}}.dump() << std::endl;

  ThreadFilter inbox;
  inbox.status = "interrupted";
  measure(store, "inbox: interrupted by updated_at asc, 100", inbox, {"updated_at", true, 100, 0});
  measure(store, "list: updated_at desc, 50", {}, {"updated_at", false, 50, 0});
  measure(store, "default: created_at desc, 10", {}, {});
  ThreadFilter own;
  own.visible = ThreadVisibility{false, "user7", true};
  measure(store, "a reviewer's own and waiting threads, updated_at desc, 50", own,
          {"updated_at", false, 50, 0});
  ThreadFilter reviewer_inbox = inbox;
  reviewer_inbox.visible = own.visible;
  measure(store, "a reviewer's inbox, 100", reviewer_inbox, {"updated_at", true, 100, 0});
  ThreadFilter by_graph;
  by_graph.metadata = {{"graph_id", "agent"}};
  measure(store, "metadata graph_id (no index: a scan), 10", by_graph, {});
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  return 0;
}

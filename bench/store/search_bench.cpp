// `tollgate_search_bench [--threads N] [--db FILE] [--keep] [--reuse]`: the latency of POST
// /threads/search's store queries (ServerStore::search_threads + count_threads) over N threads
// in a SQLite file: the console's inbox (interrupted, oldest update first, 100), its thread list
// (newest update first, 50), a user's own threads, an exact metadata filter. Prints one JSON
// line per query with the median and p95 wall time of 50 repetitions and the median CPU time.
// Report only; not a test. --keep leaves the file (to inspect it with the sqlite3 CLI: EXPLAIN
// QUERY PLAN, dbstat); --reuse opens a file kept before instead of filling a new one (opening
// migrates an older schema: the time is printed as open_s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
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

// CPU time of this thread: on a loaded machine a query's wall time is mostly waiting for a core.
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1000 + static_cast<double>(t.tv_nsec) / 1e6;
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
    t.status = i % 10 == 0   ? ThreadStatus::kInterrupted
               : i % 17 == 0 ? ThreadStatus::kError
                             : ThreadStatus::kIdle;
    t.values = {{"messages", Json::array({{{"type", "human"}, {"content", "hello"}}})}};
    if (t.status == ThreadStatus::kInterrupted)
      t.interrupts = {{"task", Json::array({{{"value", "review"}}})}};
    store.create_thread(t);
  }
}

void measure(SqliteStore& store, const std::string& name, const ThreadFilter& filter,
             const ThreadPage& page) {
  std::vector<double> ms, cpu_ms;
  std::size_t rows = 0, total = 0;
  for (int rep = 0; rep < 50; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = thread_cpu_ms();
    rows = store.search_threads(filter, page).size();
    total = store.count_threads(filter);
    ms.push_back(elapsed_ms(start));
    cpu_ms.push_back(thread_cpu_ms() - cpu_start);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(cpu_ms.begin(), cpu_ms.end());
  std::cout << Json{{"query", name},
                    {"rows", rows},
                    {"total", total},
                    {"median_ms", ms[ms.size() / 2]},
                    {"p95_ms", ms[ms.size() * 95 / 100]},
                    {"cpu_median_ms", cpu_ms[cpu_ms.size() / 2]}}
                   .dump()
            << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 100000;
  std::string db = (std::filesystem::temp_directory_path() / "tollgate_search_bench.db").string();
  bool keep = false, reuse = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--keep") keep = true;
    if (flag == "--reuse") reuse = keep = true;
    if (i + 1 == argc) break;
    if (flag == "--threads") threads = std::stoi(argv[i + 1]);
    if (flag == "--db") db = argv[i + 1];
  }
  const auto remove_db = [&] {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
  };
  if (!reuse) remove_db();
  const auto opening = std::chrono::steady_clock::now();
  SqliteStore store(db);
  if (reuse) {
    std::cout << Json{{"reused", db}, {"schema", store.schema_version()},
                      {"open_s", elapsed_ms(opening) / 1000}}
                     .dump()
              << std::endl;
  } else {
    const auto start = std::chrono::steady_clock::now();
    fill(store, threads);
    std::cout << Json{{"threads", threads}, {"fill_s", elapsed_ms(start) / 1000}}.dump()
              << std::endl;
  }

  ThreadFilter inbox;
  inbox.status = ThreadStatus::kInterrupted;
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
  if (!keep) remove_db();
  return 0;
}

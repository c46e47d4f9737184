// Shared pieces of the benchmark program: command-line options, clocks, statistics, one JSON
// line per measurement, savers by name with their byte counters, and the deterministic
// message text of the LangGraph.js peer harness.
//
// Output contract (read by bench/report.py): every measurement prints ONE JSON line on stdout
//   {"impl":"tollgate","workload","saver","n","ops","seconds","ops_per_s","p50_ms","p99_ms",
//    "cpu_ms_per_op","rss_mb","load1", ...workload-specific fields}
// with the same field names as the peer's bench.mjs, so the two sides line up. Progress and
// diagnostics go to stderr. Benchmarks report; they never fail on a figure.
//
// Thread-safety: everything here is meant for the benchmark's main thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tollgate/checkpoint.h"
#include "tollgate/graph.h"
#include "tollgate/json.h"
#include "tollgate/saver_stats.h"

namespace tollgate::bench {

struct Options {
  std::string workload = "steps";
  std::string saver = "none";
  std::optional<long> n;       // workload-specific size (see bench/README.md)
  std::optional<int> reps;     // timed repetitions; each reports one mean, we keep medians
  std::optional<long> warmup;  // untimed operations (or runs) before the timed ones
  std::optional<long> cycles;  // fanout: interrupt/resume cycles per repetition
  std::string durability;      // "" = the runtime's default (sync)
  std::size_t payload = 200;   // characters of text per generated message
  std::string datadir = "bench-data";
  double budget_seconds = 300;  // long_thread: stop growing the thread after this long
  std::vector<long> sizes;      // long_thread: message counts to report at
  long window = 25;             // long_thread: timed turns reported at each size
  bool keep = false;            // keep SQLite files (and PostgreSQL schemas)
  std::string pg_url;           // --saver postgres: the server (--pg-url, or TOLLGATE_BENCH_PG_URL)
  bool pg_async_commit = false;  // --pg-async-commit: PostgresSaverOptions::synchronous_commit off
};

// Parses argv; throws Error(kInvalidArgument) naming the bad flag.
Options parse_options(int argc, char** argv);
std::string usage();

// Durability from --durability (sync|async|exit); kSync when not given.
Durability durability_of(const Options& options);

// ------------------------------------------------------------------------------ clocks

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}
// CPU time (user + system) of the whole process, all threads, in seconds.
double process_cpu_seconds();
// Resident set size of this process in MiB.
double rss_mb();
// 1-minute load average (how busy the shared machine was).
double load1();

// ------------------------------------------------------------------------------ statistics

struct Summary {
  double p50 = 0, p99 = 0, mean = 0, max = 0;
};
// Percentiles by the nearest-rank method (the peer's definition). Empty input: all zeros.
Summary summarize(std::vector<double> samples);
double median(std::vector<double> samples);

// ------------------------------------------------------------------------------ output

// Prints `record` as one JSON line on stdout, adding impl, rss_mb and load1, and rounding
// floating-point fields to 3 decimals.
void emit(Json record);
// A progress line on stderr.
void log(const std::string& message);

// ------------------------------------------------------------------------------ savers

// The saver a workload runs against, chosen by --saver none|memory|sqlite|postgres. Owns the
// SQLite file or the PostgreSQL schema (removed on destruction unless --keep).
class SaverHandle {
 public:
  SaverHandle(const Options& options, std::string_view label);
  ~SaverHandle();
  SaverHandle(const SaverHandle&) = delete;
  SaverHandle& operator=(const SaverHandle&) = delete;

  // What to give CompileOptions::checkpointer; null for "none".
  std::shared_ptr<Saver> saver() const { return saver_; }
  // Whether file_bytes() measures something (a SQLite file or a PostgreSQL schema).
  bool is_file() const { return !file_.empty() || !schema_.empty(); }
  // What the saver has stored so far (its own counters: encoded bytes, checkpoints, writes).
  SaverStats stats() const;
  // SQLite: size of the database file after folding the WAL into it (like the peer's
  // `PRAGMA wal_checkpoint(TRUNCATE)` + stat); PostgreSQL: pg_total_relation_size of the
  // schema's tables (heap, TOAST and indexes, as the peer counts). 0 for the other savers.
  std::uint64_t file_bytes() const;

 private:
  std::string file_;
  std::string pg_url_, schema_;
  bool keep_ = false;
  std::shared_ptr<Saver> saver_;
};

// Throws Error(kInvalidArgument) naming --saver when the workload has no checkpointer.
void require_saver(const Options& options);
// Compile options with the handle's saver as the checkpointer.
CompileOptions compile_options(const SaverHandle& handle);
// A Command answering the single pending interrupt.
Command resume_with(Json value);

// ------------------------------------------------------------------------------ payloads

// Deterministic pseudo-random lowercase words (the peer's LCG), so message sizes and their
// compressibility match the peer harness.
std::string payload_text(std::uint64_t seed, std::size_t length);

}  // namespace tollgate::bench

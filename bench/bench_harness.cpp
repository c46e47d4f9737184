#include "bench_harness.h"

#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "sql/postgres_connection.h"
#include "tollgate/error.h"
#include "tollgate/memory_saver.h"
#include "tollgate/postgres_saver.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate::bench {

// ------------------------------------------------------------------------------ options

std::string usage() {
  return "usage: tollgate_bench --workload chain|steps|hitl_cycle|fanout|long_thread|\n"
         "                  hitl_agent|hitl_agent_thread\n"
         "         [--saver none|memory|sqlite|postgres] [--pg-url URL] [--pg-async-commit]\n"
         "         [--n N] [--reps R]\n"
         "         [--warmup W] [--cycles C]\n"
         "         [--durability sync|async|exit] [--payload B] [--datadir DIR]\n"
         "         [--sizes 10,100,1000] [--window TURNS] [--budget SECONDS] [--keep]\n";
}

namespace {

long parse_long(std::string_view flag, const std::string& text) {
  try {
    std::size_t used = 0;
    long value = std::stol(text, &used);
    if (used == text.size() && value >= 0) return value;
  } catch (const std::exception&) {
  }
  throw Error::InvalidArgument(std::string(flag) + ": expected a non-negative integer, got '" +
                               text + "'");
}

std::vector<long> parse_sizes(const std::string& text) {
  std::vector<long> sizes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    long size = parse_long("--sizes", item);
    if (size == 0) throw Error::InvalidArgument("--sizes: sizes must be positive");
    sizes.push_back(size);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error::InvalidArgument(flag + ": missing value");
      return argv[++i];
    };
    if (flag == "--workload" || flag == "-w") {
      options.workload = value();
    } else if (flag == "--saver" || flag == "-s") {
      options.saver = value();
      if (options.saver != "none" && options.saver != "memory" && options.saver != "sqlite" &&
          options.saver != "postgres") {
        throw Error::InvalidArgument("--saver: expected none, memory, sqlite or postgres, got '" +
                                     options.saver + "'");
      }
    } else if (flag == "--pg-url") {
      options.pg_url = value();
    } else if (flag == "--pg-async-commit") {
      options.pg_async_commit = true;
    } else if (flag == "--n" || flag == "-n") {
      options.n = parse_long(flag, value());
    } else if (flag == "--reps") {
      options.reps = static_cast<int>(parse_long(flag, value()));
    } else if (flag == "--warmup") {
      options.warmup = parse_long(flag, value());
    } else if (flag == "--cycles") {
      options.cycles = parse_long(flag, value());
    } else if (flag == "--durability") {
      options.durability = value();
      durability_of(options);  // validates
    } else if (flag == "--payload") {
      options.payload = static_cast<std::size_t>(parse_long(flag, value()));
    } else if (flag == "--datadir") {
      options.datadir = value();
    } else if (flag == "--budget") {
      options.budget_seconds = static_cast<double>(parse_long(flag, value()));
    } else if (flag == "--sizes") {
      options.sizes = parse_sizes(value());
    } else if (flag == "--window") {
      options.window = std::max(1L, parse_long(flag, value()));
    } else if (flag == "--keep") {
      options.keep = true;
    } else {
      throw Error::InvalidArgument("unknown argument '" + flag + "'");
    }
  }
  if (options.pg_url.empty()) {
    if (const char* url = std::getenv("TOLLGATE_BENCH_PG_URL")) options.pg_url = url;
  }
  if (options.saver == "postgres" && options.pg_url.empty()) {
    throw Error::InvalidArgument(
        "--saver postgres needs --pg-url postgres://... (or "
        "TOLLGATE_BENCH_PG_URL); bench/run.sh --postgres starts one");
  }
  return options;
}

Durability durability_of(const Options& options) {
  if (options.durability.empty() || options.durability == "sync") return Durability::kSync;
  if (options.durability == "async") return Durability::kAsync;
  if (options.durability == "exit") return Durability::kExit;
  throw Error::InvalidArgument("--durability: expected sync, async or exit, got '" +
                               options.durability + "'");
}

// ------------------------------------------------------------------------------ clocks

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double rss_mb() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0;
  long pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return static_cast<double>(pages_resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) /
         1048576.0;
}

double load1() {
  double loads[1] = {0};
  return getloadavg(loads, 1) == 1 ? loads[0] : 0;
}

// ------------------------------------------------------------------------------ statistics

namespace {

double nearest_rank(const std::vector<double>& sorted, double percent) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<long>(std::ceil(percent / 100.0 * static_cast<double>(sorted.size())));
  rank = std::clamp(rank - 1, 0L, static_cast<long>(sorted.size()) - 1);
  return sorted[static_cast<std::size_t>(rank)];
}

}  // namespace

Summary summarize(std::vector<double> samples) {
  Summary summary;
  if (samples.empty()) return summary;
  std::sort(samples.begin(), samples.end());
  summary.p50 = nearest_rank(samples, 50);
  summary.p99 = nearest_rank(samples, 99);
  double total = 0;
  for (double sample : samples) total += sample;
  summary.mean = total / static_cast<double>(samples.size());
  summary.max = samples.back();
  return summary;
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const std::size_t mid = samples.size() / 2;
  return samples.size() % 2 == 1 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
}

// ------------------------------------------------------------------------------ output

namespace {

void round_floats(Json& value) {
  if (value.is_number_float()) {
    value = std::round(value.get<double>() * 1000.0) / 1000.0;
  } else if (value.is_structured()) {
    for (auto& item : value) round_floats(item);
  }
}

}  // namespace

void emit(Json record) {
  Json line = {{"impl", "tollgate"}};
  for (auto& [key, value] : record.items()) line[key] = std::move(value);
  line["rss_mb"] = rss_mb();
  line["load1"] = load1();
  round_floats(line);
  std::cout << line.dump() << std::endl;
}

void log(const std::string& message) {
  std::cerr << "[bench] " << message << std::endl;
}

// ------------------------------------------------------------------------------ savers

namespace {

void remove_database_files(const std::string& file) {
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::remove(file + suffix, ignored);
  }
}

}  // namespace

SaverHandle::SaverHandle(const Options& options, [[maybe_unused]] std::string_view label)
    : keep_(options.keep) {
  if (options.saver == "none") return;
  if (options.saver == "memory") {
    saver_ = make_memory_saver();
    return;
  }
  if (options.saver == "postgres") {
    pg_url_ = options.pg_url;
    schema_ = "bench_" + std::string(label) + "_" + std::to_string(getpid());
    sql::PostgresConnection(pg_url_).exec("DROP SCHEMA IF EXISTS " +
                                          sql::quote_identifier(schema_) + " CASCADE");
    saver_ = open_postgres_saver(
        pg_url_, {.schema = schema_, .synchronous_commit = !options.pg_async_commit});
    return;
  }
  std::filesystem::create_directories(options.datadir);
  file_ = options.datadir + "/" + std::string(label) + "_" + std::to_string(getpid()) + ".db";
  remove_database_files(file_);
  saver_ = open_sqlite_saver(file_);
}

SaverHandle::~SaverHandle() {
  saver_.reset();  // the last reference to the saver: closes the database before its files go
  if (!file_.empty() && !keep_) remove_database_files(file_);
  if (!schema_.empty() && !keep_) {
    try {
      sql::PostgresConnection(pg_url_).exec("DROP SCHEMA IF EXISTS " +
                                            sql::quote_identifier(schema_) + " CASCADE");
    } catch (const Error& e) {
      log(std::string("could not drop schema ") + schema_ + ": " + e.what());
    }
  }
}

SaverStats SaverHandle::stats() const {
  return saver_ ? saver_->stats() : SaverStats{};
}

std::uint64_t SaverHandle::file_bytes() const {
  if (!schema_.empty()) {
    sql::PostgresConnection connection(pg_url_);
    sql::PostgresStatement size(connection,
                                "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::int8 "
                                "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                                "WHERE n.nspname = $1 AND c.relkind = 'r'",
                                sql::PostgresStatement::kOnce);
    size.bind(1, schema_);
    return size.step() ? static_cast<std::uint64_t>(size.integer(0)) : 0;
  }
  if (file_.empty()) return 0;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(file_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 5000);
    sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
  }
  sqlite3_close(db);
  struct stat info {};
  if (::stat(file_.c_str(), &info) != 0) return 0;
  return static_cast<std::uint64_t>(info.st_size);
}

void require_saver(const Options& options) {
  if (options.saver == "none") {
    throw Error::InvalidArgument("--saver: " + options.workload +
                                 " needs a checkpointer (memory, sqlite or postgres)");
  }
}

CompileOptions compile_options(const SaverHandle& handle) {
  CompileOptions options;
  options.checkpointer = handle.saver();
  return options;
}

Command resume_with(Json value) {
  Command command;
  command.resume = std::move(value);
  return command;
}

// ------------------------------------------------------------------------------ payloads

std::string payload_text(std::uint64_t seed, std::size_t length) {
  auto x = static_cast<std::uint32_t>(seed * 2654435761ULL + 12345ULL);
  std::string out;
  out.reserve(length + 10);
  while (out.size() < length) {
    x = x * 1664525U + 1013904223U;
    const std::uint32_t word_length = 2 + x % 8;
    for (std::uint32_t i = 0; i < word_length; ++i) {
      x = x * 1664525U + 1013904223U;
      out.push_back(static_cast<char>('a' + (x >> 16) % 26));
    }
    out.push_back(' ');
  }
  out.resize(length);
  return out;
}

}  // namespace tollgate::bench

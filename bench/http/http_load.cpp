// tollgate_httpload: the HTTP benchmark's load generator. Drives human-in-the-loop cycles
// through any LangGraph Agent Server (ours or the JS reference server) over keep-alive
// connections and prints one JSON line per measurement (fields as in bench/report.py).
//
//   tollgate_httpload --port P --assistant agent --workload cycles --n 2000 --concurrency 8
//   tollgate_httpload --port P --assistant agent --workload pause --n 10000 --pid SERVER_PID
//   tollgate_httpload --ports P1,P2,P3 --pid PID1,PID2,PID3 --workload cycles --concurrency 8
//
// One cycle: POST /threads -> POST /threads/{id}/runs/wait with a human message (the agent
// proposes one gated tool call; the reply must carry __interrupt__) -> POST
// /threads/{id}/runs/wait with command.resume (approve; the reply must be the final state).
// `pause` stops after the interrupt and reports the server's RSS growth per paused thread.
// --thread-turns T plays T cycles on each thread before a new one is created (each a new human
// message on the same thread): a long thread's per-turn cost next to a new thread's. A client
// keeps its thread from the warm-up through every rep, so with T past --warmup + reps * n a
// warm-up of W cycles grows each client's thread to 4 * W / C messages (a human message, the
// proposal, the tool's reply and the answer a turn) before the timed turns:
//   tollgate_httpload --port P --assistant bench --thread-turns 100000 --warmup 300 --n 50
// With --pid the server's CPU time and RSS are read from /proc; the client's own CPU time is
// always reported so a saturated client shows. Benchmarks report; a failed request ends the
// program with an error naming the call.
//
// Several replicas of one server (--ports, e.g. `tollgate serve` processes sharing one
// PostgreSQL database): each client keeps a connection to every replica and sends its
// requests to them in turn, so the three calls of one cycle land on different replicas (the
// rotation starts at the client's index) and every request may be answered by another replica
// than the one before. With several --pid, the server's CPU and RSS are the sums over them.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "keepalive_client.h"

namespace tollgate::bench::http_load {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1";
  std::vector<std::uint16_t> ports;  // one per replica; requests go to them in turn
  std::string server = "tollgate";  // label of the server in the output
  std::string assistant = "agent";
  std::string message = "please look up the weather in Paris";
  std::string resume = R"({"decisions":[{"type":"approve"}]})";
  std::string expect;  // a substring the final reply must contain
  std::string workload = "cycles";
  long n = 1000;
  long warmup = 50;
  int concurrency = 1;
  int reps = 3;
  long thread_turns = 1;   // cycles played on one thread before the next is created
  std::vector<long> pids;  // the server's processes, for their CPU time and RSS
  double settle = 2;  // pause: seconds to wait before the second RSS reading
};

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr
      << "tollgate_httpload: " << message
      << "\nusage: tollgate_httpload --port P | --ports P1,P2,... [--host H] [--server NAME]\n"
         "  [--assistant ID] [--message TEXT] [--resume JSON] [--expect TEXT]\n"
         "  [--workload cycles|pause] [--n N] [--warmup W] [--concurrency C] [--reps R]\n"
         "  [--thread-turns T] [--pid PID[,PID...]] [--settle S]\n";
  std::exit(2);
}

// "1,2,3" -> {1, 2, 3}; each item a non-negative integer.
std::vector<long> number_list(const std::string& key, const std::string& text) {
  std::vector<long> numbers;
  std::istringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    try {
      std::size_t used = 0;
      long parsed = std::stol(item, &used);
      if (used != item.size() || parsed < 0) throw std::invalid_argument(item);
      numbers.push_back(parsed);
    } catch (const std::exception&) {
      usage_error(key + ": not a comma list of non-negative integers: " + text);
    }
  }
  return numbers;
}

std::vector<std::uint16_t> port_list(const std::string& key, const std::string& text) {
  std::vector<std::uint16_t> ports;
  for (long port : number_list(key, text)) {
    if (port == 0 || port > 65535) usage_error(key + ": not a port: " + std::to_string(port));
    ports.push_back(static_cast<std::uint16_t>(port));
  }
  return ports;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string key = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error("missing value for " + key);
      return argv[++i];
    };
    auto number = [&]() -> long {
      std::string text = value();
      try {
        std::size_t used = 0;
        long parsed = std::stol(text, &used);
        if (used != text.size() || parsed < 0) throw std::invalid_argument(text);
        return parsed;
      } catch (const std::exception&) {
        usage_error(key + ": not a non-negative integer: " + text);
      }
    };
    const std::map<std::string, std::function<void()>> setters = {
        {"--host", [&] { o.host = value(); }},
        {"--port", [&] { o.ports = port_list(key, value()); }},
        {"--ports", [&] { o.ports = port_list(key, value()); }},
        {"--server", [&] { o.server = value(); }},
        {"--assistant", [&] { o.assistant = value(); }},
        {"--message", [&] { o.message = value(); }},
        {"--resume", [&] { o.resume = value(); }},
        {"--expect", [&] { o.expect = value(); }},
        {"--workload", [&] { o.workload = value(); }},
        {"--n", [&] { o.n = number(); }},
        {"--warmup", [&] { o.warmup = number(); }},
        {"--concurrency", [&] { o.concurrency = static_cast<int>(number()); }},
        {"--reps", [&] { o.reps = static_cast<int>(number()); }},
        {"--thread-turns", [&] { o.thread_turns = number(); }},
        {"--pid", [&] { o.pids = number_list(key, value()); }},
        {"--settle", [&] { o.settle = static_cast<double>(number()); }},
    };
    auto setter = setters.find(key);
    if (setter == setters.end()) usage_error("unknown argument " + key);
    setter->second();
  }
  if (o.ports.empty()) usage_error("--port or --ports: required");
  if (o.workload != "cycles" && o.workload != "pause")
    usage_error("--workload: cycles or pause, not " + o.workload);
  if (o.concurrency < 1) usage_error("--concurrency: at least 1");
  if (o.reps < 1) usage_error("--reps: at least 1");
  if (o.thread_turns < 1) usage_error("--thread-turns: at least 1");
  if (!Json::accept(o.resume)) usage_error("--resume: not valid JSON");
  return o;
}

// ------------------------------------------------------------------ process figures

double own_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return secs(usage.ru_utime) + secs(usage.ru_stime);
}

// utime + stime of another process, in seconds; -1 when it cannot be read.
double process_cpu_seconds(long pid) {
  if (pid <= 0) return -1;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(in, text);
  std::size_t close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int index = 3; fields >> field; ++index) {  // field 3 is the state
    if (index == 14 || index == 15) ticks += std::stod(field);
    if (index == 15) break;
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The sum over processes of `figure` (CPU seconds, RSS); -1 when one cannot be read.
template <typename T>
T summed(const std::vector<long>& pids, T (*figure)(long)) {
  if (pids.empty()) return -1;
  T total = 0;
  for (long pid : pids) {
    T value = figure(pid);
    if (value < 0) return -1;
    total += value;
  }
  return total;
}

// VmRSS of a process in KB; -1 when it cannot be read.
long rss_kb(long pid) {
  if (pid <= 0) return -1;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

double servers_cpu_seconds(const std::vector<long>& pids) {
  return summed(pids, process_cpu_seconds);
}

long servers_rss_kb(const std::vector<long>& pids) {
  return summed(pids, rss_kb);
}

double load1() {
  double value = 0;
  std::ifstream("/proc/loadavg") >> value;
  return value;
}

// ------------------------------------------------------------------ one cycle

struct Latencies {
  std::vector<double> create, start, resume, cycle;  // milliseconds

  void append(const Latencies& other) {
    for (auto member :
         {&Latencies::create, &Latencies::start, &Latencies::resume, &Latencies::cycle}) {
      (this->*member).insert((this->*member).end(), (other.*member).begin(), (other.*member).end());
    }
  }
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Drives cycles over one connection per replica, sending each request to the next replica.
class CycleDriver {
 public:
  // `first`: the replica of the first request (spreads the clients' rotations).
  CycleDriver(const Options& options, std::size_t first) : options_(options), next_(first) {
    for (std::uint16_t port : options.ports)
      clients_.push_back(std::make_unique<KeepAliveClient>(options.host, port));
    start_body_ =
        Json{{"assistant_id", options.assistant},
             {"input", {{"messages", {{{"role", "user"}, {"content", options.message}}}}}}}
            .dump();
    resume_body_ = Json{{"assistant_id", options.assistant},
                        {"command", {{"resume", Json::parse(options.resume)}}}}
                       .dump();
  }

  // Creates a thread and runs it to the interrupt; returns the thread id.
  std::string pause(Latencies* out) {
    auto t0 = Clock::now();
    Reply created = checked("POST", "/threads", "{}");
    auto t1 = Clock::now();
    std::string thread_id = Json::parse(created.body).at("thread_id").get<std::string>();
    Reply paused = checked("POST", "/threads/" + thread_id + "/runs/wait", start_body_);
    if (paused.body.find("\"__interrupt__\"") == std::string::npos)
      fail("the first run did not pause at an interrupt", paused.body);
    if (out) {
      out->create.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      out->start.push_back(ms_since(t1));
    }
    return thread_id;
  }

  void cycle(Latencies* out) {
    auto t0 = Clock::now();
    std::string thread_id;
    if (turns_ % options_.thread_turns == 0) {
      thread_id = thread_id_ = pause(out);
    } else {
      thread_id = thread_id_;
      Reply paused = checked("POST", "/threads/" + thread_id + "/runs/wait", start_body_);
      if (paused.body.find("\"__interrupt__\"") == std::string::npos)
        fail("the turn's run did not pause at an interrupt", paused.body);
      if (out) out->start.push_back(ms_since(t0));
    }
    ++turns_;
    auto t1 = Clock::now();
    Reply done = checked("POST", "/threads/" + thread_id + "/runs/wait", resume_body_);
    if (done.body.find("\"__interrupt__\"") != std::string::npos ||
        done.body.find("\"__error__\"") != std::string::npos)
      fail("the resumed run did not finish", done.body);
    if (!options_.expect.empty() && done.body.find(options_.expect) == std::string::npos)
      fail("the final reply lacks \"" + options_.expect + "\"", done.body);
    if (out) {
      out->resume.push_back(ms_since(t1));
      out->cycle.push_back(ms_since(t0));
    }
  }

 private:
  Reply checked(const char* method, const std::string& target, const std::string& body) {
    KeepAliveClient& client = *clients_[next_++ % clients_.size()];
    Reply reply = client.request(method, target, body);
    if (reply.status != 200)
      fail(std::string(method) + " " + target + " answered " + std::to_string(reply.status),
           reply.body);
    return reply;
  }

  [[noreturn]] static void fail(const std::string& what, const std::string& body) {
    throw std::runtime_error(what + ": " + body.substr(0, 400));
  }

  const Options& options_;
  std::string thread_id_;  // the thread of the last cycle (--thread-turns)
  long turns_ = 0;         // cycles this driver played
  std::vector<std::unique_ptr<KeepAliveClient>> clients_;
  std::size_t next_;
  std::string start_body_;
  std::string resume_body_;
};

// One driver per client (`concurrency`), kept from the warm-up through every rep.
using Drivers = std::vector<std::unique_ptr<CycleDriver>>;
Drivers make_drivers(const Options& options) {
  Drivers drivers;
  for (int t = 0; t < options.concurrency; ++t)
    drivers.push_back(std::make_unique<CycleDriver>(options, static_cast<std::size_t>(t)));
  return drivers;
}

// Runs `count` operations split over the drivers, a thread each.
// `op(driver, latencies)` performs one operation.
template <typename Op>
Latencies run_parallel(Drivers& drivers, long count, Op op) {
  std::atomic<long> next{0};
  std::mutex mutex;
  Latencies all;
  std::string error;
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < drivers.size(); ++t) {
    threads.emplace_back([&, t] {
      Latencies mine;
      try {
        CycleDriver& driver = *drivers[t];
        while (next.fetch_add(1) < count) op(driver, mine);
      } catch (const std::exception& e) {
        next = count;
        std::lock_guard lock(mutex);
        if (error.empty()) error = e.what();
      }
      std::lock_guard lock(mutex);
      all.append(mine);
    });
  }
  for (auto& thread : threads) thread.join();
  if (!error.empty()) throw std::runtime_error(error);
  return all;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto index = static_cast<std::size_t>(std::max(0.0, p / 100.0 * values.size() - 1e-9));
  return values[std::min(index, values.size() - 1)];
}

double median(std::vector<double> values) {
  return percentile(std::move(values), 50);
}

double r3(double x) {
  return static_cast<double>(static_cast<long long>(x * 1000 + (x >= 0 ? 0.5 : -0.5))) / 1000;
}

Json common_fields(const Options& options) {
  return Json{{"impl", options.server.rfind("tollgate", 0) == 0 ? "tollgate" : "peer"},
              {"server", options.server},
              {"workload", options.workload == "cycles" ? "http_hitl" : "http_pause"},
              {"saver", "server"},
              {"assistant", options.assistant},
              {"replicas", options.ports.size()},
              {"n", options.n},
              {"concurrency", options.concurrency},
              {"thread_turns", options.thread_turns}};
}

// ------------------------------------------------------------------ workloads

void run_cycles(const Options& options) {
  auto one_cycle = [](CycleDriver& driver, Latencies& out) { driver.cycle(&out); };
  Drivers drivers = make_drivers(options);
  if (options.warmup > 0) run_parallel(drivers, options.warmup, one_cycle);
  std::vector<double> rates, client_cpu, server_cpu;
  Latencies pooled;
  double seconds_total = 0;
  for (int rep = 0; rep < options.reps; ++rep) {
    double cpu0 = own_cpu_seconds();
    double server0 = servers_cpu_seconds(options.pids);
    auto start = Clock::now();
    Latencies lat = run_parallel(drivers, options.n, one_cycle);
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    double server1 = servers_cpu_seconds(options.pids);
    seconds_total += seconds;
    rates.push_back(static_cast<double>(options.n) / seconds);
    client_cpu.push_back((own_cpu_seconds() - cpu0) * 1000 / static_cast<double>(options.n));
    if (server0 >= 0 && server1 >= 0)
      server_cpu.push_back((server1 - server0) * 1000 / static_cast<double>(options.n));
    pooled.append(lat);
    std::cerr << "[httpload] " << options.server << " c=" << options.concurrency << " rep "
              << rep + 1 << ": " << r3(rates.back()) << " cycles/s\n";
  }
  Json out = common_fields(options);
  out["ops"] = options.n * options.reps;
  out["reps"] = options.reps;
  out["seconds"] = r3(seconds_total);
  out["ops_per_s"] = r3(median(rates));
  out["ops_per_s_reps"] = rates;
  out["p50_ms"] = r3(percentile(pooled.cycle, 50));
  out["p99_ms"] = r3(percentile(pooled.cycle, 99));
  out["resume_p50_ms"] = r3(percentile(pooled.resume, 50));
  out["resume_p99_ms"] = r3(percentile(pooled.resume, 99));
  out["start_p50_ms"] = r3(percentile(pooled.start, 50));
  out["create_p50_ms"] = r3(percentile(pooled.create, 50));
  out["client_cpu_ms_per_op"] = r3(median(client_cpu));
  if (!server_cpu.empty()) out["cpu_ms_per_op"] = r3(median(server_cpu));
  long rss = servers_rss_kb(options.pids);
  if (rss >= 0) out["rss_mb"] = r3(static_cast<double>(rss) / 1024);
  out["load1"] = r3(load1());
  std::cout << out.dump() << std::endl;
}

void run_pause(const Options& options) {
  if (options.pids.empty()) usage_error("--workload pause: --pid of the server is required");
  auto one_cycle = [](CycleDriver& driver, Latencies& out) { driver.cycle(&out); };
  Drivers drivers = make_drivers(options);
  if (options.warmup > 0) run_parallel(drivers, options.warmup, one_cycle);
  std::this_thread::sleep_for(std::chrono::duration<double>(options.settle));
  long before = servers_rss_kb(options.pids);
  double server0 = servers_cpu_seconds(options.pids);
  auto start = Clock::now();
  Latencies lat = run_parallel(drivers, options.n,
                               [](CycleDriver& driver, Latencies& out) { driver.pause(&out); });
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  double server1 = servers_cpu_seconds(options.pids);
  long right_after = servers_rss_kb(options.pids);
  std::this_thread::sleep_for(std::chrono::duration<double>(options.settle));
  long after = servers_rss_kb(options.pids);
  Json out = common_fields(options);
  out["ops"] = options.n;
  out["seconds"] = r3(seconds);
  out["ops_per_s"] = r3(static_cast<double>(options.n) / seconds);
  out["p50_ms"] = r3(percentile(lat.start, 50));
  out["p99_ms"] = r3(percentile(lat.start, 99));
  out["cpu_ms_per_op"] = r3((server1 - server0) * 1000 / static_cast<double>(options.n));
  out["rss_before_kb"] = before;
  out["rss_right_after_kb"] = right_after;
  out["rss_after_kb"] = after;
  out["kb_per_paused_thread"] =
      r3(static_cast<double>(after - before) / static_cast<double>(options.n));
  out["rss_mb"] = r3(static_cast<double>(after) / 1024);
  out["load1"] = r3(load1());
  std::cout << out.dump() << std::endl;
}

}  // namespace
}  // namespace tollgate::bench::http_load

int main(int argc, char** argv) {
  using namespace tollgate::bench::http_load;
  Options options = parse(argc, argv);
  try {
    if (options.workload == "cycles") {
      run_cycles(options);
    } else {
      run_pause(options);
    }
  } catch (const std::exception& e) {
    std::cerr << "tollgate_httpload: " << options.server << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// W1: the runtime's fixed costs. `chain` times whole invokes of a 3-node chain (the figure
// NeoGraph published for this machine class); `steps` times supersteps of a 1-node self-loop,
// the shape of the peer's `--workload steps`.
#include <algorithm>
#include <string>
#include <vector>

#include "tollgate/error.h"
#include "workloads.h"

namespace tollgate::bench {

namespace {

NodeResult increment(const State& state, Runtime& /*runtime*/) {
  return Json{{"x", state["x"].get<long>() + 1}};
}

}  // namespace

void run_chain(const Options& options) {
  const long invokes = options.n.value_or(20000);
  const int reps = options.reps.value_or(7);
  const long warmup = options.warmup.value_or(1000);
  SaverHandle handle(options, "chain");

  StateGraph builder;
  builder.add_node("a", increment).add_node("b", increment).add_node("c", increment);
  builder.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c").add_edge("c", END);
  auto graph = builder.compile(compile_options(handle));

  const Json input = {{"x", 0}};
  long thread_counter = 0;
  auto invoke_once = [&] {
    RunConfig config;
    config.durability = durability_of(options);
    if (handle.saver()) config.thread_id = "chain-" + std::to_string(thread_counter++);
    RunResult result = graph->invoke(input, config);
    if (result.values["x"] != 3) throw Error::Internal("chain: expected x == 3");
  };
  for (long i = 0; i < warmup; ++i) invoke_once();

  std::vector<double> latencies_ms;
  latencies_ms.reserve(static_cast<std::size_t>(invokes * reps));
  std::vector<double> rep_us_per_invoke;
  std::vector<double> rep_cpu_us_per_invoke;
  double total_seconds = 0;
  for (int rep = 0; rep < reps; ++rep) {
    const double cpu_start = process_cpu_seconds();
    const auto rep_start = Clock::now();
    for (long i = 0; i < invokes; ++i) {
      const auto start = Clock::now();
      invoke_once();
      latencies_ms.push_back(seconds_since(start) * 1e3);
    }
    const double seconds = seconds_since(rep_start);
    total_seconds += seconds;
    rep_us_per_invoke.push_back(seconds / static_cast<double>(invokes) * 1e6);
    rep_cpu_us_per_invoke.push_back((process_cpu_seconds() - cpu_start) /
                                    static_cast<double>(invokes) * 1e6);
  }
  const Summary latency = summarize(latencies_ms);
  const double us_per_invoke = median(rep_us_per_invoke);
  emit({{"workload", "chain"},
        {"saver", options.saver},
        {"n", invokes},
        {"ops", invokes * reps},
        {"seconds", total_seconds},
        {"ops_per_s", 1e6 / us_per_invoke},
        {"us_per_invoke", us_per_invoke},
        {"cpu_ms_per_op", median(rep_cpu_us_per_invoke) / 1e3},
        {"p50_ms", latency.p50},
        {"p99_ms", latency.p99},
        {"reps", reps},
        {"rep_us_per_invoke", rep_us_per_invoke}});
}

void run_steps(const Options& options) {
  const long steps = options.n.value_or(3000);
  const int reps = options.reps.value_or(3);
  const long warmup = options.warmup.value_or(1);
  SaverHandle handle(options, "steps");

  // Entry time of each superstep's node, to report per-step latency percentiles like the peer.
  std::vector<Clock::time_point> stamps;
  stamps.reserve(static_cast<std::size_t>(steps) + 1);
  StateGraph builder;
  builder.add_node("step", [&stamps](const State& state, Runtime&) -> NodeResult {
    stamps.push_back(Clock::now());
    return Json{{"x", state["x"].get<long>() + 1}};
  });
  builder.add_edge(START, "step");
  builder.add_conditional_edges("step", [steps](const State& state) -> Route {
    return state["x"].get<long>() < steps ? Route("step") : Route(END);
  });
  auto graph = builder.compile(compile_options(handle));

  struct Run {
    double seconds;
    double cpu_seconds;
    std::vector<double> step_ms;
  };
  std::vector<Run> runs;
  for (long r = 0; r < warmup + reps; ++r) {
    RunConfig config;
    config.recursion_limit = static_cast<int>(steps + 10);
    config.durability = durability_of(options);
    if (handle.saver()) config.thread_id = "steps-" + std::to_string(r);
    stamps.clear();
    const double cpu_start = process_cpu_seconds();
    const auto start = Clock::now();
    RunResult result = graph->invoke(Json{{"x", 0}}, config);
    const double seconds = seconds_since(start);
    const double cpu_seconds = process_cpu_seconds() - cpu_start;
    if (result.values["x"] != steps) throw Error::Internal("steps: wrong final count");
    if (r < warmup) continue;
    Run run{seconds, cpu_seconds, {}};
    for (std::size_t i = 1; i < stamps.size(); ++i) {
      run.step_ms.push_back(std::chrono::duration<double>(stamps[i] - stamps[i - 1]).count() * 1e3);
    }
    runs.push_back(std::move(run));
  }
  // Report the median run by wall time, as the peer does.
  std::sort(runs.begin(), runs.end(),
            [](const Run& a, const Run& b) { return a.seconds < b.seconds; });
  const Run& mid = runs[runs.size() / 2];
  const Summary step = summarize(mid.step_ms);
  std::vector<double> run_seconds;
  for (const Run& run : runs) run_seconds.push_back(run.seconds);
  Json record = {{"workload", "steps"},
                 {"saver", options.saver},
                 {"n", steps},
                 {"ops", steps},
                 {"seconds", mid.seconds},
                 {"ops_per_s", static_cast<double>(steps) / mid.seconds},
                 {"per_step_us", mid.seconds / static_cast<double>(steps) * 1e6},
                 {"cpu_ms_per_op", mid.cpu_seconds / static_cast<double>(steps) * 1e3},
                 {"p50_ms", step.p50},
                 {"p99_ms", step.p99},
                 {"durability", options.durability.empty() ? "default(sync)" : options.durability},
                 {"runs", reps},
                 {"run_seconds", run_seconds}};
  const auto all_steps = static_cast<double>(steps * (warmup + reps));
  if (const SaverStats stats = handle.stats(); stats.checkpoints_written > 0) {
    record["bytes_total"] = stats.bytes_written;
    record["bytes_per_step"] = static_cast<double>(stats.bytes_written) / all_steps;
    record["checkpoints_per_step"] = static_cast<double>(stats.checkpoints_written) / all_steps;
  }
  if (handle.is_file()) {
    record["file_bytes"] = handle.file_bytes();
    record["file_bytes_per_step"] = static_cast<double>(handle.file_bytes()) / all_steps;
  }
  emit(std::move(record));
}

}  // namespace tollgate::bench

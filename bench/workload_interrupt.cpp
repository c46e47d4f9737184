// W2: graph-level interrupt -> resume cycles. `hitl_cycle` is the smallest cycle (one node
// asks, the answer comes back with Command{resume}); `fanout` is the peer's W4 shape
// (fan -> P Send branches that each call interrupt() -> join), resumed with one map of
// answers by interrupt id. Each cycle runs on a fresh thread: invoke until paused, then
// resume until done.
#include <algorithm>
#include <string>
#include <vector>

#include "tollgate/error.h"
#include "workloads.h"

namespace tollgate::bench {

namespace {

struct CycleTimes {
  std::vector<double> start_ms;
  std::vector<double> resume_ms;
  std::vector<double> cycle_ms;
};

// Runs `cycles` cycles per repetition, `reps` times after `warmup` cycles, and emits the
// record: ops_per_s is the median over repetitions, latencies are pooled. `cycle(i, times)`
// runs cycle i and, when `times` is given, appends its latencies.
template <typename CycleFn>
void measure_cycles(const Options& options, const SaverHandle& handle, Json record, long cycles,
                    int reps, long warmup, CycleFn cycle) {
  long index = 0;
  for (long i = 0; i < warmup; ++i) cycle(index++, nullptr);
  const SaverStats stats_before = handle.stats();

  CycleTimes times;
  std::vector<double> rep_ops_per_s;
  std::vector<double> rep_cpu_ms_per_op;
  double total_seconds = 0;
  for (int rep = 0; rep < reps; ++rep) {
    const double cpu_start = process_cpu_seconds();
    const auto start = Clock::now();
    for (long i = 0; i < cycles; ++i) cycle(index++, &times);
    const double seconds = seconds_since(start);
    total_seconds += seconds;
    rep_ops_per_s.push_back(static_cast<double>(cycles) / seconds);
    rep_cpu_ms_per_op.push_back((process_cpu_seconds() - cpu_start) / static_cast<double>(cycles) *
                                1e3);
  }
  const SaverStats stats = handle.stats();
  const auto timed = static_cast<double>(cycles * reps);
  const auto all_cycles = static_cast<double>(index);

  const Summary cycle_summary = summarize(times.cycle_ms);
  const Summary start_summary = summarize(times.start_ms);
  const Summary resume_summary = summarize(times.resume_ms);
  record["n"] = record.value("n", cycles);
  record["saver"] = options.saver;
  record["ops"] = cycles * reps;
  record["seconds"] = total_seconds;
  record["ops_per_s"] = median(rep_ops_per_s);
  record["cpu_ms_per_op"] = median(rep_cpu_ms_per_op);
  record["p50_ms"] = cycle_summary.p50;
  record["p99_ms"] = cycle_summary.p99;
  record["start_p50_ms"] = start_summary.p50;
  record["resume_p50_ms"] = resume_summary.p50;
  record["resume_p99_ms"] = resume_summary.p99;
  record["reps"] = reps;
  record["rep_ops_per_s"] = rep_ops_per_s;
  record["durability"] = options.durability.empty() ? "default(sync)" : options.durability;
  if (stats.checkpoints_written > 0) {
    record["bytes_per_cycle"] =
        static_cast<double>(stats.bytes_written - stats_before.bytes_written) / timed;
    record["checkpoints_per_cycle"] =
        static_cast<double>(stats.checkpoints_written - stats_before.checkpoints_written) / timed;
    record["writes_per_cycle"] =
        static_cast<double>(stats.writes_written - stats_before.writes_written) / timed;
  }
  if (handle.is_file()) {
    const auto file_bytes = handle.file_bytes();
    record["file_bytes"] = file_bytes;
    record["file_bytes_per_cycle"] = static_cast<double>(file_bytes) / all_cycles;
  }
  emit(std::move(record));
}

// Times one cycle: the first invoke must pause, the resume must finish.
template <typename StartFn, typename ResumeFn>
void timed_cycle(CycleTimes* times, StartFn start_run, ResumeFn resume_run) {
  const auto t0 = Clock::now();
  start_run();
  const auto t1 = Clock::now();
  resume_run();
  if (times != nullptr) {
    const auto t2 = Clock::now();
    times->start_ms.push_back(std::chrono::duration<double>(t1 - t0).count() * 1e3);
    times->resume_ms.push_back(std::chrono::duration<double>(t2 - t1).count() * 1e3);
    times->cycle_ms.push_back(std::chrono::duration<double>(t2 - t0).count() * 1e3);
  }
}

void require_saver(const Options& options) {
  if (options.saver == "none") {
    throw Error::InvalidArgument("--saver: " + options.workload +
                                 " needs a checkpointer (memory or sqlite)");
  }
}

}  // namespace

void run_hitl_cycle(const Options& options) {
  require_saver(options);
  const long cycles = options.n.value_or(options.saver == "sqlite" ? 500 : 2000);
  SaverHandle handle(options, "hitl_cycle");

  StateGraph builder;
  builder.add_node("ask", [](const State& state, Runtime& runtime) -> NodeResult {
    Json answer = runtime.interrupt({{"question", "approve?"}, {"request", state["request"]}});
    return Json{{"answer", std::move(answer)}};
  });
  builder.add_edge(START, "ask").add_edge("ask", END);
  auto graph = builder.compile(compile_options(handle));

  const Command resume = resume_with(Json("approved"));
  auto cycle = [&](long index, CycleTimes* times) {
    RunConfig config;
    config.thread_id = "hitl-" + std::to_string(index);
    config.durability = durability_of(options);
    timed_cycle(
        times,
        [&] {
          RunResult paused = graph->invoke(Json{{"request", index}}, config);
          if (!paused.paused || paused.interrupts.size() != 1) {
            throw Error::Internal("hitl_cycle: expected one interrupt");
          }
        },
        [&] {
          RunResult done = graph->invoke(resume, config);
          if (done.paused || done.values["answer"] != "approved") {
            throw Error::Internal("hitl_cycle: resume did not finish with the answer");
          }
        });
  };
  measure_cycles(options, handle, {{"workload", "hitl_cycle"}}, cycles, options.reps.value_or(5),
                 options.warmup.value_or(std::min(cycles / 10, 200L)), cycle);
}

void run_fanout(const Options& options) {
  require_saver(options);
  const long branches = std::max(1L, options.n.value_or(1));
  const long cycles = options.cycles.value_or(
      std::max(20L, (options.saver == "sqlite" ? 4000L : 20000L) / (branches * 10)));
  SaverHandle handle(options, "fanout");

  StateSchema schema;
  schema.append("results");
  StateGraph builder(schema);
  builder.add_node("fan", [](const State&, Runtime&) -> NodeResult { return Json::object(); });
  builder.add_node("worker", [](const State& input, Runtime& runtime) -> NodeResult {
    const Json& branch = input["i"];
    Json answer = runtime.interrupt(
        {{"branch", branch}, {"question", "approve branch " + branch.dump() + "?"}});
    return Json{{"results", Json::array({{{"i", branch}, {"v", std::move(answer)}}})}};
  });
  builder.add_node("join", [](const State&, Runtime&) -> NodeResult { return Json::object(); });
  builder.add_edge(START, "fan");
  builder.add_conditional_edges("fan",
                                [branches](const State&) -> Route {
                                  std::vector<Send> sends;
                                  for (long i = 0; i < branches; ++i)
                                    sends.push_back({"worker", {{"i", i}}});
                                  return sends;
                                },
                                {{"worker", "worker"}});
  builder.add_edge("worker", "join").add_edge("join", END);
  auto graph = builder.compile(compile_options(handle));

  auto cycle = [&](long index, CycleTimes* times) {
    RunConfig config;
    config.thread_id = "fan-" + std::to_string(index);
    config.durability = durability_of(options);
    std::vector<Interrupt> interrupts;
    timed_cycle(
        times,
        [&] {
          RunResult paused = graph->invoke(Json{{"results", Json::array()}}, config);
          if (paused.interrupts.size() != static_cast<std::size_t>(branches)) {
            throw Error::Internal("fanout: expected one interrupt per branch");
          }
          interrupts = std::move(paused.interrupts);
        },
        [&] {
          Command resume;
          for (const Interrupt& interrupt : interrupts) {
            resume.resume_map[interrupt.id] = "ok-" + interrupt.value["branch"].dump();
          }
          RunResult done = graph->invoke(resume, config);
          if (done.paused || done.values["results"].size() != static_cast<std::size_t>(branches)) {
            throw Error::Internal("fanout: resume did not finish every branch");
          }
        });
  };
  Json record = {{"workload", "fanout"}, {"n", branches}};
  measure_cycles(options, handle, std::move(record), cycles, options.reps.value_or(5),
                 options.warmup.value_or(std::max(1L, cycles / 10)), cycle);
}

}  // namespace tollgate::bench

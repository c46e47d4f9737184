// Measuring HITL cycles (invoke until paused, then resume until done), shared by the
// graph-level (workload_interrupt.cpp) and agent-level (workload_agent.cpp) W2 workloads.
// Thread-safety: benchmark main thread only.
#pragma once

#include <string>
#include <vector>

#include "bench_harness.h"

namespace tollgate::bench {

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
  const double rss_before_mb = rss_mb();

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
  const double rss_growth_mb = rss_mb() - rss_before_mb;
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
  // Memory the timed cycles kept (every cycle's thread stays in the saver), allocator included.
  record["rss_kb_per_cycle"] = rss_growth_mb * 1024.0 / timed;
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

}  // namespace tollgate::bench

// The benchmark workloads. Each runs one measurement described by Options and prints its
// JSON line(s) with emit(). See bench/README.md for what each one measures.
#pragma once

#include "bench_harness.h"

namespace tollgate::bench {

// W1a: invokes of a 3-node chain without a saver (µs per invoke).
void run_chain(const Options& options);
// W1b: one invoke of a 1-node self-loop running N supersteps (µs per superstep).
void run_steps(const Options& options);
// W2: interrupt -> resume cycles of a 1-node graph, one thread per cycle.
void run_hitl_cycle(const Options& options);
// W2 (peer shape, its W4): P Send branches each calling interrupt(), resumed by one map.
void run_fanout(const Options& options);
// W3: one thread grown turn by turn (4 messages per turn, one interrupt per turn).
void run_long_thread(const Options& options);
// W2 agent-level: create_agent + HumanInTheLoop cycles, one fresh thread per cycle.
void run_hitl_agent(const Options& options);
// W2 agent-level on ONE thread: per-cycle cost after --sizes prior cycles (default 1,100,1000).
void run_hitl_agent_thread(const Options& options);

}  // namespace tollgate::bench

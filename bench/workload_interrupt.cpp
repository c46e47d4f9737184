// W2: graph-level interrupt -> resume cycles. `hitl_cycle` is the smallest cycle (one node
// asks, the answer comes back with Command{resume}); `fanout` is the peer's W4 shape
// (fan -> P Send branches that each call interrupt() -> join), resumed with one map of
// answers by interrupt id. Each cycle runs on a fresh thread: invoke until paused, then
// resume until done.
#include <algorithm>
#include <string>
#include <vector>

#include "cycle_measure.h"
#include "tollgate/error.h"
#include "workloads.h"

namespace tollgate::bench {

void run_hitl_cycle(const Options& options) {
  require_saver(options);
  const long cycles = options.n.value_or(options.saver != "memory" ? 500 : 2000);
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
      std::max(20L, (options.saver != "memory" ? 4000L : 20000L) / (branches * 10)));
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

// Measures the graph runtime's overhead (reports only; never fails):
//   chain3      a 3-node chain without a saver, per invoke
//   hitl_cycle  an interrupt -> resume cycle with the memory saver, cycles per second
//   long_thread per-turn cost at message 10 vs message 2,000 (memory saver)
// Usage: graph_bench [chain3|hitl|long [iterations]]. A fixed, small iteration count makes
// the run suitable for `valgrind --tool=callgrind` (instruction counts do not depend on load).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tollgate/graph.h"
#include "tollgate/memory_saver.h"

using namespace tollgate;
using SteadyClock = std::chrono::steady_clock;

namespace {

CompileOptions opts(std::shared_ptr<Saver> saver) {
  CompileOptions options;
  options.checkpointer = std::move(saver);
  return options;
}

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

void chain3(int n) {
  StateGraph g;
  for (const char* name : {"a", "b", "c"}) {
    g.add_node(name, [](const State& s, Runtime&) -> NodeResult {
      return Json{{"n", s["n"].get<int>() + 1}};
    });
  }
  g.add_edge(START, "a").add_edge("a", "b").add_edge("b", "c");
  auto graph = g.compile();
  const Json input{{"n", 0}};
  for (int i = 0; i < std::min(n, 2000); ++i) graph->invoke(input);
  auto start = SteadyClock::now();
  for (int i = 0; i < n; ++i) graph->invoke(input);
  std::printf("chain3 (no saver): %.2f us/invoke\n", seconds_since(start) * 1e6 / n);
}

void hitl_cycle(int n) {
  std::shared_ptr<Saver> saver = make_memory_saver();
  StateGraph g;
  g.add_node("review", [](const State&, Runtime& rt) -> NodeResult {
    return Json{{"answer", rt.interrupt("ok?")}};
  });
  g.add_edge(START, "review");
  auto graph = g.compile(opts(saver));
  Command answer;
  answer.resume = "yes";
  auto start = SteadyClock::now();
  for (int i = 0; i < n; ++i) {
    RunConfig config;
    config.thread_id = "t" + std::to_string(i);
    graph->invoke(Json::object(), config);
    graph->invoke(answer, config);
  }
  std::printf("interrupt->resume (memory saver, new thread each): %.0f cycles/s\n",
              n / seconds_since(start));
}

void long_thread() {
  std::shared_ptr<Saver> saver = make_memory_saver();
  StateSchema schema;
  schema.add_messages("messages");
  StateGraph g(schema);
  g.add_node("bot", [](const State& s, Runtime& rt) -> NodeResult {
    Json ok = rt.interrupt("approve?");
    return Json{{"messages", Json::array({{{"type", "ai"},
                                           {"id", "ai-" + std::to_string(s["messages"].size())},
                                           {"content", ok}}})}};
  });
  g.add_edge(START, "bot");
  auto graph = g.compile(opts(saver));
  RunConfig config;
  config.thread_id = "long";
  Command answer;
  answer.resume = "yes";
  auto turn = [&](int i) {
    graph->invoke(
        Json{{"messages",
              Json::array(
                  {{{"type", "human"}, {"id", "h-" + std::to_string(i)}, {"content", "hello"}}})}},
        config);
    graph->invoke(answer, config);
  };
  int i = 0;
  auto measure = [&](int turns) {
    auto start = SteadyClock::now();
    for (int k = 0; k < turns; ++k) turn(i++);
    return seconds_since(start) * 1e6 / turns;
  };
  const double early = measure(5);
  while (i < 1000) turn(i++);
  const double late = measure(50);
  std::printf(
      "turn (input+interrupt+resume) at ~10 messages: %.1f us, at ~2000 messages: %.1f us\n", early,
      late);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 0;
  if (only.empty() || only == "chain3") chain3(iterations > 0 ? iterations : 100000);
  if (only.empty() || only == "hitl") hitl_cycle(iterations > 0 ? iterations : 20000);
  if (only.empty() || only == "long") long_thread();
  return 0;
}

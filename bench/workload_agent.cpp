// W2 agent-level: the peer's `hitl_cycle` workload — create_agent + HumanInTheLoop middleware
// with a deterministic fake model (a human message gets one `lookup` tool call, a tool message
// gets the final text answer). One cycle:
//   invoke({messages: [human]}) -> model -> HumanInTheLoop.after_model interrupt()
//   -> invoke(Command{resume: {decisions: [{type: approve}]}}) -> tools -> model -> END
// `hitl_agent` runs each cycle on a fresh thread (cycles/s, CPU per cycle);
// `hitl_agent_thread` runs them on ONE thread and reports the per-cycle cost after 1, 100,
// 1,000 ... prior cycles (the aim: flat).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cycle_measure.h"
#include "tollgate/agent.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"
#include "workloads.h"

namespace tollgate::bench {

namespace {

// The peer's FakeToolModel: stateless, so safe to invoke concurrently.
class FakeToolModel : public ChatModel {
 public:
  explicit FakeToolModel(std::size_t payload) : payload_(payload) {}

  Json invoke(const ChatRequest& request, const TokenCallback* /*on_chunk*/) override {
    const std::size_t k = request.messages.size();
    const std::string n = std::to_string(k);
    if (k > 0 && request.messages.back().value("type", "") == "tool") {
      return ai_message("final answer #" + n + ": " + payload_text(k, payload_), Json::array(),
                        "ai-" + n);
    }
    return ai_message(
        "", Json::array({make_tool_call("lookup", {{"query", "q" + n}}, "call_" + n)}), "ai-" + n);
  }
  std::string name() const override { return "bench:fake-tool-model"; }

 private:
  std::size_t payload_;
};

std::shared_ptr<CompiledGraph> make_agent(const SaverHandle& handle, std::size_t payload) {
  Tool lookup("lookup", "Look something up (fake, deterministic).",
              Json{{"type", "object"},
                   {"properties", {{"query", {{"type", "string"}}}}},
                   {"required", {"query"}}},
              [payload](const Json& args, const ToolContext&) -> Json {
                const std::string query = args["query"].get<std::string>();
                const std::uint64_t seed = std::stoull(query.substr(1)) + 7;
                return "result for " + query + ": " + payload_text(seed, payload);
              });
  HumanInTheLoopOptions hitl;
  hitl.interrupt_on = {{"lookup", ToolReviewPolicy::review_all()}};
  AgentOptions options;
  options.model = std::make_shared<FakeToolModel>(payload);
  options.tools = {std::move(lookup)};
  options.middleware = {make_human_in_the_loop(std::move(hitl))};
  options.checkpointer = handle.saver();
  return create_agent(std::move(options));
}

// One agent cycle on `config`'s thread, checked like the peer checks it.
class AgentCycle {
 public:
  AgentCycle(const Options& options, const SaverHandle& handle)
      : payload_(options.payload),
        graph_(make_agent(handle, options.payload)),
        approve_(resume_with(Json{{"decisions", Json::array({{{"type", "approve"}}})}})) {}

  void start(long index, const RunConfig& config) const {
    Json human =
        human_message("user turn " + std::to_string(index) + ": " +
                      payload_text(static_cast<std::uint64_t>(index) + 1000000, payload_ / 2));
    RunResult paused = graph_->invoke(Json{{"messages", Json::array({std::move(human)})}}, config);
    if (!paused.paused || paused.interrupts.size() != 1) {
      throw Error::Internal("hitl_agent: expected one interrupt per cycle");
    }
  }

  // Returns the thread's message count after the cycle.
  std::size_t resume(const RunConfig& config) const {
    RunResult done = graph_->invoke(approve_, config);
    const Json& messages = done.values["messages"];
    if (done.paused || messages.size() < 4) {
      throw Error::Internal("hitl_agent: the resume did not finish the cycle");
    }
    const Json& last = messages[messages.size() - 1];
    const Json& tool = messages[messages.size() - 2];
    if (last.value("type", "") != "ai" || !message_text(last).starts_with("final answer") ||
        tool.value("type", "") != "tool" || !message_text(tool).starts_with("result for")) {
      throw Error::Internal("hitl_agent: approve did not run the tool and answer");
    }
    return messages.size();
  }

 private:
  std::size_t payload_;
  std::shared_ptr<CompiledGraph> graph_;
  Command approve_;
};

}  // namespace

void run_hitl_agent(const Options& options) {
  require_saver(options);
  const long cycles = options.n.value_or(options.saver != "memory" ? 300 : 1000);
  SaverHandle handle(options, "hitl_agent");
  const AgentCycle agent(options, handle);
  auto cycle = [&](long index, CycleTimes* times) {
    RunConfig config;
    config.thread_id = "agent-" + std::to_string(index);
    config.durability = durability_of(options);
    timed_cycle(
        times, [&] { agent.start(index, config); }, [&] { agent.resume(config); });
  };
  measure_cycles(options, handle, {{"workload", "hitl_agent"}}, cycles, options.reps.value_or(5),
                 options.warmup.value_or(std::min(cycles / 10, 100L)), cycle);
}

void run_hitl_agent_thread(const Options& options) {
  require_saver(options);
  std::vector<long> sizes = options.sizes;
  if (sizes.empty()) sizes = {1, 100, 1000};
  SaverHandle handle(options, "hitl_agent_thread");
  const AgentCycle agent(options, handle);
  RunConfig config;
  config.thread_id = "agent-thread-0";
  config.durability = durability_of(options);

  long done = 0;  // cycles run on the thread so far
  std::size_t messages = 0;
  const auto all_start = Clock::now();
  for (const long prior : sizes) {
    if (seconds_since(all_start) > options.budget_seconds) {
      log("hitl_agent_thread: over the budget; stopping before " + std::to_string(prior));
      break;
    }
    while (done < prior) {
      agent.start(done, config);
      messages = agent.resume(config);
      ++done;
    }
    CycleTimes times;
    const SaverStats stats_before = handle.stats();
    const double cpu_start = process_cpu_seconds();
    const auto window_start = Clock::now();
    for (long i = 0; i < options.window; ++i) {
      timed_cycle(
          &times, [&] { agent.start(done, config); }, [&] { messages = agent.resume(config); });
      ++done;
    }
    const double seconds = seconds_since(window_start);
    const double cpu_seconds = process_cpu_seconds() - cpu_start;
    const SaverStats stats_after = handle.stats();
    const auto window = static_cast<double>(options.window);
    const Summary cycle_summary = summarize(times.cycle_ms);
    emit({{"workload", "hitl_agent_thread"},
          {"saver", options.saver},
          {"n", prior},
          {"prior_cycles", prior},
          {"messages_at_end", messages},
          {"ops", options.window},
          {"seconds", seconds},
          {"ops_per_s", window / seconds},
          {"cpu_ms_per_op", cpu_seconds * 1e3 / window},
          {"p50_ms", cycle_summary.p50},
          {"p99_ms", cycle_summary.p99},
          {"start_p50_ms", summarize(times.start_ms).p50},
          {"resume_p50_ms", summarize(times.resume_ms).p50},
          {"bytes_per_cycle",
           static_cast<double>(stats_after.bytes_written - stats_before.bytes_written) / window},
          {"durability", options.durability.empty() ? "default(sync)" : options.durability},
          {"payload", options.payload}});
  }
}

}  // namespace tollgate::bench

#include "checkpoint/fault_cycles.h"

#include "tollgate/agent.h"
#include "tollgate/chat_model.h"
#include "tollgate/human_in_the_loop.h"
#include "tollgate/messages.h"
#include "tollgate/tool.h"

namespace tollgate::testing {
namespace {

// A human message gets one `lookup` call; a tool result gets the final answer. Stateless.
class LookupModel final : public ChatModel {
 public:
  Json invoke(const ChatRequest& request, const TokenCallback* /*on_chunk*/) override {
    const std::string n = std::to_string(request.messages.size());
    if (request.messages.back().value("type", "") == "tool") {
      return ai_message("the answer, after " + n + " messages", Json::array(), "ai-" + n);
    }
    return ai_message(
        "", Json::array({make_tool_call("lookup", {{"query", "q" + n}}, "call_" + n)}), "ai-" + n);
  }
  std::string name() const override { return "test:lookup-model"; }
};

std::shared_ptr<CompiledGraph> build_agent(std::shared_ptr<Saver> saver) {
  Tool lookup("lookup", "Look something up.",
              Json{{"type", "object"},
                   {"properties", {{"query", {{"type", "string"}}}}},
                   {"required", {"query"}}},
              [](const Json& args, const ToolContext&) -> Json {
                return "found " + args["query"].get<std::string>();
              },
              // It only reads: a result lost to a failed write is looked up again (a tool
              // with effects would pause for review instead, docs/effects.md).
              ToolOptions{.idempotent = true});
  HumanInTheLoopOptions review;
  review.interrupt_on = {{"lookup", ToolReviewPolicy::review_all()}};
  AgentOptions options;
  options.model = std::make_shared<LookupModel>();
  options.tools = {std::move(lookup)};
  options.middleware = {make_human_in_the_loop(std::move(review))};
  options.checkpointer = std::move(saver);
  return create_agent(std::move(options));
}

std::shared_ptr<CompiledGraph> build_graph(std::shared_ptr<Saver> saver) {
  StateSchema schema;
  schema.append("log");
  schema.last_value("answer");
  StateGraph graph(schema);
  auto log = [](const char* entry) {
    return [entry](const State&, Runtime&) -> NodeResult { return Json{{"log", {entry}}}; };
  };
  graph.add_node("plan", log("plan"));
  graph.add_node("left", log("left"));
  graph.add_node("right", log("right"));
  graph.add_node("review", [](const State&, Runtime& runtime) -> NodeResult {
    Json answer = runtime.interrupt(Json{{"question", "apply the plan?"}});
    return Json{{"answer", answer}, {"log", {"reviewed"}}};
  });
  graph.add_node("apply", log("apply"));
  graph.add_edge(START, "plan");
  graph.add_edge("plan", "left");
  graph.add_edge("plan", "right");
  graph.add_edge(std::vector<std::string>{"left", "right"}, "review");
  graph.add_edge("review", "apply");
  graph.add_edge("apply", END);
  CompileOptions options;
  options.checkpointer = std::move(saver);
  return graph.compile(std::move(options));
}

Command answer(Json value) {
  Command command;
  command.resume = std::move(value);
  return command;
}

Json without_message_ids(Json value) {
  if (value.is_array()) {
    for (Json& item : value) {
      if (item.is_object() && item.contains("type") && item.contains("content")) item.erase("id");
    }
  }
  return value;
}

// True when a task of the thread's latest checkpoint paused and has not finished since.
bool waits_for_answer(const StateSnapshot& state) {
  for (const TaskInfo& task : state.tasks) {
    if (!task.interrupts.empty() && task.result.is_null()) return true;
  }
  return false;
}

}  // namespace

FaultCycle agent_cycle() {
  return {"agent", build_agent, Json{{"messages", {human_message("look this up", "human-1")}}},
          answer(Json{{"decisions", {{{"type", "approve"}}}}})};
}

FaultCycle graph_cycle() {
  return {"graph", build_graph, Json{{"log", {"start"}}}, answer("yes")};
}

Json comparable_values(const State& values) {
  Json out = Json::object();
  for (const auto& [key, value] : values.values()) {
    out[key] = value ? without_message_ids(*value) : Json();
  }
  return out;
}

Json comparable_snapshot(const StateSnapshot& snapshot) {
  return Json{{"step", snapshot.metadata.value("step", Json())},
              {"source", snapshot.metadata.value("source", Json())},
              {"values", comparable_values(snapshot.values)},
              {"next", snapshot.next}};
}

Json comparable_history(const CompiledGraph& graph, const RunConfig& config) {
  Json history = Json::array();
  for (const StateSnapshot& snapshot : graph.get_state_history(config)) {
    history.push_back(comparable_snapshot(snapshot));
  }
  return history;
}

DriveResult drive_to_end(const CompiledGraph& graph, const FaultCycle& cycle,
                         const RunConfig& config,
                         const std::function<void(const Error&)>& after_failure, int max_runs) {
  DriveResult result;
  Input next = cycle.input;
  while (result.runs < max_runs) {
    ++result.runs;
    try {
      RunResult run = graph.invoke(next, config);
      if (!run.paused) {
        result.values = run.values;
        return result;
      }
      next = cycle.answer;
      continue;
    } catch (const Error& error) {
      result.errors.push_back(error);
      if (after_failure) after_failure(error);
    }
    const StateSnapshot state = graph.get_state(config);
    if (state.config.checkpoint_id.empty()) {
      next = cycle.input;
    } else if (waits_for_answer(state)) {
      next = cycle.answer;
    } else {
      next = Json();
    }
  }
  return result;
}

const RunConfig& fault_thread() {
  static const RunConfig kThread = [] {
    RunConfig config;
    config.thread_id = "faulted";
    return config;
  }();
  return kThread;
}

::testing::AssertionResult is_reference_prefix(const Json& history, const Reference& reference) {
  const std::size_t stored = history.size();
  const std::size_t all = reference.history.size();
  if (stored > all) {
    return ::testing::AssertionFailure() << stored << " checkpoints, more than the " << all
                                         << " of the unfaulted run: " << history.dump();
  }
  for (std::size_t i = 0; i < stored; ++i) {
    if (history[i] != reference.history[all - stored + i]) {
      return ::testing::AssertionFailure()
             << "checkpoint " << i << " of " << stored << " is " << history[i].dump()
             << ", the unfaulted run stored " << reference.history[all - stored + i].dump();
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tollgate::testing

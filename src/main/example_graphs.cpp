#include "main/example_graphs.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace tollgate::cli {
namespace {

CompileOptions compile_options(std::shared_ptr<Saver> saver, std::string name) {
  CompileOptions options;
  options.checkpointer = std::move(saver);
  options.name = std::move(name);
  return options;
}

StateSchema hitl_schema() {
  StateSchema schema;
  schema.add_messages("messages");
  schema.last_value("decision");
  return schema;
}

// A model stand-in: streams "Approve?" token by token, then proposes a tool call.
NodeResult agent(const State&, Runtime& runtime) {
  static std::atomic<unsigned> counter{0};
  runtime.write_custom(Json{{"progress", "calling model"}});
  const std::string id = "run-" + runtime.task_id() + "-" + std::to_string(counter++);
  const std::string reply = "Approve?";
  for (char c : reply) {
    runtime.emit_message(Json{{"content", std::string(1, c)},
                              {"tool_calls", Json::array()},
                              {"invalid_tool_calls", Json::array()},
                              {"tool_call_chunks", Json::array()},
                              {"additional_kwargs", Json::object()},
                              {"response_metadata", Json::object()},
                              {"id", id},
                              {"type", "ai"}});
  }
  Json tool_call_message{{"id", "ai-toolcall-" + runtime.task_id()},
                         {"content", ""},
                         {"tool_calls",
                          {{{"id", "call_1"},
                            {"name", "delete_file"},
                            {"args", {{"path", "/tmp/x"}}},
                            {"type", "tool_call"}}}},
                         {"invalid_tool_calls", Json::array()},
                         {"additional_kwargs", Json::object()},
                         {"response_metadata", Json::object()},
                         {"type", "ai"}};
  Json reply_message{{"id", id},
                     {"content", reply},
                     {"tool_calls", Json::array()},
                     {"invalid_tool_calls", Json::array()},
                     {"additional_kwargs", Json::object()},
                     {"response_metadata", Json::object()},
                     {"type", "ai"}};
  return Json{{"messages", {reply_message, tool_call_message}}};
}

NodeResult review(const State&, Runtime& runtime) {
  Json answer = runtime.interrupt(Json{
      {"question", "Approve tool call delete_file?"},
      {"tool_call", {{"id", "call_1"}, {"name", "delete_file"}, {"args", {{"path", "/tmp/x"}}}}}});
  return Json{{"decision", answer.is_string() ? answer.get<std::string>() : answer.dump()}};
}

NodeResult tool(const State& state, Runtime& runtime) {
  const std::string decision = state["decision"].is_string() ? state["decision"].get<std::string>()
                                                             : state["decision"].dump();
  return Json{{"messages",
               {{{"id", "tool-msg-" + runtime.task_id()},
                 {"tool_call_id", "call_1"},
                 {"name", "delete_file"},
                 {"content", "decision=" + decision},
                 {"additional_kwargs", Json::object()},
                 {"response_metadata", Json::object()},
                 {"type", "tool"}},
                {{"id", "ai-final-" + runtime.task_id()},
                 {"content", "Done. Human said: " + decision},
                 {"tool_calls", Json::array()},
                 {"invalid_tool_calls", Json::array()},
                 {"additional_kwargs", Json::object()},
                 {"response_metadata", Json::object()},
                 {"type", "ai"}}}}};
}

// Sleeps for input "seconds" (default 1) in small steps, stopping early when cancelled.
NodeResult sleep_node(const State& state, Runtime& runtime) {
  const double seconds = state["seconds"].is_number() ? state["seconds"].get<double>() : 1.0;
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
  while (std::chrono::steady_clock::now() < until && !runtime.cancelled()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Json{{"slept", seconds}};
}

}  // namespace

void add_example_graphs(GraphRegistry& registry) {
  registry.add(
      "hitl",
      [](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
        StateGraph graph(hitl_schema());
        graph.add_node("agent", agent).add_node("review", review).add_node("tool", tool);
        graph.add_edge(START, "agent").add_edge("agent", "review").add_edge("review", "tool");
        graph.add_edge("tool", END);
        return graph.compile(compile_options(saver, "hitl"));
      },
      "agent -> review (interrupt) -> tool");
  registry.add(
      "hitl_sub",
      [](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
        StateGraph inner(hitl_schema());
        inner.add_node("inner_review", review).add_node("inner_tool", tool);
        inner.add_edge(START, "inner_review").add_edge("inner_review", "inner_tool");
        inner.add_edge("inner_tool", END);
        StateGraph parent(hitl_schema());
        parent.add_node("agent", agent)
            .add_node("child", inner.compile(compile_options(nullptr, "child")));
        parent.add_edge(START, "agent").add_edge("agent", "child").add_edge("child", END);
        return parent.compile(compile_options(saver, "hitl_sub"));
      },
      "agent -> child subgraph (review with interrupt -> tool)");
  registry.add(
      "sleepy",
      [](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
        StateGraph graph;
        graph.add_node("sleep", sleep_node).add_edge(START, "sleep").add_edge("sleep", END);
        return graph.compile(compile_options(saver, "sleepy"));
      },
      "sleeps for input.seconds (for cancellation and multitask tests)");
}

}  // namespace tollgate::cli

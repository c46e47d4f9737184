// W3: one thread grown turn by turn, the graph-level equivalent of the peer's long_thread.
// A turn adds 4 messages to an add_messages channel:
//   human question -> model: AI message with one tool call -> review: interrupt()
//   -> resume "approve" -> tools: tool message -> model: AI answer -> END
// The figure that matters is the *shape*: time per turn and bytes written per turn should
// stay flat as the thread grows to thousands of messages.
#include <algorithm>
#include <string>
#include <vector>

#include "tollgate/error.h"
#include "workloads.h"

namespace tollgate::bench {

namespace {

// The scripted model: a question gets a tool call, a tool result gets the final answer.
// Message shapes follow LangChain's ({type, id, content, tool_calls, tool_call_id}).
NodeResult model_node(const State& state, std::size_t payload) {
  const Json& messages = state["messages"];
  const std::size_t k = messages.size();
  const Json& last = messages.back();
  Json reply;
  if (last.value("type", "") == "tool") {
    reply = {{"type", "ai"},
             {"id", "ai-" + std::to_string(k)},
             {"content", "final answer #" + std::to_string(k) + ": " + payload_text(k, payload)},
             {"tool_calls", Json::array()}};
  } else {
    reply = {{"type", "ai"},
             {"id", "ai-" + std::to_string(k)},
             {"content", ""},
             {"tool_calls", Json::array({{{"id", "call_" + std::to_string(k)},
                                          {"name", "lookup"},
                                          {"args", {{"query", "q" + std::to_string(k)}}},
                                          {"type", "tool_call"}}})}};
  }
  return Json{{"messages", Json::array({std::move(reply)})}};
}

NodeResult review_node(const State& state, Runtime& runtime) {
  const Json& call = state["messages"].back()["tool_calls"][0];
  Json decision = runtime.interrupt(
      {{"action_requests", Json::array({{{"name", call["name"]}, {"args", call["args"]}}})},
       {"review_configs", Json::array({{{"action_name", call["name"]},
                                        {"allowed_decisions", {"approve", "reject"}}}})}});
  const Json& decisions = decision["decisions"];
  if (!decisions.is_array() || decisions.empty() || decisions[0].value("type", "") != "approve") {
    throw Error::Internal("long_thread: expected an approve decision");
  }
  return Json::object();
}

NodeResult tools_node(const State& state, std::size_t payload) {
  const Json& call = state["messages"].back()["tool_calls"][0];
  const std::string query = call["args"]["query"].get<std::string>();
  const std::uint64_t seed = std::stoull(query.substr(1)) + 7;
  Json tool_message = {{"type", "tool"},
                       {"id", "tool-" + call["id"].get<std::string>()},
                       {"tool_call_id", call["id"]},
                       {"name", call["name"]},
                       {"content", "result for " + query + ": " + payload_text(seed, payload)}};
  return Json{{"messages", Json::array({std::move(tool_message)})}};
}

struct Turn {
  double start_ms;
  double resume_ms;
  double turn_ms;
};

}  // namespace

void run_long_thread(const Options& options) {
  require_saver(options);
  std::vector<long> sizes = options.sizes;
  if (sizes.empty()) sizes = {10, 100, 1000, options.n.value_or(10000)};
  if (options.n) {
    sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](long s) { return s > *options.n; }),
                sizes.end());
    if (sizes.empty() || sizes.back() != *options.n) sizes.push_back(*options.n);
  }
  // Timed turns reported at each size: the last `window` turns before reaching it.
  const long window = options.window;
  const std::size_t payload = options.payload;
  SaverHandle handle(options, "long_thread");

  StateSchema schema;
  schema.add_messages("messages");
  StateGraph builder(schema);
  builder.add_node("model", [payload](const State& s, Runtime&) { return model_node(s, payload); });
  builder.add_node("review", review_node);
  builder.add_node("tools", [payload](const State& s, Runtime&) { return tools_node(s, payload); });
  builder.add_edge(START, "model");
  builder.add_conditional_edges(
      "model",
      [](const State& state) -> Route {
        return state["messages"].back()["tool_calls"].empty() ? Route(END) : Route("review");
      },
      {{"review", "review"}, {END.data(), END.data()}});
  builder.add_edge("review", "tools").add_edge("tools", "model");
  auto graph = builder.compile(compile_options(handle));

  RunConfig config;
  config.thread_id = "long-0";
  config.durability = durability_of(options);
  const Command approve = resume_with(Json{{"decisions", Json::array({{{"type", "approve"}}})}});

  long turn = 0;
  std::size_t messages = 0;
  auto run_turn = [&]() -> Turn {
    Json human = {
        {"type", "human"},
        {"id", "human-" + std::to_string(turn)},
        {"content", "user turn " + std::to_string(turn) + ": " +
                        payload_text(static_cast<std::uint64_t>(turn) + 1000000, payload / 2)}};
    const auto t0 = Clock::now();
    {
      // Checked and released before the resume: a result still held shares the message list
      // with the thread's channel, and the resume's first append would then copy the list.
      const RunResult paused =
          graph->invoke(Json{{"messages", Json::array({std::move(human)})}}, config);
      if (!paused.paused || paused.interrupts.size() != 1) {
        throw Error::Internal("long_thread: expected one interrupt per turn");
      }
    }
    const auto t1 = Clock::now();
    RunResult done = graph->invoke(approve, config);
    const auto t2 = Clock::now();
    messages = done.values["messages"].size();
    ++turn;
    if (done.paused || messages != static_cast<std::size_t>(4 * turn)) {
      throw Error::Internal("long_thread: expected " + std::to_string(4 * turn) +
                            " messages, got " + std::to_string(messages));
    }
    auto ms = [](auto d) { return std::chrono::duration<double>(d).count() * 1e3; };
    return {ms(t1 - t0), ms(t2 - t1), ms(t2 - t0)};
  };

  const auto all_start = Clock::now();
  bool over_budget = false;
  for (long size : sizes) {
    long target_turns = (size + 3) / 4;
    // Grow untimed up to the window, then time the window's turns. Over the time budget, the
    // window is timed where the thread is and reported as the last (smaller) size.
    while (turn < target_turns - window) {
      if (seconds_since(all_start) > options.budget_seconds) {
        log("long_thread: over the " + std::to_string(options.budget_seconds) +
            " s budget; last window at " + std::to_string(messages) + " messages");
        over_budget = true;
        target_turns = turn + window;
        size = 4 * target_turns;
        break;
      }
      run_turn();
    }
    const auto file_bytes_before = handle.file_bytes();
    const SaverStats stats_before = handle.stats();
    std::vector<double> turn_ms;
    std::vector<double> start_ms;
    std::vector<double> resume_ms;
    const long first_turn = turn;
    const double cpu_start = process_cpu_seconds();
    const auto window_start = Clock::now();
    while (turn < target_turns) {
      Turn t = run_turn();
      turn_ms.push_back(t.turn_ms);
      start_ms.push_back(t.start_ms);
      resume_ms.push_back(t.resume_ms);
    }
    const double seconds = seconds_since(window_start);
    const double cpu_seconds = process_cpu_seconds() - cpu_start;
    const long timed_turns = turn - first_turn;
    const SaverStats stats_after = handle.stats();
    const auto file_bytes_after = handle.file_bytes();
    const auto per_turn = [timed_turns](std::uint64_t before, std::uint64_t after) {
      return timed_turns > 0
                 ? (static_cast<double>(after) - static_cast<double>(before)) / timed_turns
                 : 0.0;
    };

    const Summary turn_summary = summarize(turn_ms);
    Json record = {
        {"workload", "long_thread"},
        {"saver", options.saver},
        {"n", size},
        {"messages_at_end", 4 * first_turn + 4 * timed_turns},
        {"ops", timed_turns},
        {"seconds", seconds},
        {"ops_per_s", timed_turns > 0 ? static_cast<double>(timed_turns) / seconds : 0},
        {"cpu_ms_per_op", timed_turns > 0 ? cpu_seconds * 1e3 / timed_turns : 0},
        {"p50_ms", turn_summary.p50},
        {"p99_ms", turn_summary.p99},
        {"turn_mean_ms", turn_summary.mean},
        {"start_p50_ms", summarize(start_ms).p50},
        {"resume_p50_ms", summarize(resume_ms).p50},
        {"turns_total", turn},
        {"cumulative_seconds", seconds_since(all_start)},
        {"bytes_per_turn", per_turn(stats_before.bytes_written, stats_after.bytes_written)},
        {"value_bytes_per_turn",
         per_turn(stats_before.value_bytes_written, stats_after.value_bytes_written)},
        {"checkpoints_per_turn",
         per_turn(stats_before.checkpoints_written, stats_after.checkpoints_written)},
        {"bytes_total", stats_after.bytes_written},
        {"durability", options.durability.empty() ? "default(sync)" : options.durability},
        {"payload", payload}};
    if (handle.is_file()) {
      record["file_bytes"] = file_bytes_after;
      record["file_bytes_per_turn"] = per_turn(file_bytes_before, file_bytes_after);
    }
    if (over_budget) record["stopped_by_budget"] = true;
    emit(std::move(record));
    if (over_budget) break;
  }
}

}  // namespace tollgate::bench

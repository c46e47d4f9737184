// The review-a-tool-call graph: call_llm -> human_review_node -> run_tool.
//
// A (scripted) model proposes a weather_search call; the graph pauses before running it and a
// person decides: continue as proposed, update the city, or cancel with a note. The pause is
// stored in a SQLite file, so the decision can come from another process, later:
//
//   weather_review --db weather.db --thread t1 ask "What's the weather in Paris?"
//   weather_review --db weather.db --thread t1 show
//   weather_review --db weather.db --thread t1 continue
//   weather_review --db weather.db --thread t1 update London
//   weather_review --db weather.db --thread t1 cancel "Never mind, I'll look outside."
#include <cctype>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "tollgate/error.h"
#include "tollgate/graph.h"
#include "tollgate/sqlite_saver.h"

using tollgate::Command;
using tollgate::Json;
using tollgate::NodeResult;
using tollgate::Runtime;
using tollgate::State;

namespace {

// The tool: a fake weather service, deterministic so the example's output is stable.
std::string weather_search(const std::string& city) {
  return "It's sunny in " + city + ", 21°C.";
}

// Commands (like the other option structs here) are filled member by member: a designated
// initializer that leaves members out draws -Wmissing-field-initializers under -Wextra.
Command go_to(const std::string& node, std::optional<Json> update = std::nullopt) {
  Command command;
  command.goto_nodes = {node};
  command.update = std::move(update);
  return command;
}

Command resume_with(Json answer) {
  Command command;
  command.resume = std::move(answer);
  return command;
}

// A scripted stand-in for an LLM: asks for the weather tool on a question, answers from the
// tool's result otherwise.
// The capitalised words after "in ": "What's the weather in New York?" -> "New York"; "" if none.
std::string city_named_in(const std::string& question) {
  for (auto at = question.find("in "); at != std::string::npos; at = question.find("in ", at + 1)) {
    std::size_t end = at + 3;
    if (end >= question.size() || !std::isupper(static_cast<unsigned char>(question[end])))
      continue;
    while (end < question.size() &&
           (std::isalpha(static_cast<unsigned char>(question[end])) || question[end] == ' '))
      ++end;
    return question.substr(at + 3, end - at - 3);
  }
  return "";
}

Json scripted_model_reply(const Json& messages, int turn) {
  const Json& last = messages.back();
  if (last.value("type", "") == "tool") {
    return {{"type", "ai"}, {"id", "ai-" + std::to_string(turn)},
            {"content", "Here is what I found: " + last.value("content", "")},
            {"tool_calls", Json::array()}};
  }
  const std::string question = last.value("content", "");
  if (question.find("weather") == std::string::npos) {
    return {{"type", "ai"}, {"id", "ai-" + std::to_string(turn)},
            {"content", "Understood, I won't look anything up. (" + question + ")"},
            {"tool_calls", Json::array()}};
  }
  std::string city = city_named_in(question);
  if (city.empty()) city = "San Francisco";
  return {{"type", "ai"}, {"id", "ai-" + std::to_string(turn)},
          {"content", ""},
          {"tool_calls", Json::array({{{"id", "call-" + std::to_string(turn)},
                                       {"name", "weather_search"},
                                       {"args", {{"city", city}}},
                                       {"type", "tool_call"}}})}};
}

std::shared_ptr<tollgate::CompiledGraph> build_graph(std::shared_ptr<tollgate::Saver> saver) {
  tollgate::StateSchema schema;
  schema.add_messages("messages");
  tollgate::StateGraph graph(schema);

  graph.add_node("call_llm", [](const State& state, Runtime&) -> NodeResult {
    const Json& messages = state["messages"];
    return Json{{"messages", Json::array({scripted_model_reply(messages, static_cast<int>(messages.size()))})}};
  });

  graph.add_node("human_review_node", [](const State& state, Runtime& runtime) -> NodeResult {
    const Json& ai = state["messages"].back();
    const Json& call = ai["tool_calls"].back();
    Json review = runtime.interrupt({{"question", "Is this correct?"}, {"tool_call", call}});
    const std::string action = review.value("action", "");
    if (action == "continue") return go_to("run_tool");
    if (action == "update") {
      Json updated = ai;  // same id: add_messages replaces the model's message in place
      updated["tool_calls"].back()["args"] = review.at("data");
      return go_to("run_tool", Json{{"messages", Json::array({updated})}});
    }
    if (action == "cancel") {
      // Drop the proposed call and hand the reviewer's note to the model as a new message.
      Json note = {{"type", "human"}, {"content", review.value("data", "Cancelled.")}};
      return go_to("call_llm",
                   Json{{"messages", Json::array({Json{{"type", "remove"}, {"id", ai["id"]}}, note})}});
    }
    throw tollgate::Error::Unprocessable("review action must be continue, update or cancel; got '" + action + "'");
  });

  graph.add_node("run_tool", [](const State& state, Runtime&) -> NodeResult {
    const Json& call = state["messages"].back()["tool_calls"].back();
    Json result = {{"type", "tool"}, {"tool_call_id", call["id"]}, {"name", call["name"]},
                   {"content", weather_search(call["args"].value("city", ""))}};
    return Json{{"messages", Json::array({result})}};
  });

  graph.add_edge(tollgate::START, "call_llm");
  graph.add_conditional_edges("call_llm", [](const State& state) -> tollgate::Route {
    const Json& last = state["messages"].back();
    if (last.contains("tool_calls") && !last["tool_calls"].empty()) return "human_review_node";
    return std::string(tollgate::END);
  });
  graph.add_edge("run_tool", "call_llm");
  tollgate::CompileOptions options;
  options.checkpointer = std::move(saver);
  return graph.compile(options);
}

void print_result(const tollgate::RunResult& result) {
  for (const auto& interrupt : result.interrupts) {
    std::cout << "PAUSED for review: " << interrupt.value.dump(2) << "\n";
  }
  if (!result.paused) {
    const Json& messages = result.values["messages"];
    std::cout << "DONE: " << messages.back().value("content", "") << "\n";
  }
}

int usage() {
  std::cerr << "usage: weather_review --db FILE --thread ID (ask QUESTION | show | continue | "
               "update CITY | cancel NOTE)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string db = "weather.db", thread = "demo";
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--db" && i + 1 < args.size()) db = args[++i];
    else if (args[i] == "--thread" && i + 1 < args.size()) thread = args[++i];
    else rest.push_back(args[i]);
  }
  if (rest.empty()) return usage();

  try {
    auto graph = build_graph(tollgate::open_sqlite_saver(db));
    tollgate::RunConfig config;
    config.thread_id = thread;
    const std::string& verb = rest[0];
    if (verb == "ask" && rest.size() == 2) {
      Json input = {{"messages", Json::array({{{"type", "human"}, {"content", rest[1]}}})}};
      print_result(graph->invoke(input, config));
    } else if (verb == "show") {
      auto snapshot = graph->get_state(config);
      std::cout << snapshot.to_json().dump(2) << "\n";
    } else if (verb == "continue" && rest.size() == 1) {
      print_result(graph->invoke(resume_with(Json{{"action", "continue"}}), config));
    } else if (verb == "update" && rest.size() == 2) {
      print_result(graph->invoke(resume_with(Json{{"action", "update"}, {"data", {{"city", rest[1]}}}}), config));
    } else if (verb == "cancel" && rest.size() == 2) {
      print_result(graph->invoke(resume_with(Json{{"action", "cancel"}, {"data", rest[1]}}), config));
    } else {
      return usage();
    }
  } catch (const tollgate::Error& e) {
    std::cerr << "error (" << tollgate::error_code_name(e.code()) << "): " << e.what() << "\n";
    return 1;
  }
  return 0;
}

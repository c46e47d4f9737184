// An agent that asks the person a question through a tool. The `ask_user` tool is gated with
// only the `respond` decision: the run pauses on the question, and the person's answer becomes
// the tool's result (the tool itself never runs). Stored in SQLite, so the answer can come from
// another process, later:
//
//   ask_user --db trip.db --thread t1 start "plan a weekend trip"   # PAUSED: Which city ...?
//   ask_user --db trip.db --thread t1 answer "Lisbon"               # DONE: ... Lisbon ...
//   ask_user --db trip.db demo                                      # both steps in-process
#include <iostream>
#include <string>

#include "tollgate/agent.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"
#include "tollgate/middleware.h"
#include "tollgate/sqlite_saver.h"

using namespace tollgate;

namespace {

const char* const kScript = R"({"conversations": [{"match": "trip", "replies": [
    {"content": "Let me ask where to.",
     "tool_calls": [{"name": "ask_user", "args": {"question": "Which city would you like to visit?"}}]},
    "Booked a weekend in {tool_results}: train on Friday, back on Sunday."]}],
  "fallback": "Ask me to plan a trip."})";

std::shared_ptr<CompiledGraph> build_agent(const std::string& db) {
  Tool ask_user("ask_user", "Ask the person a question and get their answer.",
                Json::parse(R"({"type":"object","required":["question"],
                  "properties":{"question":{"type":"string"}}})"),
                [](const Json&, const ToolContext&) -> Json {
                  throw Error::Internal("ask_user runs only through a person's respond decision");
                });
  InterruptOnConfig question;
  question.allowed_decisions = {"respond"};
  question.description_fn = [](const ToolCallReview& call) {
    return call.tool_call["args"].value("question", "");
  };
  HumanInTheLoopOptions review;
  review.interrupt_on["ask_user"] = ToolReviewPolicy::with(std::move(question));

  ModelOptions model_options;
  model_options.script = Json::parse(kScript);
  AgentOptions options;
  options.model = init_chat_model("scripted", model_options);
  options.tools = {ask_user};
  options.middleware = {make_human_in_the_loop(std::move(review))};
  options.checkpointer = open_sqlite_saver(db);
  return create_agent(std::move(options));
}

// Prints the question the agent waits on, or its last words.
void report(const RunResult& result) {
  if (result.interrupts.empty()) {
    std::cout << "DONE: " << message_text(result.values["messages"].back()) << "\n";
  } else {
    std::cout << "QUESTION: "
              << result.interrupts[0].value["action_requests"][0]["description"].get<std::string>()
              << "\n";
  }
}

RunResult answer(const CompiledGraph& agent, const RunConfig& thread, const std::string& text) {
  Command respond;
  respond.resume = Json{{"decisions", {{{"type", "respond"}, {"message", text}}}}};
  return agent.invoke(respond, thread);
}

}  // namespace

int main(int argc, char** argv) {
  std::string db = "ask_user.db";
  RunConfig thread;
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
    const std::string flag = argv[i];
    (flag == "--db" ? db : thread.thread_id) = argv[i + 1];
  }
  const std::string command = i < argc ? argv[i] : "";
  const std::string text = i + 1 < argc ? argv[i + 1] : "";
  try {
    auto agent = build_agent(db);
    if (command == "demo") {
      thread.thread_id = "demo-" + uuid4();
      report(agent->invoke(Json{{"messages", {human_message("plan a weekend trip")}}}, thread));
      std::cout << "person: Porto\n";
      report(answer(*agent, thread, "Porto"));
    } else if (command == "start" && !thread.thread_id.empty()) {
      report(agent->invoke(Json{{"messages", {human_message(text)}}}, thread));
    } else if (command == "answer" && !thread.thread_id.empty()) {
      report(answer(*agent, thread, text));
    } else {
      std::cerr << "usage: ask_user [--db FILE] demo | [--db FILE] --thread ID start TEXT | "
                   "answer TEXT\n";
      return 2;
    }
  } catch (const Error& e) {
    std::cerr << "error (" << error_code_name(e.code()) << "): " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// An agent over a SQL database and a message tool, reviewed by a person only where it matters:
//   execute_sql   paused only when the query writes (a C++ `when` predicate using is_sql_write)
//   send_message  always paused; the reviewer may approve, edit (e.g. the recipient) or reject
// The pause is stored in a SQLite file, so the decision can come from another process, later:
//
//   email_sql_agent --db agent.db demo                       # the three cases, decided in-process
//   email_sql_agent --db agent.db --thread t1 ask "archive the cancelled orders"
//   email_sql_agent --db agent.db --thread t1 approve        # ... or: reject "not today"
//   email_sql_agent --db agent.db --thread t2 ask "message alice that the report is ready"
//   email_sql_agent --db agent.db --thread t2 edit '{"to":"bob","text":"The report is ready."}'
//
// The model is scripted (no network); `--model openai:gpt-4.1-mini` uses a real one.
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "demo/demo_model.h"
#include "demo/demo_tools.h"  // the demo database (users, orders) and its execute_sql tool
#include "tollgate/agent.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"
#include "tollgate/middleware.h"
#include "tollgate/sqlite_saver.h"
#include "tollgate/when_rules.h"

using namespace tollgate;

namespace {

// What the scripted model says, chosen from each turn's human message (see docs/config.md).
const char* const kScript = R"({"conversations": [
  {"match": "how many users", "replies": [
    {"tool_calls": [{"name": "execute_sql", "args": {"query": "SELECT COUNT(*) AS users FROM users"}}]},
    "Counted: {tool_results}"]},
  {"match": "how many cancelled", "replies": [
    {"tool_calls": [{"name": "execute_sql",
                     "args": {"query": "SELECT COUNT(*) FROM orders WHERE status = 'cancelled'"}}]},
    "Counted: {tool_results}"]},
  {"match": "archive", "replies": [
    {"content": "I'll archive the cancelled orders.",
     "tool_calls": [{"name": "execute_sql",
                     "args": {"query": "UPDATE orders SET status = 'archived' WHERE status = 'cancelled'"}}]},
    "Archived: {tool_results}"]},
  {"match": "message", "replies": [
    {"tool_calls": [{"name": "send_message", "args": {"to": "alice", "text": "The report is ready."}}]},
    "Message handled: {tool_results}"]}]})";

// send_message: appends "to<TAB>text" to messages.log in the work folder (a stand-in for chat).
Tool message_tool(const std::filesystem::path& log) {
  return Tool("send_message", "Send a short chat message to a colleague.",
              Json::parse(R"({"type":"object","required":["to","text"],
                "properties":{"to":{"type":"string"},"text":{"type":"string"}}})"),
              [log](const Json& args, const ToolContext&) {
                std::ofstream(log, std::ios::app) << args["to"].get<std::string>() << '\t'
                                                  << args["text"].get<std::string>() << '\n';
                return "message sent to " + args["to"].get<std::string>();
              });
}

// The review policy, in C++: SQL only when it writes, messages always (with edits allowed).
HumanInTheLoopOptions review_policy() {
  InterruptOnConfig sql;
  sql.allowed_decisions = {"approve", "reject"};
  sql.when = [](const ToolCallReview& call) {  // fails closed: no query text, a review
    const Json query = call.tool_call["args"].value("query", Json());
    return !query.is_string() || is_sql_write(query.get<std::string>());
  };
  sql.description_fn = [](const ToolCallReview& call) {
    return "This SQL changes the database:\n" + call.tool_call["args"].value("query", "");
  };
  InterruptOnConfig message;
  message.allowed_decisions = {"approve", "edit", "reject"};
  HumanInTheLoopOptions options;
  options.interrupt_on["execute_sql"] = ToolReviewPolicy::with(std::move(sql));
  options.interrupt_on["send_message"] = ToolReviewPolicy::with(std::move(message));
  return options;
}

std::shared_ptr<CompiledGraph> build_agent(const std::string& model_spec, const std::string& db,
                                           const std::filesystem::path& workdir) {
  DemoEnvironment env(workdir);  // demo.db with users and orders
  ModelOptions model_options;
  model_options.script = Json::parse(kScript);
  AgentOptions options;
  options.model = init_chat_model(model_spec, with_demo_model(model_options));
  options.tools = {*find_tool(env.tools(), "execute_sql"),
                   message_tool(env.root() / "messages.log")};
  options.system_prompt = "You answer questions about the shop's database and message colleagues.";
  options.middleware = {make_human_in_the_loop(review_policy(), options.tools)};
  options.checkpointer = open_sqlite_saver(db);
  return create_agent(std::move(options));
}

// Prints the outcome of a run: the pending review, or the agent's last words.
void report(const RunResult& result) {
  if (!result.interrupts.empty()) {
    for (const auto& action : result.interrupts[0].value["action_requests"]) {
      std::cout << "PAUSED for review: " << action["name"].get<std::string>() << " "
                << action["args"].dump() << "\n";
    }
    return;
  }
  std::cout << "DONE: " << message_text(result.values["messages"].back()) << "\n";
}

RunResult decide(CompiledGraph& agent, const RunConfig& thread, Json decision) {
  Command command;
  command.resume = Json{{"decisions", Json::array({std::move(decision)})}};
  return agent.invoke(command, thread);
}

Json edit_decision(const std::string& tool, Json args) {
  return {{"type", "edit"}, {"edited_action", {{"name", tool}, {"args", std::move(args)}}}};
}

// The three cases on one thread: a read runs at once; a write waits and is approved; a message
// waits and goes to another recipient than the model chose.
void demo(CompiledGraph& agent) {
  RunConfig thread;
  thread.thread_id = "demo-" + uuid4();
  auto ask = [&](const std::string& text) {
    std::cout << "> " << text << "\n";
    return agent.invoke(Json{{"messages", {human_message(text)}}}, thread);
  };
  report(ask("how many users are there?"));
  RunResult write = ask("archive the cancelled orders");
  report(write);
  std::cout << "reviewer: approve\n";
  report(decide(agent, thread, {{"type", "approve"}}));
  RunResult message = ask("message alice that the report is ready");
  report(message);
  Json args = message.interrupts.at(0).value["action_requests"][0]["args"];
  args["to"] = "bob";
  std::cout << "reviewer: edit the recipient to bob\n";
  report(decide(agent, thread, edit_decision("send_message", args)));
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> flags = {
      {"--db", "email_sql_agent.db"}, {"--thread", ""}, {"--workdir", ""}, {"--model", "scripted"}};
  int i = 1;
  for (; i + 1 < argc && flags.count(argv[i]) > 0; i += 2) flags[argv[i]] = argv[i + 1];
  const std::string command = i < argc ? argv[i] : "";
  const std::string arg = i + 1 < argc ? argv[i + 1] : "";
  const std::string workdir =
      flags["--workdir"].empty() ? flags["--db"] + ".files" : flags["--workdir"];
  try {
    auto agent = build_agent(flags["--model"], flags["--db"], workdir);
    RunConfig thread;
    thread.thread_id = flags["--thread"];
    if (command == "demo") {
      demo(*agent);
    } else if (command == "ask" && !thread.thread_id.empty()) {
      report(agent->invoke(Json{{"messages", {human_message(arg)}}}, thread));
    } else if (command == "approve" && !thread.thread_id.empty()) {
      report(decide(*agent, thread, {{"type", "approve"}}));
    } else if (command == "reject" && !thread.thread_id.empty()) {
      report(decide(*agent, thread, {{"type", "reject"}, {"message", arg}}));
    } else if (command == "edit" && !thread.thread_id.empty()) {
      const Json pending = agent->get_state(thread).interrupts.at(0).value;
      const std::string tool = pending["action_requests"][0]["name"];
      report(decide(*agent, thread, edit_decision(tool, Json::parse(arg))));
    } else {
      std::cerr << "usage: email_sql_agent [--db FILE] [--workdir DIR] [--model SPEC] demo\n"
                   "       email_sql_agent [--db FILE] --thread ID ask TEXT | approve | "
                   "reject REASON | edit ARGS_JSON\n";
      return 2;
    }
  } catch (const Error& e) {
    std::cerr << "error (" << error_code_name(e.code()) << "): " << e.what() << "\n";
    return 1;
  }
  return 0;
}

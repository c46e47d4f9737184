// A deep agent over a real folder: writes under /secrets/ pause for a person
// (FilesystemPermission ... "interrupt"), and a file-manager subagent whose own policy reviews
// read_file — its review pauses the parent run and is answered on the parent thread. The
// folder is confined: the agent cannot leave it through "..", absolute paths or symlinks.
// Stored in SQLite, so each decision can come from another process, later:
//
//   deep_agent --db d.db --root ./work --thread t1 start "save the api key and my notes"
//   #   PAUSED: write_file {"content":"sk-demo","file_path":"/secrets/key.txt"}
//   deep_agent --db d.db --root ./work --thread t1 approve
//   #   PAUSED: read_file {"file_path":"/notes.txt"}   (inside the file-manager subagent)
//   deep_agent --db d.db --root ./work --thread t1 approve
//   #   DONE: Saved. The file manager says: 1  deploy on friday
//   deep_agent --db d.db --root ./work demo             # all of it in-process
#include <iostream>
#include <string>

#include "tollgate/deep_agent.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"
#include "tollgate/sqlite_saver.h"

using namespace tollgate;

namespace {

// The offline model: one conversation for the main agent, one for the subagent (matched on
// the task description it is given).
const char* const kScript = R"({"conversations": [
  {"match": "summarise", "replies": [
    {"content": "", "tool_calls": [{"name": "read_file", "args": {"file_path": "/notes.txt"}}]},
    "{tool_results}"]},
  {"match": "save", "replies": [
    {"content": "", "tool_calls": [
      {"name": "write_file", "args": {"file_path": "/notes.txt", "content": "deploy on friday"}},
      {"name": "write_file", "args": {"file_path": "/secrets/key.txt", "content": "sk-demo"}}]},
    {"content": "", "tool_calls": [{"name": "task", "args": {
      "description": "Summarise /notes.txt", "subagent_type": "file-manager"}}]},
    "Saved. The file manager says: {tool_results}"]}],
  "fallback": "Ask me to save something."})";

std::shared_ptr<CompiledGraph> build_agent(const std::string& db, const std::string& root) {
  ModelOptions model_options;
  model_options.script = Json::parse(kScript);
  DeepAgentOptions options;
  options.model = init_chat_model("scripted", model_options);
  options.backend = make_directory_backend(root);
  options.permissions = {FilesystemPermission({"write"}, {"/secrets/**"}, "interrupt")};
  options.general_purpose_subagent = false;
  SubAgent file_manager;
  file_manager.name = "file-manager";
  file_manager.description = "Manages file operations";
  file_manager.system_prompt = "You are a file management assistant.";
  file_manager.interrupt_on = parse_interrupt_on({{"read_file", true}});  // replaces the main's
  options.subagents = {file_manager};
  options.checkpointer = open_sqlite_saver(db);
  return create_deep_agent(std::move(options));
}

// Prints what the agent waits on, or its last words.
void report(const RunResult& result) {
  if (result.interrupts.empty()) {
    std::cout << "DONE: " << message_text(result.values["messages"].back()) << "\n";
    return;
  }
  for (const auto& action : result.interrupts[0].value["action_requests"]) {
    std::cout << "PAUSED: " << action["name"].get<std::string>() << " " << action["args"].dump()
              << "\n";
  }
}

RunResult approve(const CompiledGraph& agent, const RunConfig& thread) {
  Command command;
  command.resume = Json{{"decisions", {{{"type", "approve"}}}}};
  return agent.invoke(command, thread);
}

}  // namespace

int main(int argc, char** argv) {
  std::string db = "deep_agent.db", root = "deep_agent_files";
  RunConfig thread;
  int i = 1;
  for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
    const std::string flag = argv[i];
    (flag == "--db" ? db : flag == "--root" ? root : thread.thread_id) = argv[i + 1];
  }
  const std::string command = i < argc ? argv[i] : "";
  const std::string text = i + 1 < argc ? argv[i + 1] : "";
  try {
    auto agent = build_agent(db, root);
    if (command == "demo") {
      thread.thread_id = "demo-" + uuid4();
      RunResult result =
          agent->invoke(Json{{"messages", {human_message("save the api key and my notes")}}},
                        thread);
      while (!result.interrupts.empty()) {
        report(result);
        std::cout << "person: approve\n";
        result = approve(*agent, thread);
      }
      report(result);
    } else if (command == "start" && !thread.thread_id.empty()) {
      report(agent->invoke(Json{{"messages", {human_message(text)}}}, thread));
    } else if (command == "approve" && !thread.thread_id.empty()) {
      report(approve(*agent, thread));
    } else {
      std::cerr << "usage: deep_agent [--db FILE] [--root DIR] demo | ... --thread ID start TEXT "
                   "| ... --thread ID approve\n";
      return 2;
    }
  } catch (const Error& e) {
    std::cerr << "error (" << error_code_name(e.code()) << "): " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// `tollgate chat [--model SPEC] [--db FILE] [--thread ID] [--policy FILE] [--workdir DIR]
//                [--non-interactive]`
//
// A terminal conversation with an agent that uses the demo tools under a review policy. Every
// step is checkpointed in the SQLite file, so a paused thread can be picked up by another
// process with --thread. With --non-interactive, stdin carries JSON lines
// ({"input": "..."} or {"decisions": [...]}) and stdout gets JSON lines
// ({"type": "thread"|"message"|"interrupt"|"status"|"error", ...}) for scripts and tests.
#include <iostream>
#include <memory>
#include <set>
#include <string>

#include "demo/demo_model.h"
#include "demo/demo_tools.h"
#include "main/subcommands.h"
#include "tollgate/agent.h"
#include "tollgate/agent_config.h"
#include "tollgate/chat_model.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"
#include "tollgate/middleware.h"
#include "tollgate/sqlite_saver.h"

namespace tollgate::cli {
namespace {

struct ChatArguments {
  std::string model;
  std::string db = "./tollgate-chat.db";
  std::string thread;
  std::string policy;
  std::string workdir = "./tollgate-demo";
  bool non_interactive = false;
};

// One conversation thread. Not thread-safe: used from the main thread only.
class ChatSession {
 public:
  ChatSession(const ChatArguments& args, std::istream& in, std::ostream& out)
      : in_(in), out_(out), json_mode_(args.non_interactive), env_(args.workdir) {
    std::shared_ptr<ChatModel> model = init_chat_model(args.model, with_demo_model());
    model_name_ = model->name();
    tools_ = env_.tools();
    PolicyContext policy_context;
    policy_context.tools.emplace();
    for (const auto& tool : tools_) policy_context.tools->push_back(tool.name());
    policy_context.sandbox = env_.sandbox();
    HumanInTheLoopOptions policy =
        args.policy.empty() ? demo_policy() : load_policy_file(args.policy, policy_context);
    AgentOptions options;
    options.model = model;
    options.tools = tools_;
    options.system_prompt =
        "You are a helpful assistant. Use the tools to act; some actions need a person's "
        "approval.";
    options.middleware = {make_patch_tool_calls(), make_human_in_the_loop(std::move(policy))};
    options.checkpointer = open_sqlite_saver(args.db);
    options.name = "chat";
    agent_ = create_agent(std::move(options));
    thread_id_ = args.thread.empty() ? uuid4() : args.thread;
    resumed_ = !args.thread.empty();
    db_ = args.db;
  }

  int run() {
    announce();
    if (!pending().empty()) {
      show_pending();
      if (!json_mode_ && !review_until_done()) return 0;
    }
    return json_mode_ ? json_loop() : interactive_loop();
  }

 private:
  RunConfig config() const {
    RunConfig c;
    c.thread_id = thread_id_;
    return c;
  }

  std::vector<Interrupt> pending() const { return agent_->get_state(config()).interrupts; }

  std::set<std::string> message_ids() const {
    std::set<std::string> ids;
    const State values = agent_->get_state(config()).values;
    if (const Json* messages = values.find("messages"); messages && messages->is_array()) {
      for (const auto& m : *messages) ids.insert(message_id(m));
    }
    return ids;
  }

  void emit(const Json& line) { out_ << line.dump() << std::endl; }

  void announce() {
    if (json_mode_) {
      emit({{"type", "thread"}, {"thread_id", thread_id_}, {"model", model_name_}});
      return;
    }
    out_ << "Tollgate chat — thread " << thread_id_ << (resumed_ ? " (resumed)" : " (new)")
         << "\nModel: " << model_name_;
    if (model_name_ == "demo")
      out_ << " (the offline demo model; use --model openai:gpt-4o-mini or another provider "
              "for a real one)";
    out_ << "\nCheckpoints: " << db_ << "   Sandbox: " << env_.sandbox().string()
         << "\nType a request; an empty line or /quit ends (the thread can be resumed with "
            "--thread "
         << thread_id_ << ").\n";
  }

  // Runs the agent on `input`, printing what happens. Returns false when the run failed.
  bool execute(const Input& input) {
    const std::set<std::string> before = message_ids();
    RunConfig c = config();
    std::set<std::string> streamed;  // AI message ids whose tokens were printed
    if (!json_mode_) {
      c.stream_modes = {StreamMode::kMessages, StreamMode::kUpdates};
      c.on_event = [this, &streamed](const StreamEvent& event) { print_event(event, streamed); };
    }
    RunResult result;
    try {
      result = agent_->invoke(input, c);
    } catch (const Error& e) {
      report_error(e);
      return false;
    } catch (const std::exception& e) {
      report_error(Error::Internal(e.what()));
      return false;
    }
    if (json_mode_) {
      const Json* messages = result.values.find("messages");
      if (messages != nullptr && messages->is_array()) {
        for (const auto& m : *messages) {
          if (!before.count(message_id(m))) emit({{"type", "message"}, {"message", m}});
        }
      }
    }
    if (result.paused) {
      show_pending();
    } else if (json_mode_) {
      emit({{"type", "status"}, {"status", "done"}});
    }
    return true;
  }

  void report_error(const Error& e) {
    if (json_mode_) {
      emit({{"type", "error"}, {"code", error_code_name(e.code())}, {"message", e.what()}});
    } else {
      out_ << "\nerror: " << e.what() << "\n";
    }
  }

  void print_event(const StreamEvent& event, std::set<std::string>& streamed) {
    if (!event.ns.empty()) return;
    if (event.mode == StreamMode::kMessages) {
      const Json& chunk = event.data[0];
      if (event.data[1].value("langgraph_node", "") != "model") return;
      const std::string text = content_text(chunk.value("content", Json("")));
      if (text.empty()) return;
      if (streamed.insert(message_id(chunk)).second) out_ << "\nagent> ";
      out_ << text << std::flush;
      return;
    }
    if (event.mode != StreamMode::kUpdates || !event.data.is_object()) return;
    for (const auto& [node, update] : event.data.items()) {
      if (!update.is_object() || !update.contains("messages") || !update["messages"].is_array())
        continue;
      for (const auto& m : update["messages"]) {
        const std::string type = message_type(m);
        if (type == "ai") {
          if (!streamed.count(message_id(m)) && !message_text(m).empty())
            out_ << "\nagent> " << message_text(m);
          for (const auto& call : message_tool_calls(m))
            out_ << "\n  [calls " << call["name"].get<std::string>() << " " << call["args"].dump()
                 << "]";
        } else if (type == "tool") {
          out_ << "\n  [" << m.value("name", "tool")
               << (m.value("status", "") == "error" ? " failed" : "") << "] " << message_text(m);
        }
      }
    }
    out_ << std::flush;
  }

  void show_pending() {
    for (const auto& interrupt : pending()) {
      if (json_mode_) {
        emit({{"type", "interrupt"}, {"id", interrupt.id}, {"value", interrupt.value}});
        continue;
      }
      const Json& actions = interrupt.value.value("action_requests", Json::array());
      out_ << "\n\n" << actions.size() << " action(s) wait for your decision:\n";
      for (std::size_t i = 0; i < actions.size(); ++i) {
        out_ << "  " << i + 1 << ". " << actions[i].value("name", "?") << " "
             << actions[i].value("args", Json::object()).dump(2) << "\n     "
             << actions[i].value("description", "") << "\n";
      }
    }
    if (json_mode_ && !pending().empty()) emit({{"type", "status"}, {"status", "paused"}});
  }

  // ------------------------------------------------------------------- non-interactive mode

  int json_loop() {
    std::string line;
    while (std::getline(in_, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      Json request;
      try {
        request = Json::parse(line);
      } catch (const Json::parse_error& e) {
        emit({{"type", "error"},
              {"code", "invalid_argument"},
              {"message", std::string("not valid JSON: ") + e.what()}});
        continue;
      }
      if (!request.is_object()) {
        emit({{"type", "error"},
              {"code", "invalid_argument"},
              {"message", "each line must be a JSON object"}});
      } else if (request.contains("input")) {
        if (!request["input"].is_string()) {
          emit({{"type", "error"},
                {"code", "invalid_argument"},
                {"message", "input must be a string"}});
        } else if (!pending().empty()) {
          emit({{"type", "error"},
                {"code", "conflict"},
                {"message",
                 "the thread is waiting for decisions; send {\"decisions\": [...]} first"}});
        } else {
          execute(Json{{"messages", Json::array({human_message(request["input"])})}});
        }
      } else if (request.contains("decisions")) {
        resume(Json{{"decisions", request["decisions"]}});
      } else {
        emit({{"type", "error"},
              {"code", "invalid_argument"},
              {"message", "expected {\"input\": \"...\"} or {\"decisions\": [...]}"}});
      }
    }
    return 0;
  }

  bool resume(const Json& response) {
    const auto waiting = pending();
    if (waiting.empty()) {
      report_error(Error::Conflict("nothing to decide: the thread is not waiting for a review"));
      return false;
    }
    Command command;
    if (waiting.size() == 1) {
      command.resume = response;
    } else {
      for (const auto& interrupt : waiting) command.resume_map[interrupt.id] = response;
    }
    return execute(command);
  }

  // ------------------------------------------------------------------------ interactive mode

  int interactive_loop() {
    std::string line;
    while (true) {
      out_ << "\nyou> " << std::flush;
      if (!std::getline(in_, line) || line.empty() || line == "/quit") break;
      if (!execute(Json{{"messages", Json::array({human_message(line)})}})) continue;
      if (!review_until_done()) break;
      out_ << "\n";
    }
    out_ << "\nBye. Resume this thread with: tollgate chat --db " << db_ << " --thread "
         << thread_id_ << "\n";
    return 0;
  }

  // Asks for decisions while the thread is paused. False when the input ended.
  bool review_until_done() {
    while (true) {
      const auto waiting = pending();
      if (waiting.empty()) return true;
      Json decisions = Json::array();
      const Json& value = waiting.front().value;
      const Json& actions = value.value("action_requests", Json::array());
      const Json& configs = value.value("review_configs", Json::array());
      for (std::size_t i = 0; i < actions.size(); ++i) {
        Json decision = ask_decision(actions[i], configs, i + 1, actions.size());
        if (decision.is_null()) {
          out_ << "\nThe thread stays paused; resume it with --thread " << thread_id_ << "\n";
          return false;
        }
        decisions.push_back(std::move(decision));
      }
      if (!resume(Json{{"decisions", decisions}})) out_ << "Please decide again.\n";
    }
  }

  bool read_line(const std::string& prompt, std::string& line) {
    out_ << prompt << std::flush;
    return static_cast<bool>(std::getline(in_, line));
  }

  // One decision for `action`; null when the input ended.
  Json ask_decision(const Json& action, const Json& configs, std::size_t index, std::size_t count) {
    const std::string name = action.value("name", "");
    std::vector<std::string> allowed = {"approve", "edit", "reject", "respond"};
    for (const auto& c : configs) {
      if (c.value("action_name", "") == name && c.contains("allowed_decisions"))
        allowed = c["allowed_decisions"].get<std::vector<std::string>>();
    }
    std::string menu;
    for (const auto& a : allowed) menu += (menu.empty() ? "" : "/") + a;
    std::string line;
    while (true) {
      if (!read_line("\n[" + std::to_string(index) + "/" + std::to_string(count) + "] " + name +
                         " — " + menu + "? ",
                     line))
        return nullptr;
      std::string choice;
      for (const auto& a : allowed) {
        if (!line.empty() && a.rfind(line, 0) == 0) choice = a;
      }
      if (choice.empty()) {
        out_ << "Please answer one of: " << menu << "\n";
        continue;
      }
      if (choice == "approve") return {{"type", "approve"}};
      if (choice == "reject") {
        if (!read_line("Reason for the agent (optional): ", line)) return nullptr;
        Json d = {{"type", "reject"}};
        if (!line.empty()) d["message"] = line;
        return d;
      }
      if (choice == "respond") {
        do {
          if (!read_line("Your answer: ", line)) return nullptr;
        } while (line.empty());
        return {{"type", "respond"}, {"message", line}};
      }
      // edit: new arguments as one line of JSON, checked against the tool's schema.
      const Tool* tool = find_tool(tools_, name);
      out_ << "Current arguments: " << action.value("args", Json::object()).dump() << "\n";
      while (true) {
        if (!read_line("New arguments (JSON object on one line): ", line)) return nullptr;
        Json args;
        try {
          args = Json::parse(line);
        } catch (const Json::parse_error& e) {
          out_ << "Not valid JSON: " << e.what() << "\n";
          continue;
        }
        if (!args.is_object()) {
          out_ << "The arguments must be a JSON object.\n";
          continue;
        }
        if (tool != nullptr) {
          const auto errors = tool->check_args(args);
          if (!errors.empty()) {
            for (const auto& error : errors)
              out_ << "  " << error.path << ": " << error.message << "\n";
            continue;
          }
        }
        return {{"type", "edit"}, {"edited_action", {{"name", name}, {"args", args}}}};
      }
    }
  }

  std::istream& in_;
  std::ostream& out_;
  bool json_mode_;
  DemoEnvironment env_;
  std::vector<Tool> tools_;
  std::shared_ptr<CompiledGraph> agent_;
  std::string model_name_;
  std::string thread_id_;
  std::string db_;
  bool resumed_ = false;
};

}  // namespace

void add_chat_command(CLI::App& app) {
  auto args = std::make_shared<ChatArguments>();
  CLI::App* command = app.add_subcommand(
      "chat", "Talk to an agent that uses the demo tools; risky actions wait for your decision");
  command->add_option("--model", args->model,
                      "provider:model (default: $TOLLGATE_MODEL, else the offline demo model)");
  command->add_option("--db", args->db, "SQLite checkpoint file")->capture_default_str();
  command->add_option("--thread", args->thread, "resume this thread (default: a new one)");
  command->add_option("--policy", args->policy, "review policy file (JSON; default: demo policy)");
  command->add_option("--workdir", args->workdir, "demo folder: sandbox, demo.db, outbox.db")
      ->capture_default_str();
  command->add_flag("--non-interactive", args->non_interactive,
                    "JSON lines on stdin/stdout instead of prompts");
  command->callback([args] {
    ChatSession session(*args, std::cin, std::cout);
    const int code = session.run();
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace tollgate::cli

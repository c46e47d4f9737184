// A paused, resumable agent in thirty lines: the model proposes send_email, a person approves
// it, the run continues. The pause lives in quickstart.db, so the second half could run in
// another process, days later. Uses the offline demo model; pass e.g. "openai:gpt-4.1-mini".
#include <iostream>

#include "demo/demo_model.h"  // the offline demo model (not part of the library)
#include "tollgate/agent.h"
#include "tollgate/messages.h"
#include "tollgate/sqlite_saver.h"

using namespace tollgate;

int main(int argc, char** argv) {
  Tool send_email("send_email", "Send an email.",
                  Json::parse(R"({"type":"object","required":["to","subject","body"],
                    "properties":{"to":{"type":"string"},"subject":{"type":"string"},"body":{"type":"string"}}})"),
                  [](const Json& args, const ToolContext&) { return "sent to " + args["to"].get<std::string>(); });
  auto agent = create_agent({
      .model = init_chat_model(argc > 1 ? argv[1] : "demo", with_demo_model()),
      .tools = {send_email},
      .middleware = {make_human_in_the_loop({.interrupt_on = parse_interrupt_on(Json{{"send_email", true}})})},
      .checkpointer = open_sqlite_saver(argc > 2 ? argv[2] : "quickstart.db")});

  RunConfig thread{.thread_id = "quickstart-" + uuid4()};
  auto paused = agent->invoke(Json{{"messages", {human_message("email bob@example.com about the launch")}}}, thread);
  std::cout << "review requested: " << paused.interrupts.at(0).value.dump(2) << "\n";

  Command approve;
  approve.resume = Json{{"decisions", {{{"type", "approve"}}}}};
  auto done = agent->invoke(approve, thread);
  std::cout << "agent: " << message_text(done.values["messages"].back()) << "\n";
}

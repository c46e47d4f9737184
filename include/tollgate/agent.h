// create_agent: the model ⇄ tools loop as a durable graph, with middleware around it.
//
//   auto agent = create_agent({
//       .model = std::make_shared<ScriptedChatModel>(...),   // or init_chat_model("openai:...")
//       .tools = {send_email_tool, get_weather_tool},
//       .system_prompt = "You are a helpful assistant.",
//       .middleware = {make_human_in_the_loop({.interrupt_on = parse_interrupt_on(
//                          {{"send_email", true}})})},
//       .checkpointer = make_memory_saver()});
//   auto r = agent->invoke(Json{{"messages", {human_message("email bob")}}}, {.thread_id = "t"});
//   // r.interrupts[0].value == {"action_requests": [...], "review_configs": [...]}
//   agent->invoke(Command{.resume = Json{{"decisions", {{{"type", "approve"}}}}}}, {.thread_id =
//   "t"});
//
// The graph (HITL_SEMANTICS.md §2): nodes "model", "tools" (one task per pending tool call, run
// in parallel) and "<Middleware>.before_agent|before_model|after_model|after_agent" for each
// hook a middleware implements; after_model and after_agent hooks run in reverse order. State:
// "messages" (add_messages), "jump_to" (private routing), plus the keys middleware declares.
// Model replies stream token chunks into the `messages` stream mode.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tollgate/chat_model.h"
#include "tollgate/graph.h"
#include "tollgate/middleware.h"
#include "tollgate/tool.h"

namespace tollgate {

struct AgentOptions {
  // Shared: one model instance (thread-safe by contract) serves many agents and runs.
  std::shared_ptr<ChatModel> model;
  std::vector<Tool> tools;
  std::string system_prompt;
  // Shared: hook nodes hold the middleware they call; one instance may serve several agents.
  std::vector<std::shared_ptr<const AgentMiddleware>> middleware;
  std::shared_ptr<Saver> checkpointer;
  std::vector<std::string> interrupt_before;
  std::vector<std::string> interrupt_after;
  Json model_options = Json::object();  // ChatRequest::options of every model call
  std::string name = "agent";
};

// Builds and compiles the agent graph. Throws Error(kInvalidArgument) for a missing model,
// duplicate tool or middleware names, a middleware whose jump targets do not exist, or one that
// names a tool the agent lacks (a HumanInTheLoop interrupt_on entry: "interrupt_on.send_emial:
// unknown tool 'send_emial' (the agent's tools: read_file, send_email)").
std::shared_ptr<CompiledGraph> create_agent(AgentOptions options);

}  // namespace tollgate

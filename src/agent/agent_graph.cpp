// create_agent: builds the model ⇄ tools graph with one node per middleware hook and the edges
// of LangChain's agent factory (HITL_SEMANTICS.md §2.2–§2.5).
#include <algorithm>
#include <set>

#include "agent/agent_toolbox.h"
#include "agent/open_tool_turn.h"
#include "tollgate/agent.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"

namespace tollgate {
namespace {

using Middleware = std::shared_ptr<const AgentMiddleware>;
using Hook = AgentMiddleware::Hook;

constexpr const char* kModelNode = "model";
constexpr const char* kToolsNode = "tools";
constexpr const char* kJumpToKey = "jump_to";

const char* hook_suffix(Hook hook) {
  switch (hook) {
    case AgentMiddleware::kBeforeAgent:
      return ".before_agent";
    case AgentMiddleware::kBeforeModel:
      return ".before_model";
    case AgentMiddleware::kAfterModel:
      return ".after_model";
    case AgentMiddleware::kAfterAgent:
      return ".after_agent";
    default:
      return ".?";
  }
}

std::string hook_node(const Middleware& m, Hook hook) {
  return m->name() + hook_suffix(hook);
}

std::optional<HookResult> call_hook(const AgentMiddleware& m, Hook hook, const HookContext& ctx) {
  switch (hook) {
    case AgentMiddleware::kBeforeAgent:
      return m.before_agent(ctx);
    case AgentMiddleware::kBeforeModel:
      return m.before_model(ctx);
    case AgentMiddleware::kAfterModel:
      return m.after_model(ctx);
    case AgentMiddleware::kAfterAgent:
      return m.after_agent(ctx);
    default:
      return std::nullopt;
  }
}

// Everything the nodes share; owned by the node closures (the compiled graph keeps them alive).
struct AgentCore {
  AgentOptions options;
  std::unique_ptr<AgentToolbox> toolbox;
  std::vector<ToolSpec> tool_specs;
  bool has_tools_node = false;
  std::string loop_entry;
  std::string exit;  // a node name or END

  JsonPtr prompt_message;  // the system prompt as a message, built once; null without one

  // The model's request: the system prompt (if any) and then `messages`, which stay shared.
  ChatRequest chat_request(const std::string& system_prompt, const ChatMessages& messages,
                           const std::vector<ToolSpec>& tools, const Json& model_options) const {
    ChatRequest chat;
    if (system_prompt.empty()) {
      chat.messages = messages;
    } else if (prompt_message && system_prompt == options.system_prompt) {
      chat.messages = ChatMessages(prompt_message, messages);
    } else {
      chat.messages = ChatMessages(make_json_ptr(system_message(system_prompt)), messages);
    }
    chat.tools = tools;
    chat.options = model_options;
    return chat;
  }

  Json invoke_model(const ChatRequest& chat, Runtime* runtime) const {
    const TokenCallback on_chunk = [runtime](const Json& chunk) {
      if (runtime != nullptr) runtime->emit_message_ref(chunk);
    };
    return options.model->invoke(chat, &on_chunk);
  }

  Json call_model(const State& state, Runtime& runtime) const {
    const bool wrapped = std::any_of(
        options.middleware.begin(), options.middleware.end(),
        [](const Middleware& m) { return (m->hooks() & AgentMiddleware::kWrapModelCall) != 0; });
    JsonPtr history = state.value_ptr("messages");
    ChatMessages messages =
        history && history->is_array() ? ChatMessages(std::move(history)) : ChatMessages();
    Json reply;
    if (!wrapped) {
      reply = invoke_model(
          chat_request(options.system_prompt, messages, tool_specs, options.model_options),
          &runtime);
    } else {
      ModelCallRequest request;
      request.messages = std::move(messages);
      request.system_prompt = options.system_prompt;
      request.tools = tool_specs;
      request.options = options.model_options;
      request.state = &state;
      request.runtime = &runtime;
      ModelCallHandler handler = [this](const ModelCallRequest& r) {
        return invoke_model(chat_request(r.system_prompt, r.messages, r.tools, r.options),
                            r.runtime);
      };
      for (auto it = options.middleware.rbegin(); it != options.middleware.rend(); ++it) {
        if (((*it)->hooks() & AgentMiddleware::kWrapModelCall) == 0) continue;
        handler = [m = *it, next = std::move(handler)](const ModelCallRequest& r) {
          return m->wrap_model_call(r, next);
        };
      }
      reply = handler(request);
    }
    if (message_type(reply) != "ai") {
      throw Error::Internal("the model returned a message of type '" + message_type(reply) +
                            "', expected an AI message");
    }
    return normalize_message(std::move(reply));
  }

  // The ToolMessage of `tool_call`; the tool's other state writes go to `state_update`.
  Json call_tool(const Json& tool_call, Runtime& runtime, Json& state_update) const {
    ToolCallRequest request;
    request.tool_call = tool_call;
    request.state = &runtime.graph_state();
    request.runtime = &runtime;
    request.tools = toolbox.get();
    request.state_update = &state_update;
    ToolCallHandler handler = [this](const ToolCallRequest& r) {
      return run_agent_tool(options.tools, r.tool_call, r.runtime, r.state_update,
                            &r.review_rules);
    };
    for (auto it = options.middleware.rbegin(); it != options.middleware.rend(); ++it) {
      if (((*it)->hooks() & AgentMiddleware::kWrapToolCall) == 0) continue;
      handler = [m = *it, next = std::move(handler)](const ToolCallRequest& r) {
        return m->wrap_tool_call(r, next);
      };
    }
    return normalize_message(handler(request));
  }

  // Where a jump goes: "model" -> the loop entry, "end" -> the exit, "tools" -> the pending
  // tool calls (one Send each).
  Route jump_route(JumpTo jump, const State& state) const {
    switch (jump) {
      case JumpTo::kModel:
        return Route(loop_entry);
      case JumpTo::kEnd:
        return Route(exit);
      case JumpTo::kTools: {
        Route route = pending_tool_sends(state);
        if (route.sends.empty()) return Route(loop_entry);
        return route;
      }
    }
    return Route(exit);
  }

  // One Send per tool call of the last AI message that has no ToolMessage yet.
  Route pending_tool_sends(const State& state) const {
    const Json& messages = state["messages"];
    Route route;
    if (!messages.is_array()) return route;
    std::set<std::string, std::less<>> answered;
    for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
      const std::string type = it->value("type", "");
      if (type == "tool" && it->contains("tool_call_id") && (*it)["tool_call_id"].is_string()) {
        answered.insert((*it)["tool_call_id"].get<std::string>());
      } else if (type == "ai") {
        const auto calls = it->find("tool_calls");
        if (calls == it->end() || !calls->is_array() || calls->empty()) continue;  // see open_tool_turn
        for (const auto& call : *calls) {
          const std::string id = call.value("id", "");
          if (answered.count(id) != 0) continue;
          route.sends.push_back(Send{kToolsNode, json_object("tool_call", call)});
        }
        break;
      }
    }
    return route;
  }

  // The edge after the loop exit (LangChain's model_to_tools).
  Route model_to_tools(const State& state) const {
    const Json& jump = state[kJumpToKey];
    if (jump.is_string()) {
      const std::string j = jump.get<std::string>();
      if (j == "model") return jump_route(JumpTo::kModel, state);
      if (j == "end") return jump_route(JumpTo::kEnd, state);
      if (j == "tools") return jump_route(JumpTo::kTools, state);
    }
    const Json& messages = state["messages"];
    const Json* last_ai = nullptr;
    if (messages.is_array()) {
      for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
        if (it->value("type", "") == "ai") {
          last_ai = &*it;
          break;
        }
      }
    }
    // An AI message without calls ends the run, unless it follows a turn whose calls are still
    // open (a resume that kept a resolved card in the history before the calls ran).
    if (last_ai == nullptr || !last_ai->contains("tool_calls") ||
        (*last_ai)["tool_calls"].empty()) {
      if (agent::open_tool_turn(messages) == nullptr) return Route(exit);
    }
    if (!has_tools_node) return Route(exit);
    Route sends = pending_tool_sends(state);
    if (!sends.sends.empty()) return sends;
    return Route(loop_entry);  // every call answered (rejected / responded): back to the model
  }
};

std::optional<JumpTo> parse_jump(const Json& value) {
  if (!value.is_string()) return std::nullopt;
  const std::string& s = value.get_ref<const std::string&>();
  if (s == "model") return JumpTo::kModel;
  if (s == "tools") return JumpTo::kTools;
  if (s == "end") return JumpTo::kEnd;
  return std::nullopt;
}

}  // namespace

const char* jump_to_name(JumpTo jump) {
  switch (jump) {
    case JumpTo::kModel:
      return "model";
    case JumpTo::kTools:
      return "tools";
    case JumpTo::kEnd:
      return "end";
  }
  return "end";
}

std::shared_ptr<CompiledGraph> create_agent(AgentOptions options) {
  if (!options.model) throw Error::InvalidArgument("create_agent: model is required");
  {
    std::set<std::string> names;
    for (const auto& m : options.middleware) {
      if (!m) throw Error::InvalidArgument("create_agent: middleware must not be null");
      if (!names.insert(m->name()).second) {
        throw Error::InvalidArgument("Middleware " + m->name() + " is defined multiple times");
      }
    }
  }
  {
    std::vector<std::string> tool_names;
    for (const auto& tool : options.tools) tool_names.push_back(tool.name());
    for (const auto& m : options.middleware) m->check_tools(tool_names);
  }
  auto core = std::make_shared<AgentCore>();
  core->options = std::move(options);
  core->toolbox = make_agent_toolbox(core->options.tools);  // borrows; throws on duplicates
  core->tool_specs = tool_specs_of(core->options.tools);
  if (!core->options.system_prompt.empty()) {
    core->prompt_message = make_json_ptr(system_message(core->options.system_prompt));
  }
  const AgentOptions& opts = core->options;

  bool wraps_tools = false;
  std::vector<Middleware> before_agent, before_model, after_model, after_agent;
  for (const auto& m : opts.middleware) {
    const unsigned hooks = m->hooks();
    if (hooks & AgentMiddleware::kBeforeAgent) before_agent.push_back(m);
    if (hooks & AgentMiddleware::kBeforeModel) before_model.push_back(m);
    if (hooks & AgentMiddleware::kAfterModel) after_model.push_back(m);
    if (hooks & AgentMiddleware::kAfterAgent) after_agent.push_back(m);
    if (hooks & AgentMiddleware::kWrapToolCall) wraps_tools = true;
  }
  core->has_tools_node = !opts.tools.empty() || wraps_tools;
  core->loop_entry = before_model.empty()
                         ? kModelNode
                         : hook_node(before_model.front(), AgentMiddleware::kBeforeModel);
  const std::string loop_exit = after_model.empty()
                                    ? kModelNode
                                    : hook_node(after_model.front(), AgentMiddleware::kAfterModel);
  core->exit = after_agent.empty() ? std::string(END)
                                   : hook_node(after_agent.back(), AgentMiddleware::kAfterAgent);
  const std::string entry = before_agent.empty()
                                ? core->loop_entry
                                : hook_node(before_agent.front(), AgentMiddleware::kBeforeAgent);

  StateSchema schema;
  schema.add_messages("messages");
  schema.last_value(kJumpToKey).make_private(kJumpToKey);
  for (const auto& m : opts.middleware) m->extend_state(schema);
  StateGraph graph(schema);

  std::shared_ptr<const AgentCore> shared = core;
  graph.add_node(kModelNode, [shared](const State& state, Runtime& runtime) -> NodeResult {
    Json messages(Json::value_t::array);
    messages.push_back(shared->call_model(state, runtime));
    return json_object("messages", std::move(messages), kJumpToKey, nullptr);
  });
  if (core->has_tools_node) {
    graph.add_node(kToolsNode, [shared](const State& input, Runtime& runtime) -> NodeResult {
      Json state_update;  // stays null unless the tool writes other keys
      Json messages(Json::value_t::array);
      messages.push_back(shared->call_tool(input["tool_call"], runtime, state_update));
      if (!state_update.is_object()) return json_object("messages", std::move(messages));
      state_update.erase("messages");
      state_update["messages"] = std::move(messages);
      return state_update;
    });
  }

  // A hook node, and the edge leaving it: `next` normally, the jump target when it jumps.
  const auto add_hook = [&](const Middleware& m, Hook hook, const std::string& next) {
    const std::string node = hook_node(m, hook);
    const std::vector<JumpTo> jumps = m->can_jump_to(hook);
    graph.add_node(
        node, [shared, m, hook, jumps, node](const State& state, Runtime& runtime) -> NodeResult {
          const HookContext ctx{state, runtime, *shared->toolbox};
          std::optional<HookResult> result = call_hook(*m, hook, ctx);
          Json update = result ? std::move(result->update) : Json::object();
          if (!update.is_object())
            throw Error::Internal(node + " returned a state update that is not an object");
          update[kJumpToKey] = nullptr;
          if (result && result->jump_to) {
            if (std::find(jumps.begin(), jumps.end(), *result->jump_to) == jumps.end()) {
              throw Error::Internal(node + " jumped to '" + jump_to_name(*result->jump_to) +
                                    "', which it does not declare in can_jump_to");
            }
            update[kJumpToKey] = jump_to_name(*result->jump_to);
          }
          return update;
        });
    if (node == loop_exit) return;  // routed by model_to_tools
    if (jumps.empty()) {
      graph.add_edge(node, next);
      return;
    }
    std::map<std::string, std::string> targets{
        {next, next}, {core->loop_entry, core->loop_entry}, {core->exit, core->exit}};
    if (core->has_tools_node) targets[kToolsNode] = kToolsNode;
    graph.add_conditional_edges(
        node,
        [shared, next](const State& state) -> Route {
          if (auto jump = parse_jump(state[kJumpToKey])) return shared->jump_route(*jump, state);
          return Route(next);
        },
        targets);
  };

  graph.add_edge(START, entry);
  for (std::size_t i = 0; i < before_agent.size(); ++i) {
    const std::string next = i + 1 < before_agent.size()
                                 ? hook_node(before_agent[i + 1], AgentMiddleware::kBeforeAgent)
                                 : core->loop_entry;
    add_hook(before_agent[i], AgentMiddleware::kBeforeAgent, next);
  }
  for (std::size_t i = 0; i < before_model.size(); ++i) {
    const std::string next = i + 1 < before_model.size()
                                 ? hook_node(before_model[i + 1], AgentMiddleware::kBeforeModel)
                                 : std::string(kModelNode);
    add_hook(before_model[i], AgentMiddleware::kBeforeModel, next);
  }
  if (!after_model.empty()) {
    graph.add_edge(kModelNode, hook_node(after_model.back(), AgentMiddleware::kAfterModel));
  }
  for (std::size_t i = after_model.size(); i-- > 0;) {
    const std::string next =
        i > 0 ? hook_node(after_model[i - 1], AgentMiddleware::kAfterModel) : loop_exit;
    add_hook(after_model[i], AgentMiddleware::kAfterModel, next);
  }
  for (std::size_t i = after_agent.size(); i-- > 0;) {
    const std::string next =
        i > 0 ? hook_node(after_agent[i - 1], AgentMiddleware::kAfterAgent) : std::string(END);
    add_hook(after_agent[i], AgentMiddleware::kAfterAgent, next);
  }

  std::map<std::string, std::string> exit_targets{{core->exit, core->exit},
                                                  {core->loop_entry, core->loop_entry}};
  if (core->has_tools_node) exit_targets[kToolsNode] = kToolsNode;
  graph.add_conditional_edges(
      loop_exit, [shared](const State& state) { return shared->model_to_tools(state); },
      exit_targets);
  if (core->has_tools_node) graph.add_edge(kToolsNode, core->loop_entry);

  CompileOptions compile;
  compile.checkpointer = opts.checkpointer;
  compile.interrupt_before = opts.interrupt_before;
  compile.interrupt_after = opts.interrupt_after;
  compile.name = opts.name;
  return graph.compile(std::move(compile));
}

}  // namespace tollgate

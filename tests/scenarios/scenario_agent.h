// Builds a scenario's agent from its JSON (README.md in this folder): create_agent with the
// tools from the scenario catalog and the HumanInTheLoop / PatchToolCalls middleware, or
// ("kind": "deep_agent") the library's create_deep_agent with its subagents and filesystem
// permissions. Shared by the library runner and the HTTP scenario server, so both run exactly
// the same agent.
#pragma once

#include <memory>
#include <vector>

#include "scenarios/scenario_tools.h"
#include "tollgate/agent.h"
#include "tollgate/chat_model.h"
#include "tollgate/checkpoint.h"

namespace tollgate::scenarios {

// The scenario's scripted model: its "model_script" replies, in order.
std::shared_ptr<ScriptedChatModel> scripted_model(const Json& spec);

// The scenario's agent over `model` (the scripted model or a wrapper of it), checkpointed by
// `saver`; tool executions are recorded in `log`. Throws on a malformed scenario.
std::shared_ptr<CompiledGraph> build_scenario_agent(const Json& spec,
                                                    std::shared_ptr<ChatModel> model,
                                                    std::shared_ptr<Saver> saver,
                                                    std::shared_ptr<ExecutionLog> log);

}  // namespace tollgate::scenarios

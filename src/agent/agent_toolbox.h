// The agent's tools as the agent loop and its middleware use them: names and argument checks
// (AgentToolbox), the specs sent to the model, and running one tool call inside a graph task.
#pragma once

#include <memory>
#include <vector>

#include "tollgate/chat_model.h"
#include "tollgate/middleware.h"
#include "tollgate/tool.h"

namespace tollgate {

// Borrows `tools`, which must outlive the toolbox. Throws Error(kInvalidArgument) on a
// duplicate tool name.
std::unique_ptr<AgentToolbox> make_agent_toolbox(const std::vector<Tool>& tools);
std::vector<ToolSpec> tool_specs_of(const std::vector<Tool>& tools);
// run_tool_call with the task's runtime and run context; the tool's state writes besides its
// message go to `state_update` (may be null); `review_rules` (may be null) are the reviewer
// rules of the call's review (ToolContext::review_rules).
Json run_agent_tool(const std::vector<Tool>& tools, const Json& tool_call, Runtime* runtime,
                    Json* state_update = nullptr, const Json* review_rules = nullptr);

}  // namespace tollgate

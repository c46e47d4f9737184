// The model turn whose tool calls are still open, looked up in a message history. Later AI
// messages without tool calls do not close it: a resume may commit one in the same superstep
// as its decisions (a resolved review card kept in the history), before the calls have run.
#pragma once

#include "tollgate/json.h"

namespace tollgate::agent {

// Searching backwards past ToolMessages and AI messages without tool calls, up to the first AI
// message with tool calls or a message of another type: that AI message when at least one of
// its calls has no ToolMessage after it, else nullptr.
const Json* open_tool_turn(const Json& messages);

}  // namespace tollgate::agent

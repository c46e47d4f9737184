// The message types of LangChain's dict form and every name clients use for them: the one
// table behind add_messages (graph) and normalize_message (messages). Each caller keeps its
// own policy for a name outside the table (add_messages refuses it; normalize_message makes
// an unknown role a "chat" message).
#pragma once

#include <optional>
#include <string_view>

#include "tollgate/json.h"

namespace tollgate::messages_internal {

// The canonical type a "type" or "role" value names: a type ("human", "ai", "system", "tool",
// "function", "chat", "remove", "developer"), a role ("user" -> "human", "assistant" -> "ai")
// or a LangChain class name ("HumanMessage", "AIMessageChunk"), in any letter case; nullopt
// when it names none. "developer" comes back as itself: rewrite_developer_as_system() then
// makes the message a system message.
std::optional<std::string_view> canonical_message_type(std::string_view name);

// True for the types a stored message has: the canonical types but "developer".
bool is_stored_message_type(std::string_view type);

// OpenAI's developer role is a system message for every other provider: sets the message's
// "type" to "system" and records the role in additional_kwargs.__openai_role__ (an
// additional_kwargs that is not an object becomes one).
void rewrite_developer_as_system(Json& message);

}  // namespace tollgate::messages_internal

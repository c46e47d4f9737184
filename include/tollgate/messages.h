// LangChain chat messages as JSON dicts: the form they take in graph state, in checkpoints and
// on the Agent Server wire. A message is an object with a "type" ("human", "ai", "system",
// "tool", "remove", plus "function", "chat", "developer"), an "id", a "content" (a string or a
// list of content blocks) and type-specific fields. Fields this code does not know (name,
// status, artifact, usage_metadata, tool_call_chunks, provider extras) are always kept.
//
// All functions are pure and thread-safe; they never keep references to their arguments.
#pragma once

#include <string>
#include <string_view>

#include "tollgate/json.h"

namespace tollgate {

// The id of a RemoveMessage that clears the whole list (add_messages semantics).
inline constexpr std::string_view kRemoveAllMessages = "__remove_all__";

// A random (version 4) UUID, lowercase with hyphens: "0b7e...-4...-[89ab]...".
std::string uuid4();

// --------------------------------------------------------------------------------- builders
// Each returns the full serialised form (see normalize_message); an empty id means a new
// uuid4. `content` is a string or a list of content blocks.

Json human_message(Json content, std::string id = {});
Json system_message(Json content, std::string id = {});
// `tool_calls` in any form message_tool_calls() accepts.
Json ai_message(Json content, Json tool_calls = Json::array(), std::string id = {});
// status: "success" or "error".
Json tool_message(Json content, std::string tool_call_id, std::string name = {},
                  std::string status = "success", std::string id = {});
// Deletes the message with `id` when written through add_messages; kRemoveAllMessages
// deletes all of them.
Json remove_message(std::string id);
// {"name","args","id","type":"tool_call"}; an empty id becomes "call_<uuid4 hex>".
Json make_tool_call(std::string name, Json args, std::string id = {});

// -------------------------------------------------------------------------------- accessors

// The canonical type of a message in any accepted form ("AIMessageChunk" -> "ai",
// {"role":"user"} -> "human", a class-serialised HumanMessage -> "human"); "" if it has none.
std::string message_type(const Json& message);
// The id, or "" when the message has none.
std::string message_id(const Json& message);
// The text of a content value: the string itself, or its text blocks ("text" and
// "text_delta") concatenated. Other blocks (images, tool_use, ...) are skipped.
std::string content_text(const Json& content);
// content_text() of the message's "content".
std::string message_text(const Json& message);
// The AI message's tool calls as [{"id","name","args","type":"tool_call"}]. Accepts
// LangChain calls (args as an object, or as a JSON string), and OpenAI calls
// ({"type":"function","function":{"name","arguments":"<json>"}}) in "tool_calls" or, when
// that is empty, in "additional_kwargs.tool_calls". Calls whose arguments are not a JSON
// object are left out (normalize_message turns them into invalid_tool_calls).
Json message_tool_calls(const Json& message);

// ------------------------------------------------------------------------- serialised form

// The form the Agent Server sends and stores: {"content","additional_kwargs":{},
// "response_metadata":{},"id","type",...}; for "ai" also "tool_calls" (normalised) and
// "invalid_tool_calls". Accepts the loose input forms clients send: a bare string (human),
// {"role": "user"|"assistant"|"system"|"tool"|"developer"|"function"|<other> (chat)},
// LangChain's class-serialised {"lc":1,"type":"constructor","id":[..,"HumanMessage"],
// "kwargs":{..}}, and "<X>MessageChunk" types (kept as chunks: type "ai" etc. with
// "tool_call_chunks" untouched). A missing id becomes a uuid4. Unknown fields are kept.
// Throws Error(kInvalidArgument) naming the field ("message.type", "message.content",
// "message.tool_call_id", "message.id").
Json normalize_message(Json message);

// ------------------------------------------------------------------------ streamed chunks

// Merges two AI message chunks of one message, as LangChain's `chunk + chunk`: string
// content concatenated (content-block lists merged by their "index"), tool_call_chunks
// concatenated per "index" (id and name from the first chunk that has them, args text
// appended) with tool_calls / invalid_tool_calls re-derived from them (arguments still
// streaming are parsed as far as they go: {"path":"/tm -> {"path":"/tm"}), usage_metadata
// token counts added, additional_kwargs / response_metadata merged (nested objects
// recursively, differing strings concatenated, equal ones kept), the first real id kept (a
// provider id wins over a "run-..." placeholder). Either side may be null (empty).
Json merge_message_chunks(const Json& left, const Json& right);

// The finished AI message of a merged chunk: tool_call_chunks become tool_calls with parsed
// args ("" -> {}), unparsable ones become invalid_tool_calls {"id","name","args",
// "error":"Malformed args.","type":"invalid_tool_call"}; type "ai"; normalised.
Json message_from_chunk(const Json& chunk);

}  // namespace tollgate

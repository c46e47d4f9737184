// Wire shapes of the Agent Server API: records and graph state as the clients expect them
// (AGENT_SERVER_API.md §2).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/store.h"
#include "tollgate/graph.h"

namespace tollgate::server {

Json assistant_to_json(const AssistantRecord& assistant);
Json thread_to_json(const ThreadRecord& thread);
Json run_to_json(const RunRecord& run);

// A ThreadState (§2.3) of `snapshot`; a snapshot without a checkpoint gives the empty
// state with "checkpoint": null.
Json state_to_json(const StateSnapshot& snapshot);
Json empty_state_json();
Json interrupt_to_json(const Interrupt& interrupt);
Json interrupts_to_json(const std::vector<Interrupt>& interrupts);
// task id -> [Interrupt] of a snapshot, as stored in the thread's "interrupts".
// Whether the task waits for a resume: it has interrupts and no result yet.
bool waits_on_interrupt(const TaskInfo& task);
Json interrupts_by_task(const StateSnapshot& snapshot);

// The input's "messages" (a list, one message or a string) in the stored form, by
// tollgate::normalize_message ("role" -> "type", LangChain classes unwrapped, a fresh id for
// each message lacking one); throws Error(kInvalidArgument) naming the field of a message it
// cannot read. An input without "messages" passes unchanged.
Json normalize_input(const Json& input);

// The JSON text of a stream event's data, as every stored and streamed event is written:
// compact, UTF-8, invalid bytes replaced (Json::dump(-1, ' ', false, replace)).
std::string event_json(const Json& value);
// Appends event_json(value) to `out`.
void append_event_json(std::string& out, const Json& value);
// Appends event_json of the array `items` to `out`, its first `keep` items' text taken from
// `previous`, the text of an array whose first `keep` items are the same, where item i's text
// ends at `ends[i]`. `ends` is then made the appended text's (counted from its first byte).
// (A list that grew by a few items costs a copy and the new items, not the whole list.)
void append_array_json(std::string& out, const Json::array_t& items, std::string_view previous,
                       std::size_t keep, std::vector<std::size_t>& ends);
// Texts already written of some values, by state key, each with the value whose text it is
// (views of texts the caller keeps). A text is copied only for that very value, which cannot
// change while it is held here: a channel changes in place only a value nobody else holds.
using ValueTexts = std::map<std::string, std::pair<JsonPtr, std::string_view>, std::less<>>;
// event_json(state.to_json()) without the copy: a `values` event's data. The text of a value
// `known` holds is copied.
std::string state_event_json(const State& state, const ValueTexts* known = nullptr);
// state_event_json with the member `key` written as the JSON text `text`, in its place among
// the members (a state key of that name gives way to it).
std::string state_event_json_with(const State& state, std::string_view key, std::string_view text,
                                  const ValueTexts* known = nullptr);
// A failed run's result: {"__error__": {"error": name, "message": message}} as text.
std::string run_error_json(const std::string& name, const std::string& message);
// event_json of `object` without its member `skip` (the object is not copied).
std::string event_json_without(const Json& object, std::string_view skip);
// event_json of `object` with its member `key` set to the JSON text `value` (such as a
// state's), in its place among the members.
// `value_at`, if given, gets the offset of `value` in the text.
std::string event_json_with_text(const Json& object, std::string_view key, std::string_view value,
                                 std::size_t* value_at = nullptr);
// Appends `text` as a JSON string, the same bytes as event_json(Json(text)).
void append_json_string(std::string& out, std::string_view text);

// True if every key/value of `subset` equals the same key of `object` (metadata filters).
bool json_contains(const Json& object, const Json& subset);

}  // namespace tollgate::server

// The add_messages merge (LangGraph's id-aware message reducer), split into its parts so the
// add_messages channel can run it in place on the list it owns, at a cost proportional to
// the messages written rather than to the length of the conversation.
//
// Messages are JSON objects in LangChain dict form: {"type": "human"|"ai"|"tool"|"system"|
// "function"|"chat"|"remove", "id": string, "content": ..., ...}. Loose client forms are
// coerced first (see coerce_message).
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "tollgate/json.h"

namespace tollgate::graph_internal {

// One message in canonical form: a known "type", a string "id" (a new UUID when missing,
// except for removals, which need one) and a "content". Accepts the loose forms clients send:
// a bare string (a human message), {"role": "user"|"assistant"|"system"|"tool"|...},
// LangChain's class-serialised {"lc":1,"type":"constructor","id":[...,"HumanMessage"],
// "kwargs":{...}}, a [type, content] pair, and "<X>MessageChunk" types. Throws
// Error(kInvalidArgument) naming the offending field; `position` is used in that message.
Json coerce_message(Json message, std::size_t position = 0);

// A write to a messages channel (one message or a list of them) as canonical messages.
Json::array_t coerce_messages(Json write);

// True for {"type":"remove", ...} (canonical messages only).
bool is_remove_message(const Json& message);

// The id → position index of a canonical message list, and the merge against it.
// Does not own the list: every call takes it, and the caller must pass the same list (as
// changed by earlier calls) each time.
//
// Thread-safety: none.
class MessageIndex {
 public:
  // Indexes `messages`, coercing items that are not canonical (e.g. restored from an old
  // checkpoint without ids). Returns the position of the first item it had to change, or
  // messages.size() when none.
  std::size_t rebuild(Json::array_t& messages);
  // Whether every item of `messages` is canonical: index() may take them as they are.
  static bool all_canonical(const Json::array_t& messages);
  // Indexes `messages`, every item canonical (all_canonical), without changing them.
  void index(const Json::array_t& messages);

  // Throws Error(kInvalidArgument) with the reference text "Attempting to delete a message
  // with an ID that doesn't exist ('<id>')" if merging `writes` one after the other would
  // remove an unknown id. Changes nothing, so a failing step leaves the list intact.
  void check_removals(const std::vector<Json::array_t>& writes) const;

  // Merges one coerced write into `messages` (check_removals must have accepted it): a
  // remove-all marker keeps only what follows the last marker, an existing id is replaced
  // in place or removed, a new id is appended. Returns the lowest position whose item
  // changed (the old size when it only appended).
  std::size_t merge(Json::array_t& messages, Json::array_t&& write);

 private:
  std::unordered_map<std::string, std::size_t> positions_;  // id -> position of its last copy
  bool has_duplicates_ = false;  // the list held an id twice when indexed
};

}  // namespace tollgate::graph_internal

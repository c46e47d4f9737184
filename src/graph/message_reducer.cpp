// add_messages: coercion of loose messages (type names from messages/message_types.h), and the
// id-aware merge (see message_reducer.h).
#include "graph/message_reducer.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "core/ids.h"
#include "graph/channel.h"
#include "messages/message_types.h"
#include "tollgate/error.h"

namespace tollgate::graph_internal {
namespace {

constexpr std::string_view kUnexpectedTypeHint =
    "Use one of 'human', 'user', 'ai', 'assistant', 'function', 'tool', 'system', or "
    "'developer'.";

Error invalid_message(std::size_t position, const std::string& what) {
  return Error::InvalidArgument("Invalid message at position " + std::to_string(position) + ": " +
                                what);
}

std::string type_of(const Json& message, std::string_view field, std::size_t position) {
  const Json& type = message[std::string(field)];
  if (!type.is_string()) {
    throw invalid_message(position, "'" + std::string(field) + "' must be a string");
  }
  auto canonical = messages_internal::canonical_message_type(type.get_ref<const std::string&>());
  if (!canonical) {
    throw invalid_message(position, "Unexpected message type: '" +
                                        type.get_ref<const std::string&>() + "'. " +
                                        std::string(kUnexpectedTypeHint));
  }
  return std::string(*canonical);
}

// {"lc":1,"type":"constructor","id":[..., "HumanMessage"],"kwargs":{...}} -> kwargs + type.
Json from_class_serialised(Json message, std::size_t position) {
  const Json& class_path = message["id"];
  if (!class_path.is_array() || class_path.empty() || !class_path.back().is_string()) {
    throw invalid_message(position, "'id' of a serialised message must name its class");
  }
  Json kwargs = message.contains("kwargs") ? std::move(message["kwargs"]) : Json::object();
  if (!kwargs.is_object()) throw invalid_message(position, "'kwargs' must be an object");
  kwargs["type"] = class_path.back();
  return kwargs;
}

}  // namespace

bool is_remove_message(const Json& message) {
  auto type = message.find("type");
  return type != message.end() && type->is_string() &&
         type->get_ref<const std::string&>() == "remove";
}

Json coerce_message(Json message, std::size_t position) {
  if (message.is_string()) {
    return Json{{"type", "human"}, {"content", std::move(message)}, {"id", core::uuid4()}};
  }
  if (message.is_array() && message.size() == 2 && message[0].is_string()) {
    // A (type, content) pair.
    Json pair = std::move(message);
    message = Json{{"type", std::move(pair[0])}, {"content", std::move(pair[1])}};
  }
  if (!message.is_object()) {
    throw invalid_message(position, "a message must be an object or a string, got " +
                                        std::string(message.type_name()));
  }
  if (message.contains("lc") && message.value("type", Json()) == "constructor") {
    message = from_class_serialised(std::move(message), position);
  }

  std::string type;
  if (message.contains("type")) {
    type = type_of(message, "type", position);
  } else if (message.contains("role")) {
    type = type_of(message, "role", position);
    message.erase("role");
  } else {
    throw invalid_message(position, "missing 'type' (or 'role')");
  }
  if (type == "developer") {
    messages_internal::rewrite_developer_as_system(message);
    type = "system";
  } else if (message["type"] != type) {
    message["type"] = type;
  }

  Json& id = message["id"];
  if (id.is_null()) {
    if (type == "remove") throw invalid_message(position, "a remove message needs an 'id'");
    id = core::uuid4();
  } else if (!id.is_string()) {
    throw invalid_message(position, "'id' must be a string");
  }

  auto content = message.find("content");
  if (content == message.end() || content->is_null()) {
    message["content"] = "";
  } else if (!content->is_string() && !content->is_array()) {
    throw invalid_message(position, "'content' must be a string or a list of content blocks");
  }
  if (type == "tool" && !message.value("tool_call_id", Json()).is_string()) {
    throw invalid_message(position, "a tool message needs a string 'tool_call_id'");
  }
  return message;
}

Json::array_t coerce_messages(Json write) {
  Json::array_t messages;
  if (write.is_array()) {
    messages = std::move(write.get_ref<Json::array_t&>());
    for (std::size_t i = 0; i < messages.size(); ++i) {
      messages[i] = coerce_message(std::move(messages[i]), i);
    }
  } else {
    messages.push_back(coerce_message(std::move(write), 0));
  }
  return messages;
}

// --------------------------------------------------------------------------- MessageIndex

namespace {

const std::string& id_of(const Json& message) {
  return message["id"].get_ref<const std::string&>();
}

bool is_remove_all(const Json& message) {
  return is_remove_message(message) && id_of(message) == kRemoveAllMessages;
}

// Where the messages to merge start: after the last remove-all marker, or 0.
std::optional<std::size_t> after_last_remove_all(const Json::array_t& write) {
  for (std::size_t i = write.size(); i > 0; --i) {
    if (is_remove_all(write[i - 1])) return i;
  }
  return std::nullopt;
}

// Whether coerce_message() would leave `message` as it is.
bool is_canonical(const Json& message) {
  if (!message.is_object()) return false;
  auto type = message.find("type");
  auto id = message.find("id");
  auto content = message.find("content");
  if (type == message.end() || !type->is_string() || id == message.end() || !id->is_string() ||
      content == message.end() || !(content->is_string() || content->is_array())) {
    return false;
  }
  const std::string& name = type->get_ref<const std::string&>();
  if (name == "tool" && !message.value("tool_call_id", Json()).is_string()) return false;
  return messages_internal::is_stored_message_type(name);
}

Error unknown_id_removal(const std::string& id) {
  return Error::InvalidArgument("Attempting to delete a message with an ID that doesn't exist ('" +
                                id + "')");
}

}  // namespace

std::size_t MessageIndex::rebuild(Json::array_t& messages) {
  positions_.clear();
  positions_.reserve(messages.size());
  has_duplicates_ = false;
  std::size_t first_changed = messages.size();
  for (std::size_t i = 0; i < messages.size(); ++i) {
    Json& message = messages[i];
    if (!is_canonical(message)) {
      message = coerce_message(std::move(message), i);
      first_changed = std::min(first_changed, i);
    }
    auto [it, inserted] = positions_.insert_or_assign(id_of(message), i);
    has_duplicates_ = has_duplicates_ || !inserted;
  }
  return first_changed;
}

bool MessageIndex::all_canonical(const Json::array_t& messages) {
  return std::all_of(messages.begin(), messages.end(), is_canonical);
}

void MessageIndex::index(const Json::array_t& messages) {
  positions_.clear();
  positions_.reserve(messages.size());
  has_duplicates_ = false;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    auto [it, inserted] = positions_.insert_or_assign(id_of(messages[i]), i);
    has_duplicates_ = has_duplicates_ || !inserted;
  }
}

void MessageIndex::check_removals(const std::vector<Json::array_t>& writes) const {
  // Only a removal can fail; most steps write none, and then there is nothing to simulate.
  const bool any_removal = std::any_of(writes.begin(), writes.end(), [](const auto& write) {
    return std::any_of(write.begin(), write.end(), is_remove_message);
  });
  if (!any_removal) return;
  // Simulates the merges on ids only: `overlay` holds the ids whose presence the earlier
  // writes changed, on top of positions_ (ignored entirely after a remove-all).
  std::unordered_map<std::string, bool> overlay;
  bool cleared = false;
  for (const Json::array_t& write : writes) {
    std::size_t start = 0;
    if (auto after = after_last_remove_all(write)) {
      start = *after;
      cleared = true;
      overlay.clear();
    }
    std::unordered_set<std::string> removed;
    for (std::size_t i = start; i < write.size(); ++i) {
      const std::string& id = id_of(write[i]);
      bool present;
      if (auto it = overlay.find(id); it != overlay.end()) {
        present = it->second;
      } else {
        present = !cleared && positions_.count(id) != 0;
      }
      if (is_remove_message(write[i])) {
        if (!present) throw unknown_id_removal(id);
        removed.insert(id);
      } else {
        overlay[id] = true;
        removed.erase(id);
      }
    }
    for (const std::string& id : removed) overlay[id] = false;
  }
}

std::size_t MessageIndex::merge(Json::array_t& messages, Json::array_t&& write) {
  std::size_t start = 0;
  std::size_t lowest_changed = messages.size();
  if (auto after = after_last_remove_all(write)) {
    start = *after;
    messages.clear();
    positions_.clear();
    has_duplicates_ = false;
    lowest_changed = 0;
  }

  std::unordered_set<std::string> removed;
  for (std::size_t i = start; i < write.size(); ++i) {
    Json& message = write[i];
    const std::string& id = id_of(message);
    auto existing = positions_.find(id);
    if (existing != positions_.end()) {
      if (is_remove_message(message)) {
        removed.insert(id);
      } else {
        removed.erase(id);
        lowest_changed = std::min(lowest_changed, existing->second);
        messages[existing->second] = std::move(message);
      }
    } else {
      assert(!is_remove_message(message) && "check_removals() must accept the write first");
      positions_.emplace(id, messages.size());
      messages.push_back(std::move(message));
    }
  }
  if (removed.empty()) return lowest_changed;

  std::size_t scan_from = messages.size();
  for (const std::string& id : removed) {
    scan_from = std::min(scan_from, positions_.at(id));
    positions_.erase(id);
  }
  // A restored list may hold an id twice (the index knows its last copy only); every copy
  // goes, as in the reference.
  if (has_duplicates_) scan_from = 0;
  std::size_t first_removed = messages.size();
  std::size_t kept = scan_from;
  for (std::size_t i = scan_from; i < messages.size(); ++i) {
    const std::string& id = id_of(messages[i]);
    if (removed.count(id) != 0) {
      first_removed = std::min(first_removed, i);
      continue;
    }
    if (kept != i) {
      messages[kept] = std::move(messages[i]);
      positions_[id_of(messages[kept])] = kept;
    }
    ++kept;
  }
  messages.resize(kept);
  return std::min(lowest_changed, first_removed);
}

// --------------------------------------------------------------------------- pure reducer

Json add_messages(const Json& left, const Json& right) {
  // rebuild() coerces only the items that need it, so a canonical list is copied once.
  Json merged =
      left.is_array() ? left : Json(left.is_null() ? Json::array_t{} : coerce_messages(left));
  Json::array_t& messages = merged.get_ref<Json::array_t&>();
  MessageIndex index;
  index.rebuild(messages);
  std::vector<Json::array_t> writes;
  writes.push_back(coerce_messages(right));
  index.check_removals(writes);
  index.merge(messages, std::move(writes.front()));
  return merged;
}

}  // namespace tollgate::graph_internal

// Streamed AI message chunks: adding two chunks of one message, and turning the sum into the
// finished message (what a streaming model returns and what the messages stream shows).
#include "tollgate/messages.h"

namespace tollgate {
namespace {

bool is_placeholder_id(const std::string& id) {
  return id.starts_with("run-") || id.starts_with("lc_run-");
}

// Objects merged key by key: missing or null on the left takes the right; objects recurse;
// differing strings are concatenated (streamed fields arrive in pieces), equal ones kept
// (fields such as model_name repeat on every chunk); arrays are appended; anything else
// takes the newer value.
void merge_objects(Json& left, const Json& right) {
  for (auto it = right.begin(); it != right.end(); ++it) {
    const Json& value = it.value();
    if (value.is_null()) continue;
    auto existing = left.find(it.key());
    if (existing == left.end() || existing->is_null()) {
      left[it.key()] = value;
    } else if (existing->is_object() && value.is_object()) {
      merge_objects(*existing, value);
    } else if (existing->is_string() && value.is_string()) {
      if (*existing != value) existing->get_ref<std::string&>() += value.get<std::string>();
    } else if (existing->is_array() && value.is_array()) {
      existing->insert(existing->end(), value.begin(), value.end());
    } else {
      *existing = value;
    }
  }
}

// Token counts add up across chunks.
void add_usage(Json& left, const Json& right) {
  for (auto it = right.begin(); it != right.end(); ++it) {
    auto existing = left.find(it.key());
    if (existing == left.end() || existing->is_null()) {
      left[it.key()] = it.value();
    } else if (existing->is_number_integer() && it.value().is_number_integer()) {
      *existing = existing->get<std::int64_t>() + it.value().get<std::int64_t>();
    } else if (existing->is_number() && it.value().is_number()) {
      *existing = existing->get<double>() + it.value().get<double>();
    } else if (existing->is_object() && it.value().is_object()) {
      add_usage(*existing, it.value());
    }
  }
}

void append_text(Json& block, const char* field, const Json& more) {
  if (!more.is_string()) return;
  Json& text = block[field];
  if (text.is_string()) {
    text.get_ref<std::string&>() += more.get<std::string>();
  } else {
    text = more;
  }
}

// The entry of `list` continued by an item with this "index", or nullptr.
Json* find_by_index(Json& list, const Json& index) {
  if (index.is_null()) return nullptr;
  for (auto& item : list) {
    if (item.is_object() && item.contains("index") && item["index"] == index) return &item;
  }
  return nullptr;
}

// Content-block lists: a block with the same "index" as an earlier one continues it.
void merge_blocks(Json& left, const Json& right) {
  for (const auto& block : right) {
    Json index = block.is_object() ? block.value("index", Json()) : Json();
    Json* target_ptr = find_by_index(left, index);
    if (target_ptr == nullptr) {
      left.push_back(block);
      continue;
    }
    Json& target = *target_ptr;
    for (auto it = block.begin(); it != block.end(); ++it) {
      if (it.key() == "index" || it.key() == "type") continue;
      if (it.value().is_string() && target.contains(it.key()) && target[it.key()].is_string()) {
        append_text(target, it.key().c_str(), it.value());
      } else if (!target.contains(it.key()) || target[it.key()].is_null()) {
        target[it.key()] = it.value();
      }
    }
  }
}

Json merge_content(const Json& left, const Json& right) {
  if (left.is_null()) return right;
  if (right.is_null()) return left;
  if (left.is_string() && right.is_string()) {
    return left.get<std::string>() + right.get<std::string>();
  }
  Json merged = left;
  if (merged.is_string()) {
    merged = merged.get<std::string>().empty()
                 ? Json::array()
                 : Json::array({Json{{"type", "text"}, {"text", merged}}});
  }
  if (right.is_string()) {
    if (right.get<std::string>().empty()) return merged;
    if (!merged.empty() && merged.back().is_object() &&
        merged.back().value("type", Json()) == "text") {
      append_text(merged.back(), "text", right);
    } else {
      merged.push_back(Json{{"type", "text"}, {"text", right}});
    }
    return merged;
  }
  if (right.is_array()) merge_blocks(merged, right);
  return merged;
}

bool empty_string_or_null(const Json& value) {
  return value.is_null() || (value.is_string() && value.get<std::string>().empty());
}

void merge_tool_call_chunks(Json& left, const Json& right) {
  for (const auto& chunk : right) {
    Json index = chunk.is_object() ? chunk.value("index", Json()) : Json();
    Json* target_ptr = find_by_index(left, index);
    if (target_ptr == nullptr) {
      left.push_back(chunk);
      continue;
    }
    Json& target = *target_ptr;
    for (const char* field : {"id", "name"}) {
      if (empty_string_or_null(target.value(field, Json())) && chunk.contains(field)) {
        target[field] = chunk[field];
      }
    }
    append_text(target, "args", chunk.value("args", Json()));
  }
}

// Arguments still streaming in: the longest prefix of `text` that parses once its open strings
// and brackets are closed ({"path":"/tm -> {"path":"/tm"}), so a UI can show them growing.
// Null when nothing sensible parses.
Json parse_partial_json(const std::string& text) {
  Json whole = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!whole.is_discarded()) return whole;
  std::string prefix = text;
  while (!prefix.empty()) {
    std::string closers;
    bool in_string = false;
    bool escaped = false;
    for (char c : prefix) {
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{') {
        closers.push_back('}');
      } else if (c == '[') {
        closers.push_back(']');
      } else if ((c == '}' || c == ']') && !closers.empty()) {
        closers.pop_back();
      }
    }
    std::string candidate = prefix;
    if (in_string) {
      if (escaped) candidate.pop_back();
      candidate += '"';
    }
    candidate.append(closers.rbegin(), closers.rend());
    Json parsed = Json::parse(candidate, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded()) return parsed;
    prefix.pop_back();
  }
  return Json();
}

// A chunk's tool_calls / invalid_tool_calls follow from its tool_call_chunks, as in
// LangChain's AIMessageChunk.
void derive_streaming_tool_calls(Json& chunk) {
  Json calls = Json::array();
  Json invalid = Json::array();
  for (const auto& piece : chunk["tool_call_chunks"]) {
    if (!piece.is_object()) continue;
    Json args_text = piece.value("args", Json(""));
    std::string text = args_text.is_string() ? args_text.get<std::string>() : args_text.dump();
    Json args = text.empty() ? Json::object() : parse_partial_json(text);
    Json name = piece.value("name", Json());
    Json id = piece.value("id", Json());
    if (args.is_object()) {
      calls.push_back(Json{{"name", name.is_string() ? name : Json("")},
                           {"args", std::move(args)},
                           {"id", id},
                           {"type", "tool_call"}});
    } else {
      invalid.push_back(Json{{"name", name.is_string() ? name : Json("")},
                             {"args", text},
                             {"id", id},
                             {"error", "Malformed args."},
                             {"type", "invalid_tool_call"}});
    }
  }
  chunk["tool_calls"] = std::move(calls);
  chunk["invalid_tool_calls"] = std::move(invalid);
}

}  // namespace

Json merge_message_chunks(const Json& left, const Json& right) {
  if (left.is_null()) return right;
  if (right.is_null()) return left;
  Json merged = left;
  merged["content"] = merge_content(left.value("content", Json()), right.value("content", Json()));

  std::string left_id = message_id(left);
  std::string right_id = message_id(right);
  if (left_id.empty() ||
      (is_placeholder_id(left_id) && !right_id.empty() && !is_placeholder_id(right_id))) {
    if (!right_id.empty()) merged["id"] = right_id;
  }

  for (auto it = right.begin(); it != right.end(); ++it) {
    const std::string& key = it.key();
    const Json& value = it.value();
    if (key == "content" || key == "id") continue;
    if (key == "usage_metadata" && value.is_object()) {
      if (!merged.contains(key) || !merged[key].is_object()) merged[key] = Json::object();
      add_usage(merged[key], value);
    } else if (key == "tool_call_chunks" && value.is_array()) {
      if (!merged.contains(key) || !merged[key].is_array()) merged[key] = Json::array();
      merge_tool_call_chunks(merged[key], value);
    } else if ((key == "tool_calls" || key == "invalid_tool_calls") && value.is_array()) {
      if (!merged.contains(key) || !merged[key].is_array()) merged[key] = Json::array();
      merged[key].insert(merged[key].end(), value.begin(), value.end());  // re-derived below
    } else if ((key == "additional_kwargs" || key == "response_metadata") && value.is_object()) {
      if (!merged.contains(key) || !merged[key].is_object()) merged[key] = Json::object();
      merge_objects(merged[key], value);
    } else if (!merged.contains(key) || merged[key].is_null()) {
      merged[key] = value;
    }
  }
  if (auto chunks = merged.find("tool_call_chunks");
      chunks != merged.end() && chunks->is_array() && !chunks->empty()) {
    derive_streaming_tool_calls(merged);
  }
  return merged;
}

Json message_from_chunk(const Json& chunk) {
  Json message = chunk.is_object() ? chunk : Json::object();
  message["type"] = "ai";
  auto chunks = message.find("tool_call_chunks");
  if (chunks != message.end()) {
    if (chunks->is_array() && !chunks->empty()) {
      Json calls = Json::array();
      Json invalid = Json::array();  // the chunk's own were about partial arguments
      for (const auto& piece : *chunks) {
        if (!piece.is_object()) continue;
        Json args_text = piece.value("args", Json(""));
        Json name = piece.value("name", Json());
        Json id = piece.value("id", Json());
        std::string text = args_text.is_string() ? args_text.get<std::string>() : args_text.dump();
        Json args = text.find_first_not_of(" \t\r\n") == std::string::npos
                        ? Json::object()
                        : Json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (args.is_object() && name.is_string()) {
          calls.push_back(Json{{"name", name}, {"args", args}, {"id", id}, {"type", "tool_call"}});
        } else {
          invalid.push_back(Json{{"name", name},
                                 {"args", text},
                                 {"id", id},
                                 {"error", "Malformed args."},
                                 {"type", "invalid_tool_call"}});
        }
      }
      message["tool_calls"] = std::move(calls);
      message["invalid_tool_calls"] = std::move(invalid);
    }
    message.erase("tool_call_chunks");
  }
  return normalize_message(std::move(message));
}

}  // namespace tollgate

// Reading messages in every form clients and providers send, and turning them into the one
// serialised form the runtime stores and the Agent Server emits.
#include <algorithm>
#include <string_view>
#include <utility>

#include "messages/message_types.h"
#include "tollgate/error.h"
#include "tollgate/json_parse.h"
#include "tollgate/messages.h"

namespace tollgate {
namespace {

using messages_internal::canonical_message_type;

// obj[key] when it is a string, else "" (never throws on odd input).
std::string string_field(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool is_lc_constructor(const Json& message) {
  if (!message.is_object()) return false;
  const auto type = message.find("type");  // read in place: every message is asked
  if (type == message.end() || !type->is_string() ||
      type->get_ref<const std::string&>() != "constructor") {
    return false;
  }
  const auto id = message.find("id");
  return message.contains("kwargs") && id != message.end() && id->is_array() && !id->empty() &&
         id->back().is_string();
}

// Arguments as a JSON object, or nothing: an object as is, a JSON text holding an object
// (OpenAI sends arguments as text), or empty text/null meaning no arguments.
std::optional<Json> parse_args(const Json& args) {
  if (args.is_object()) return args;
  if (args.is_null()) return Json::object();
  if (!args.is_string()) return std::nullopt;
  const auto& text = args.get_ref<const std::string&>();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return Json::object();
  Json parsed = try_parse_json(text);  // client text: bounded nesting
  if (!parsed.is_object()) return std::nullopt;
  return parsed;
}

struct SplitCalls {
  Json valid = Json::array();
  Json invalid = Json::array();
};

// Already {"name": string, "args": object, "id", "type": "tool_call"} and nothing else.
bool is_canonical_call(const Json& call) {
  if (!call.is_object() || call.size() != 4) return false;
  const auto name = call.find("name");
  const auto args = call.find("args");
  const auto type = call.find("type");
  return name != call.end() && name->is_string() && args != call.end() && args->is_object() &&
         call.contains("id") && type != call.end() && *type == "tool_call";
}

// One call in any accepted form, sorted into valid and invalid.
void normalise_call(const Json& call, SplitCalls& out) {
  if (!call.is_object()) return;
  if (is_canonical_call(call)) {
    out.valid.push_back(call);
    return;
  }
  Json id = call.contains("id") ? call["id"] : Json();
  Json name;
  Json raw_args;
  if (call.contains("function") && call["function"].is_object()) {  // OpenAI
    name = call["function"].value("name", Json());
    raw_args = call["function"].value("arguments", Json());
  } else {
    name = call.value("name", Json());
    raw_args = call.contains("args") ? call["args"] : call.value("input", Json());
  }
  std::optional<Json> args = parse_args(raw_args);
  if (args && name.is_string()) {
    out.valid.push_back(json_object("name", std::move(name), "args", std::move(*args), "id",
                                    std::move(id), "type", "tool_call"));
    return;
  }
  out.invalid.push_back(
      Json{{"name", name},
           {"args", raw_args.is_string() ? raw_args : Json(raw_args.dump())},
           {"id", id},
           {"error", name.is_string() ? "Malformed args." : "tool call has no name"},
           {"type", "invalid_tool_call"}});
}

bool is_streaming_chunk(const Json& message) {
  auto it = message.find("tool_call_chunks");
  return it != message.end() && it->is_array() && !it->empty();
}

// A streaming chunk's provider fields hold argument fragments, never whole calls.
SplitCalls split_tool_calls(const Json& message) {
  SplitCalls out;
  const Json* calls = nullptr;
  if (auto it = message.find("tool_calls"); it != message.end() && it->is_array() && !it->empty()) {
    calls = &*it;
  } else if (is_streaming_chunk(message)) {
    // nothing to promote
  } else if (auto kw = message.find("additional_kwargs"); kw != message.end() && kw->is_object()) {
    if (auto legacy = kw->find("tool_calls");
        legacy != kw->end() && legacy->is_array() && !legacy->empty()) {
      calls = &*legacy;
    }
  }
  if (calls != nullptr) {
    for (const auto& call : *calls) normalise_call(call, out);
  }
  return out;
}

// The fields in_stored_form() reads, found in one pass over the message's members (cheaper
// than a lookup per field).
struct StoredFields {
  const Json* type = nullptr;
  const Json* id = nullptr;
  const Json* content = nullptr;
  const Json* additional_kwargs = nullptr;
  const Json* response_metadata = nullptr;
  const Json* tool_calls = nullptr;
  const Json* invalid_tool_calls = nullptr;
  const Json* tool_call_id = nullptr;
  const Json* status = nullptr;
};

StoredFields stored_fields(const Json::object_t& members) {
  static constexpr std::pair<std::string_view, const Json * StoredFields::*> kFields[] = {
      {"type", &StoredFields::type},
      {"id", &StoredFields::id},
      {"content", &StoredFields::content},
      {"additional_kwargs", &StoredFields::additional_kwargs},
      {"response_metadata", &StoredFields::response_metadata},
      {"tool_calls", &StoredFields::tool_calls},
      {"invalid_tool_calls", &StoredFields::invalid_tool_calls},
      {"tool_call_id", &StoredFields::tool_call_id},
      {"status", &StoredFields::status}};
  StoredFields fields;
  for (const auto& [member, value] : members) {
    const std::string_view key = member;  // compares lengths before bytes
    for (const auto& [name, field] : kFields) {
      if (key == name) {
        fields.*field = &value;
        break;
      }
    }
  }
  return fields;
}

bool is_a(const Json* value, bool (Json::*check)() const noexcept) {
  return value != nullptr && (value->*check)();
}

// True when normalize_message would return `message` unchanged: it is already in the stored
// form (most messages are: the builders make it and every stored message has it). Checking
// this reads each field once and writes nothing, which is most of normalising's cost. Any
// doubt answers false and leaves the message to the full path.
bool in_stored_form(const Json& message) {
  if (!message.is_object()) return false;
  const StoredFields f = stored_fields(message.get_ref<const Json::object_t&>());
  if (!is_a(f.type, &Json::is_string)) return false;
  const std::string& type = f.type->get_ref<const std::string&>();
  // "remove" has rules of its own and "developer" is rewritten: both take the full path.
  if (type == "remove" || !messages_internal::is_stored_message_type(type)) return false;
  if (!is_a(f.id, &Json::is_string) || f.id->get_ref<const std::string&>().empty()) return false;
  if (!is_a(f.content, &Json::is_string) && !is_a(f.content, &Json::is_array)) return false;
  if (!is_a(f.additional_kwargs, &Json::is_object) ||
      !is_a(f.response_metadata, &Json::is_object)) {
    return false;
  }
  if (type == "ai") {
    if (!is_a(f.tool_calls, &Json::is_array) || !is_a(f.invalid_tool_calls, &Json::is_array)) {
      return false;
    }
    if (f.tool_calls->empty()) {
      // The full path would look for calls to promote from the provider's fields.
      return !f.additional_kwargs->contains("tool_calls");
    }
    return std::all_of(f.tool_calls->begin(), f.tool_calls->end(), is_canonical_call);
  }
  if (type == "tool") {
    if (!is_a(f.tool_call_id, &Json::is_string)) return false;
    return f.status == nullptr || *f.status == "success" || *f.status == "error";
  }
  return true;
}

[[noreturn]] void bad_field(const std::string& field, const std::string& problem) {
  throw Error::InvalidArgument("message." + field + " " + problem);
}

}  // namespace

std::string message_type(const Json& message) {
  if (message.is_string()) return "human";
  if (!message.is_object()) return "";
  // An unknown type or class name comes back as given (normalize_message refuses it); an
  // unknown role is a chat message's. The type is looked up once: every message of a
  // conversation is asked, at every model call.
  if (auto it = message.find("type"); it != message.end() && it->is_string()) {
    const std::string& type = it->get_ref<const std::string&>();
    if (type == "constructor" && is_lc_constructor(message)) {
      const std::string& class_name = message["id"].back().get_ref<const std::string&>();
      return std::string(canonical_message_type(class_name).value_or(class_name));
    }
    return std::string(canonical_message_type(type).value_or(type));
  }
  if (auto it = message.find("role"); it != message.end() && it->is_string()) {
    return std::string(canonical_message_type(it->get_ref<const std::string&>()).value_or("chat"));
  }
  return "";
}

std::string message_id(const Json& message) {
  if (!message.is_object()) return "";
  const Json* fields = is_lc_constructor(message) ? &message["kwargs"] : &message;
  auto it = fields->find("id");
  return it != fields->end() && it->is_string() ? it->get<std::string>() : "";
}

std::string content_text(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (!content.is_array()) return out;
  for (const auto& block : content) {
    if (block.is_string()) {
      out += block.get<std::string>();
      continue;
    }
    if (!block.is_object()) continue;
    std::string type = string_field(block, "type");
    if (type != "text" && type != "text_delta") continue;
    if (auto text = block.find("text"); text != block.end() && text->is_string()) {
      out += text->get<std::string>();
    }
  }
  return out;
}

std::string message_text(const Json& message) {
  if (message.is_string()) return message.get<std::string>();
  if (!message.is_object()) return "";
  const Json& fields = is_lc_constructor(message) ? message["kwargs"] : message;
  auto it = fields.find("content");
  return it == fields.end() ? "" : content_text(*it);
}

Json message_tool_calls(const Json& message) {
  if (!message.is_object()) return Json::array();
  const Json& fields = is_lc_constructor(message) ? message["kwargs"] : message;
  return split_tool_calls(fields).valid;
}

Json normalize_message(Json message) {
  if (in_stored_form(message)) return message;
  if (message.is_string()) message = Json{{"type", "human"}, {"content", std::move(message)}};
  if (!message.is_object()) bad_field("type", "missing: a message must be an object or a string");
  std::string type = message_type(message);
  if (is_lc_constructor(message)) {
    Json kwargs = std::move(message["kwargs"]);
    if (!kwargs.is_object()) bad_field("kwargs", "must be an object");
    message = std::move(kwargs);
  } else if (!message.contains("type") && message.contains("role")) {
    if (type != "chat") message.erase("role");
  }
  if (type.empty()) bad_field("type", "missing: expected a \"type\" or a \"role\"");
  if (!canonical_message_type(type)) {
    bad_field("type", "'" + type + "' is not a known message type");
  }
  message["type"] = type;

  auto id = message.find("id");
  if (id == message.end() || id->is_null() ||
      (id->is_string() && id->get_ref<const std::string&>().empty())) {
    if (type == "remove") bad_field("id", "is required for a remove message");
    message["id"] = uuid4();
  } else if (!id->is_string()) {
    bad_field("id", "must be a string");
  }
  if (type == "remove") return message;

  auto content = message.find("content");
  if (content == message.end() || content->is_null()) {
    message["content"] = "";
  } else if (!content->is_string() && !content->is_array()) {
    bad_field("content", "must be a string or a list of content blocks");
  }
  for (const char* field : {"additional_kwargs", "response_metadata"}) {
    auto it = message.find(field);
    if (it == message.end() || it->is_null()) {
      message[field] = Json::object();
    } else if (!it->is_object()) {
      bad_field(field, "must be an object");
    }
  }
  if (type == "developer") {  // after the check above: additional_kwargs is an object
    messages_internal::rewrite_developer_as_system(message);
    return message;
  }
  if (type == "ai") {
    const auto given = message.find("tool_calls");
    if (given != message.end() && given->is_array() && !given->empty() &&
        std::all_of(given->begin(), given->end(), is_canonical_call)) {
      // Already in the stored form (a message built here or normalised before): keep it.
      auto invalid = message.find("invalid_tool_calls");
      if (invalid == message.end() || !invalid->is_array()) {
        message["invalid_tool_calls"] = Json::array();
      }
      return message;
    }
    SplitCalls calls = split_tool_calls(message);
    if (auto old = message.find("invalid_tool_calls"); old != message.end() && old->is_array()) {
      for (auto& call : *old) calls.invalid.push_back(std::move(call));
    }
    message["tool_calls"] = std::move(calls.valid);
    message["invalid_tool_calls"] = std::move(calls.invalid);
  } else if (type == "tool") {
    auto call_id = message.find("tool_call_id");
    if (call_id == message.end() || !call_id->is_string()) {
      bad_field("tool_call_id", "is required for a tool message (a string)");
    }
    if (auto status = message.find("status");
        status != message.end() && *status != "success" && *status != "error") {
      bad_field("status", "must be \"success\" or \"error\"");
    }
  }
  return message;
}

}  // namespace tollgate

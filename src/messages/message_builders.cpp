// The message constructors: every builder returns the serialised form, so a message made in
// C++ looks exactly like one that came over the wire.
#include <algorithm>

#include "core/ids.h"
#include "tollgate/messages.h"

namespace tollgate {

std::string uuid4() {
  return core::uuid4();
}

namespace {

Json base(const char* type, Json content, std::string id) {
  return json_object("content", std::move(content), "additional_kwargs", Json::object(),
                     "response_metadata", Json::object(), "id",
                     id.empty() ? uuid4() : std::move(id), "type", type);
}

}  // namespace

Json human_message(Json content, std::string id) {
  return normalize_message(base("human", std::move(content), std::move(id)));
}

Json system_message(Json content, std::string id) {
  return normalize_message(base("system", std::move(content), std::move(id)));
}

Json ai_message(Json content, Json tool_calls, std::string id) {
  Json message = base("ai", std::move(content), std::move(id));
  message["tool_calls"] = std::move(tool_calls);
  // Calls given in the stored form leave the message in it, so normalising only checks it.
  message["invalid_tool_calls"] = Json::array();
  return normalize_message(std::move(message));
}

Json tool_message(Json content, std::string tool_call_id, std::string name, std::string status,
                  std::string id) {
  Json message = base("tool", std::move(content), std::move(id));
  message["tool_call_id"] = std::move(tool_call_id);
  if (!name.empty()) message["name"] = std::move(name);
  message["status"] = std::move(status);
  return normalize_message(std::move(message));
}

Json remove_message(std::string id) {
  return Json{{"type", "remove"}, {"id", std::move(id)}, {"content", ""}};
}

Json make_tool_call(std::string name, Json args, std::string id) {
  if (id.empty()) {
    id = uuid4();
    id.erase(std::remove(id.begin(), id.end(), '-'), id.end());
    id = "call_" + id;
  }
  return json_object("name", std::move(name), "args", std::move(args), "id", std::move(id), "type",
                     "tool_call");
}

}  // namespace tollgate

#include "agent/open_tool_turn.h"

#include <set>
#include <string>

namespace tollgate::agent {

const Json* open_tool_turn(const Json& messages) {
  if (!messages.is_array()) return nullptr;
  std::set<std::string, std::less<>> answered;
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    if (!it->is_object()) return nullptr;
    const std::string type = it->value("type", "");
    if (type == "tool") {
      const auto id = it->find("tool_call_id");
      if (id != it->end() && id->is_string()) answered.insert(id->get<std::string>());
      continue;
    }
    if (type != "ai") return nullptr;
    const auto calls = it->find("tool_calls");
    if (calls == it->end() || !calls->is_array() || calls->empty()) continue;
    for (const Json& call : *calls) {
      if (answered.count(call.value("id", "")) == 0) return &*it;
    }
    return nullptr;
  }
  return nullptr;
}

}  // namespace tollgate::agent

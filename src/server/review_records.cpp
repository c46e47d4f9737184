#include "server/review_records.h"

#include "core/sha256.h"
#include "server/ids.h"
#include "tollgate/iso_time.h"

namespace tollgate::server {
namespace {

// The tool calls of the last AI message of `messages`, or an empty list.
Json last_tool_calls(const Json& messages) {
  if (!messages.is_array()) return Json::array();
  for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
    if (it->is_object() && it->value("type", "") == "ai") {
      const Json* calls = find_either(*it, "tool_calls", "tool_calls");
      return calls != nullptr && calls->is_array() ? *calls : Json::array();
    }
  }
  return Json::array();
}

// The id of the first unclaimed tool call with the action's name and arguments ("" if none).
std::string claim_tool_call(Json& calls, const Json& action) {
  for (Json& call : calls) {
    if (call.is_null() || call.value("name", "") != action.value("name", "") ||
        call.value("args", Json::object()) != action.value("args", Json::object())) {
      continue;
    }
    std::string id = call.value("id", "");
    call = nullptr;
    return id;
  }
  return "";
}

// The deadline of a timed review config: expires_at (ISO 8601) and on_timeout, as the HITL
// middleware writes them (human_in_the_loop.h). A config without a readable deadline has none.
void read_deadline(const Json& config, ReviewRecord& record) {
  const Json* expires = find_either(config, "expires_at", "expiresAt");
  if (expires == nullptr || !expires->is_string()) return;
  const auto at = parse_iso_utc_millis(expires->get<std::string>());
  if (!at || *at <= 0) return;
  record.expires_at = *at;
  const Json* on_timeout = find_either(config, "on_timeout", "onTimeout");
  if (on_timeout != nullptr && on_timeout->is_object()) record.on_timeout = *on_timeout;
}

}  // namespace

const Json* find_either(const Json& object, const char* snake, const char* camel) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(snake);
  if (it == object.end()) it = object.find(camel);
  return it == object.end() ? nullptr : &*it;
}

std::string action_digest(const Json& action_request) {
  const Json shown{{"name", action_request.value("name", "")},
                   {"args", action_request.value("args", Json::object())}};
  return core::sha256_hex(shown.dump());
}

std::vector<ReviewRecord> review_records_for(const std::string& thread_id,
                                             const std::string& checkpoint_id, const Json& shown,
                                             const Json& messages, const Clock& clock) {
  std::vector<ReviewRecord> records;
  if (!shown.is_object()) return records;
  Json calls = last_tool_calls(messages);
  const std::int64_t now = now_millis(clock);
  for (const auto& [task, interrupts] : shown.items()) {
    for (const Json& interrupt : interrupts) {
      ReviewRecord base;
      base.thread_id = thread_id;
      base.checkpoint_id = checkpoint_id;
      base.interrupt_id = interrupt.value("id", "");
      base.created_at = now;
      const Json& value = interrupt.contains("value") ? interrupt["value"] : Json();
      const Json* actions = find_either(value, "action_requests", "actionRequests");
      if (actions == nullptr || !actions->is_array() || actions->empty()) {
        ReviewRecord r = base;
        r.review_id = new_uuid7(clock);
        r.digest = core::sha256_hex(value.dump());
        records.push_back(std::move(r));
        continue;
      }
      const Json* configs = find_either(value, "review_configs", "reviewConfigs");
      for (std::size_t i = 0; i < actions->size(); ++i) {
        ReviewRecord r = base;
        r.review_id = new_uuid7(clock);
        r.action_index = static_cast<int>(i);
        r.digest = action_digest((*actions)[i]);
        r.tool_call_id = claim_tool_call(calls, (*actions)[i]);
        if (configs != nullptr && configs->is_array() && i < configs->size()) {
          read_deadline((*configs)[i], r);
        }
        records.push_back(std::move(r));
      }
    }
  }
  return records;
}

std::vector<std::string> interrupt_ids_of(const Json& shown) {
  std::vector<std::string> ids;
  if (!shown.is_object()) return ids;
  for (const auto& [task, interrupts] : shown.items()) {
    for (const Json& interrupt : interrupts) {
      if (interrupt.contains("id") && interrupt["id"].is_string()) {
        ids.push_back(interrupt["id"].get<std::string>());
      }
    }
  }
  return ids;
}

}  // namespace tollgate::server

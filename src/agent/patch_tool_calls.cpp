// PatchToolCalls (HITL_SEMANTICS.md §6.3): before each run, every tool call of the history that
// never got a ToolMessage is answered, so the model is never sent a dangling tool call (which
// providers refuse with a 400). A call the new input left unfinished with its effect intent
// stored (docs/effects.md) is answered as one that may have run, not as cancelled.
#include <algorithm>
#include <set>
#include <string_view>
#include <vector>

#include "agent/hitl_texts.h"
#include "tollgate/effect_intents.h"
#include "tollgate/messages.h"
#include "tollgate/middleware.h"

namespace tollgate {
namespace {

std::string call_name(const Json& call) {
  const auto it = call.find("name");
  if (it == call.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
    return "unknown";
  return it->get<std::string>();
}

bool is_type(const Json& message, std::string_view type) {
  if (!message.is_object()) return false;
  const auto it = message.find("type");
  return it != message.end() && it->is_string() && it->get_ref<const std::string&>() == type;
}

// A tool call's id, when it has one.
const std::string* call_id_of(const Json& call) {
  if (!call.is_object()) return nullptr;
  const auto id = call.find("id");
  return id != call.end() && id->is_string() ? &id->get_ref<const std::string&>() : nullptr;
}

// The ids of the history's ToolMessages, viewed in the messages (which outlive them), sorted.
std::vector<std::string_view> answered_ids(const Json& messages) {
  std::vector<std::string_view> ids;
  for (const auto& m : messages) {
    if (!is_type(m, "tool")) continue;
    const auto id = m.find("tool_call_id");
    if (id != m.end() && id->is_string()) ids.push_back(id->get_ref<const std::string&>());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Whether an AI message has a tool call (valid or malformed) whose id is not in `answered`
// (sorted).
bool has_unanswered_call(const Json& messages, const std::vector<std::string_view>& answered) {
  for (const auto& m : messages) {
    if (!is_type(m, "ai")) continue;
    for (const char* key : {"tool_calls", "invalid_tool_calls"}) {
      const auto calls = m.find(key);
      if (calls == m.end() || !calls->is_array()) continue;
      for (const auto& call : *calls) {
        const std::string* id = call_id_of(call);
        if (id != nullptr && !std::binary_search(answered.begin(), answered.end(), *id)) {
          return true;
        }
      }
    }
  }
  return false;
}

// Calls left open at once before the history is read the sorting way (below): the open calls
// are searched at each ToolMessage.
constexpr std::size_t kMostOpenCalls = 64;

// has_unanswered_call against every ToolMessage of the history, in one pass and nothing
// copied: this runs before every run, on every message of the conversation. A call stays open
// until a ToolMessage answers it, which is nearly always among the messages right after it;
// answers met before their call are checked at the end. A history that leaves many calls open
// is read the sorting way instead.
bool has_unanswered_call(const Json& messages) {
  std::vector<std::string_view> open;
  std::vector<std::string_view> answered;
  for (const auto& m : messages) {
    if (!m.is_object()) continue;
    const auto type = m.find("type");
    if (type == m.end() || !type->is_string()) continue;
    const std::string& kind = type->get_ref<const std::string&>();
    if (kind == "tool") {
      const auto id = m.find("tool_call_id");
      if (id == m.end() || !id->is_string()) continue;
      const std::string_view answer = id->get_ref<const std::string&>();
      answered.push_back(answer);
      open.erase(std::remove(open.begin(), open.end(), answer), open.end());
    } else if (kind == "ai") {
      for (const char* key : {"tool_calls", "invalid_tool_calls"}) {
        const auto calls = m.find(key);
        if (calls == m.end() || !calls->is_array()) continue;
        for (const auto& call : *calls) {
          if (const std::string* id = call_id_of(call)) open.push_back(*id);
        }
      }
      if (open.size() > kMostOpenCalls)
        return has_unanswered_call(messages, answered_ids(messages));
    }
  }
  if (open.empty()) return false;
  std::sort(answered.begin(), answered.end());
  return std::any_of(open.begin(), open.end(), [&answered](std::string_view id) {
    return !std::binary_search(answered.begin(), answered.end(), id);
  });
}

class PatchToolCallsMiddleware final : public AgentMiddleware {
 public:
  std::string name() const override { return "PatchToolCallsMiddleware"; }
  unsigned hooks() const override { return kBeforeAgent; }

  std::optional<HookResult> before_agent(const HookContext& ctx) const override {
    const Json& messages = ctx.state["messages"];
    if (!messages.is_array() || messages.empty()) return std::nullopt;
    // Nearly always every call has its answer: then nothing is copied.
    if (!has_unanswered_call(messages)) return std::nullopt;
    const std::vector<std::string_view> ids = answered_ids(messages);
    std::set<std::string_view, std::less<>> answered(ids.begin(), ids.end());
    Json patched = Json::array();
    bool changed = false;
    for (const auto& m : messages) {
      patched.push_back(m);
      if (!is_type(m, "ai")) continue;
      const auto patch = [&](const char* key, std::string_view text) {
        const auto calls = m.find(key);
        if (calls == m.end() || !calls->is_array()) return;
        for (const auto& call : *calls) {
          const std::string* id = call_id_of(call);
          if (id == nullptr || answered.count(*id) != 0) continue;
          const std::string& call_id = *id;
          answered.insert(call_id);
          const std::string name = call_name(call);
          // A call whose intent the discarded step stored may have run: "cancelled" would be
          // untrue.
          const std::string_view said =
              discarded_intent(ctx.runtime, call_id) != nullptr ? hitl_texts::kPatchMayHaveRun : text;
          patched.push_back(tool_message(
              hitl_texts::format_text(said, {{"tool", name}, {"id", call_id}}), call_id, name));
          changed = true;
        }
      };
      patch("tool_calls", hitl_texts::kPatchCancelled);
      patch("invalid_tool_calls", hitl_texts::kPatchMalformed);
    }
    if (!changed) return std::nullopt;
    patched.insert(patched.begin(), remove_message(std::string(kRemoveAllMessages)));
    return HookResult{{{"messages", std::move(patched)}}, {}};
  }
};

}  // namespace

std::shared_ptr<const AgentMiddleware> make_patch_tool_calls() {
  return std::make_shared<const PatchToolCallsMiddleware>();
}

}  // namespace tollgate

#include "messages/message_types.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace tollgate::messages_internal {
namespace {

bool equals_ignoring_case(std::string_view a, std::string_view lowercase) {
  return a.size() == lowercase.size() &&
         std::equal(a.begin(), a.end(), lowercase.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == y;
         });
}

// Each name a client may use, and the canonical type it stands for.
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kNames = {{
    {"human", "human"},
    {"user", "human"},
    {"ai", "ai"},
    {"assistant", "ai"},
    {"system", "system"},
    {"developer", "developer"},
    {"tool", "tool"},
    {"function", "function"},
    {"chat", "chat"},
    {"remove", "remove"},
}};

constexpr std::array<std::string_view, 7> kStoredTypes = {"human",    "ai",   "system", "tool",
                                                          "function", "chat", "remove"};

}  // namespace

std::optional<std::string_view> canonical_message_type(std::string_view name) {
  // A name as stored (the usual case) is found as it is, before any case folding.
  for (const auto& [alias, type] : kNames) {
    if (name == alias) return type;
  }
  if (name.ends_with("Chunk")) name.remove_suffix(5);
  if (name.ends_with("Message")) name.remove_suffix(7);
  for (const auto& [alias, type] : kNames) {
    if (equals_ignoring_case(name, alias)) return type;
  }
  return std::nullopt;
}

bool is_stored_message_type(std::string_view type) {
  return std::find(kStoredTypes.begin(), kStoredTypes.end(), type) != kStoredTypes.end();
}

void rewrite_developer_as_system(Json& message) {
  message["type"] = "system";
  Json& extra = message["additional_kwargs"];
  if (!extra.is_object()) extra = Json::object();
  extra["__openai_role__"] = "developer";
}

}  // namespace tollgate::messages_internal

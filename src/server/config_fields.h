// Readers of config file sections (auth, webhooks): each throws Error(kInvalidArgument) naming
// the field by its path in the file ("auth.users[1].roles", "webhooks[0].url").
#pragma once

#include <string>
#include <vector>

#include "tollgate/json.h"

namespace tollgate::server {

// Refuses a member of `object` that is not one of `keys`.
void only_keys(const Json& object, const std::string& at, const std::vector<std::string>& keys);
// `value` itself, refused unless it is an object.
const Json& object_at(const Json& value, const std::string& at);
// The string member `key` of `object`, `fallback` when absent.
std::string string_at(const Json& object, const char* key, const std::string& at,
                      std::string fallback = "");
// The list of strings `key` of `object`, empty when absent.
std::vector<std::string> strings_at(const Json& object, const char* key, const std::string& at);

}  // namespace tollgate::server

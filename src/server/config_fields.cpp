#include "server/config_fields.h"

#include <algorithm>

#include "tollgate/error.h"

namespace tollgate::server {

void only_keys(const Json& object, const std::string& at, const std::vector<std::string>& keys) {
  for (const auto& [key, value] : object.items()) {
    (void)value;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string expected;
      for (const auto& k : keys) expected += (expected.empty() ? "" : ", ") + k;
      throw Error::InvalidArgument(at + ": unknown key '" + key + "' (expected " + expected + ")");
    }
  }
}

const Json& object_at(const Json& value, const std::string& at) {
  if (!value.is_object()) throw Error::InvalidArgument(at + ": must be an object");
  return value;
}

std::string string_at(const Json& object, const char* key, const std::string& at,
                      std::string fallback) {
  if (!object.contains(key)) return fallback;
  if (!object[key].is_string())
    throw Error::InvalidArgument(at + "." + key + ": must be a string");
  return object[key].get<std::string>();
}

std::vector<std::string> strings_at(const Json& object, const char* key, const std::string& at) {
  std::vector<std::string> out;
  if (!object.contains(key)) return out;
  const Json& list = object[key];
  if (!list.is_array()) throw Error::InvalidArgument(at + "." + key + ": must be a list of strings");
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      throw Error::InvalidArgument(at + "." + key + "[" + std::to_string(i) +
                                   "]: must be a string");
    }
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

}  // namespace tollgate::server

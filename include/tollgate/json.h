// JSON is the value type of Tollgate: state channels, messages, tool arguments, interrupt
// payloads and everything persisted are nlohmann::json values.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace tollgate {

using Json = nlohmann::json;

// An immutable, shared JSON value. Channel values are held this way so that a state
// snapshot handed to several tasks, to a stream consumer or to a saver costs a reference
// count, not a deep copy. Never mutate through a const_cast unless you are the sole owner.
using JsonPtr = std::shared_ptr<const Json>;

inline JsonPtr make_json_ptr(Json value) { return std::make_shared<const Json>(std::move(value)); }

namespace json_detail {
inline void add_members(Json::object_t& /*object*/) {}
template <typename Value, typename... Rest>
void add_members(Json::object_t& object, std::string key, Value&& value, Rest&&... rest) {
  object.emplace(std::move(key), Json(std::forward<Value>(value)));
  add_members(object, std::forward<Rest>(rest)...);
}
}  // namespace json_detail

// {key: value, ...} from alternating keys and values: json_object("name", name, "args", args).
// nlohmann's braced form Json{{"name", name}, ...} first builds a two-element array per member
// and copies values it cannot move; this moves rvalues straight into the object, with about
// half the allocations. For hot paths; a repeated key keeps its first value.
template <typename... Members>
Json json_object(Members&&... members) {
  static_assert(sizeof...(Members) % 2 == 0, "json_object takes key, value pairs");
  Json object(Json::value_t::object);
  json_detail::add_members(object.get_ref<Json::object_t&>(), std::forward<Members>(members)...);
  return object;
}

// The JSON null value, for functions that return a reference to "no value".
inline const Json& null_json() {
  static const Json kNull;
  return kNull;
}

}  // namespace tollgate

// JSON is the value type of Tollgate: state channels, messages, tool arguments, interrupt
// payloads and everything persisted are nlohmann::json values.
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

namespace tollgate {

using Json = nlohmann::json;

// An immutable, shared JSON value. Channel values are held this way so that a state
// snapshot handed to several tasks, to a stream consumer or to a saver costs a reference
// count, not a deep copy. Never mutate through a const_cast unless you are the sole owner.
using JsonPtr = std::shared_ptr<const Json>;

inline JsonPtr make_json_ptr(Json value) { return std::make_shared<const Json>(std::move(value)); }

// The JSON null value, for functions that return a reference to "no value".
inline const Json& null_json() {
  static const Json kNull;
  return kNull;
}

}  // namespace tollgate

// Updating a std::map in place: the loop keeps maps it rewrites every step (the checkpoint
// header, the state view) and only allocates for keys it has not seen before.
// Thread-safety: none; the caller owns the map.
#pragma once

#include <string>
#include <utility>

namespace tollgate::graph_internal {

// Sets map[key] = value without allocating when the key is already there.
template <typename Map, typename Value>
void put_entry(Map& map, const std::string& key, Value&& value) {
  if (auto it = map.find(key); it != map.end()) {
    it->second = std::forward<Value>(value);
  } else {
    map.emplace(key, std::forward<Value>(value));
  }
}

// Removes map[key] if it is there.
template <typename Map>
void erase_entry(Map& map, const std::string& key) {
  if (auto it = map.find(key); it != map.end()) map.erase(it);
}

}  // namespace tollgate::graph_internal

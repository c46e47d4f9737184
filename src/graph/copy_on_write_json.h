// Copy-on-write storage for a channel's value: readers get a shared JsonPtr, and the
// channel edits the value in place as long as nobody else holds it.
//
// Why not const_cast the JsonPtr: a value made with make_json_ptr() is a const object, and
// writing to it is undefined behaviour. This class remembers whether it created the object
// itself (non-const) and only then edits in place; a value adopted from elsewhere (restore)
// is copied once on its first edit.
//
// Thread-safety: none; owned by one channel. Readers on other threads may hold and drop
// JsonPtr copies concurrently; edit() sees their release through the reference count.
#pragma once

#include <atomic>
#include <memory>
#include <utility>

#include "tollgate/json.h"

namespace tollgate::graph_internal {

class CopyOnWriteJson {
 public:
  explicit CopyOnWriteJson(Json initial = nullptr) { assign(std::move(initial)); }

  const Json& value() const { return *value_; }
  const JsonPtr& shared() const { return value_; }

  // Replaces the value with a new one this object owns.
  void assign(Json value) {
    auto owned = std::make_shared<Json>(std::move(value));
    mutable_ = owned.get();
    value_ = std::move(owned);
  }

  // Shares a value created elsewhere; the first edit() copies it.
  void adopt(JsonPtr value) {
    mutable_ = nullptr;
    value_ = std::move(value);
  }

  // Whether the next edit() works in place (no copy).
  bool solely_owned() const { return mutable_ != nullptr && value_.use_count() == 1; }

  // Mutable access to the value: in place when solely owned, otherwise after one copy.
  Json& edit() {
    if (solely_owned()) {
      // Pairs with the release in the other owners' reference-count decrement, so their
      // last reads of the value happen before our writes.
      std::atomic_thread_fence(std::memory_order_acquire);
      return *mutable_;
    }
    assign(Json(*value_));
    return *mutable_;
  }

 private:
  JsonPtr value_;
  Json* mutable_ = nullptr;  // value_ seen as non-const, when this object created it
};

}  // namespace tollgate::graph_internal

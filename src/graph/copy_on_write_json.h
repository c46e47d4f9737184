// Copy-on-write storage for a channel's value: readers get a shared JsonPtr, and the
// channel edits the value in place as long as nobody else holds it.
//
// Why not const_cast any JsonPtr: a value made with make_json_ptr() is a const object, and
// writing to it is undefined behaviour. Values this class creates are non-const objects
// tagged by their deleter type (MutableJsonDeleter), so it can recognise them again, even
// when they come back through restore() after a round trip through a cache, and edit them
// in place when solely owned. Any other value is copied once on its first edit.
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
  // The deleter of values created here; its presence proves the object is not const.
  struct MutableJsonDeleter {
    void operator()(Json* value) const { delete value; }
  };

  explicit CopyOnWriteJson(Json initial = nullptr) { assign(std::move(initial)); }

  const Json& value() const { return *value_; }
  const JsonPtr& shared() const { return value_; }

  // Replaces the value with a new one this object owns.
  void assign(Json value) {
    std::shared_ptr<Json> owned(new Json(std::move(value)), MutableJsonDeleter{});
    mutable_ = owned.get();
    value_ = std::move(owned);
  }

  // Shares `value`. A value some CopyOnWriteJson created stays editable in place (once its
  // other owners let go); any other is copied on the first edit().
  void adopt(JsonPtr value) {
    // Not undefined behaviour: the deleter shows the object was created non-const.
    mutable_ = std::get_deleter<MutableJsonDeleter>(value) != nullptr
                   ? const_cast<Json*>(value.get())
                   : nullptr;
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

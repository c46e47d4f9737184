// Value channels: last-value, reducer, ephemeral, named barrier and topic. The list
// channels (append, add_messages) live in list_channels.cpp.
#include <cassert>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/channel.h"
#include "graph/copy_on_write_json.h"
#include "tollgate/error.h"
#include "tollgate/graph.h"

namespace tollgate {

Json overwrite(Json value) {
  Json write = Json::object();
  write["__overwrite__"] = std::move(value);
  return write;
}

namespace graph_internal {

const Json* overwritten_value(const Json& write) {
  if (!write.is_object()) return nullptr;
  if (write.size() == 1) {
    auto inner = write.find("__overwrite__");
    if (inner != write.end()) return &*inner;
  }
  auto type = write.find("type");
  if (type != write.end() && *type == "__overwrite__") {
    auto inner = write.find("value");
    if (inner != write.end()) return &*inner;
  }
  return nullptr;
}

namespace {

std::string at_key(const std::string& key) {
  return "At key '" + key + "': ";
}

// The value a write stands for: the inner value of an overwrite, else the write itself.
Json unwrap_overwrite(Json&& write) {
  if (const Json* inner = overwritten_value(write)) return *inner;
  return std::move(write);
}

// ------------------------------------------------------------------------------ last value

class LastValueChannel final : public Channel {
 public:
  explicit LastValueChannel(std::string key) : key_(std::move(key)) {}

  std::unique_ptr<Channel> clone_empty() const override {
    return std::make_unique<LastValueChannel>(key_);
  }

  bool update(std::vector<Json>&& writes) override {
    if (writes.empty()) return false;
    if (writes.size() > 1) {
      throw Error::InvalidArgument(at_key(key_) +
                                   "Can receive only one value per step. Use an Annotated key to "
                                   "handle multiple values.");
    }
    value_ = make_json_ptr(unwrap_overwrite(std::move(writes.front())));
    return true;
  }

  bool is_available() const override { return value_ != nullptr; }
  JsonPtr get() const override { return value_; }
  void restore(JsonPtr value) override { value_ = std::move(value); }

 private:
  std::string key_;
  JsonPtr value_;
};

// -------------------------------------------------------------------------------- reducer

class ReducerChannel final : public Channel {
 public:
  ReducerChannel(std::string key, Reducer reducer, std::optional<Json> initial)
      : key_(std::move(key)), reducer_(std::move(reducer)), initial_(std::move(initial)) {
    assert(reducer_ && "a reducer channel needs a reducer");
    restore(nullptr);
  }

  std::unique_ptr<Channel> clone_empty() const override {
    return std::make_unique<ReducerChannel>(key_, reducer_, initial_);
  }

  bool update(std::vector<Json>&& writes) override {
    if (writes.empty()) return false;
    // The new value is built aside and swapped in at the end, so a throwing reducer or a
    // rejected step leaves the channel as it was.
    std::optional<Json> folded;
    std::size_t next = 0;
    bool seen_overwrite = false;
    if (!value_) {
      seen_overwrite = overwritten_value(writes.front()) != nullptr;
      folded = unwrap_overwrite(std::move(writes.front()));
      next = 1;
    }
    for (; next < writes.size(); ++next) {
      if (const Json* inner = overwritten_value(writes[next])) {
        if (seen_overwrite) {
          throw Error::InvalidArgument(at_key(key_) +
                                       "Can receive only one Overwrite value per super-step.");
        }
        seen_overwrite = true;
        folded = *inner;
      } else if (!seen_overwrite) {
        // Writes after an overwrite in the same step are dropped, as in the reference.
        folded = reducer_(folded ? *folded : *value_, writes[next]);
      }
    }
    if (folded) value_ = make_json_ptr(std::move(*folded));
    return true;
  }

  bool is_available() const override { return value_ != nullptr; }
  JsonPtr get() const override { return value_; }
  void restore(JsonPtr value) override {
    value_ = value ? std::move(value) : (initial_ ? make_json_ptr(*initial_) : nullptr);
  }

 private:
  std::string key_;
  Reducer reducer_;
  std::optional<Json> initial_;
  JsonPtr value_;
};

// ------------------------------------------------------------------------------ ephemeral

class EphemeralChannel final : public Channel {
 public:
  EphemeralChannel(std::string key, bool guard) : key_(std::move(key)), guard_(guard) {}

  std::unique_ptr<Channel> clone_empty() const override {
    return std::make_unique<EphemeralChannel>(key_, guard_);
  }

  bool update(std::vector<Json>&& writes) override {
    if (writes.empty()) {
      const bool had_value = value_ != nullptr;
      value_.reset();
      return had_value;
    }
    if (writes.size() > 1 && guard_) {
      throw Error::InvalidArgument(at_key(key_) +
                                   "EphemeralValue(guard=True) can receive only one value per "
                                   "step. Use guard=False if you want to store any one of "
                                   "multiple values.");
    }
    value_ = make_json_ptr(std::move(writes.back()));
    return true;
  }

  bool is_available() const override { return value_ != nullptr; }
  JsonPtr get() const override { return value_; }
  void restore(JsonPtr value) override { value_ = std::move(value); }

 private:
  std::string key_;
  bool guard_;
  JsonPtr value_;
};

// -------------------------------------------------------------------------- named barrier

class NamedBarrierChannel final : public Channel {
 public:
  NamedBarrierChannel(std::string key, std::set<std::string> names)
      : key_(std::move(key)), names_(std::move(names)) {}

  std::unique_ptr<Channel> clone_empty() const override {
    return std::make_unique<NamedBarrierChannel>(key_, names_);
  }

  bool update(std::vector<Json>&& writes) override {
    // Validate everything first so a rejected step changes nothing.
    for (const Json& write : writes) {
      if (!write.is_string() || names_.count(write.get_ref<const std::string&>()) == 0) {
        throw Error::InvalidArgument(at_key(key_) + "Value " + write.dump() + " not in " +
                                     Json(names_).dump());
      }
    }
    bool updated = false;
    for (const Json& write : writes) {
      updated = seen_.insert(write.get_ref<const std::string&>()).second || updated;
    }
    return updated;
  }

  bool is_available() const override { return seen_ == names_; }
  // The barrier carries no value: an available barrier reads as JSON null.
  JsonPtr get() const override { return is_available() ? null_value_ : nullptr; }

  // The names seen so far, sorted; nothing to store when none.
  JsonPtr checkpoint() const override {
    return seen_.empty() ? nullptr : make_json_ptr(Json(seen_));
  }
  void restore(JsonPtr value) override {
    seen_.clear();
    if (!value || !value->is_array()) return;
    for (const Json& name : *value) {
      // Names the graph no longer waits for (it changed since the checkpoint) are dropped.
      if (name.is_string() && names_.count(name.get_ref<const std::string&>()) != 0) {
        seen_.insert(name.get<std::string>());
      }
    }
  }

  bool consume() override {
    if (seen_ != names_) return false;
    seen_.clear();
    return true;
  }

 private:
  std::string key_;
  std::set<std::string> names_;
  std::set<std::string> seen_;
  JsonPtr null_value_ = make_json_ptr(nullptr);
};

// ---------------------------------------------------------------------------------- topic

class TopicChannel final : public Channel {
 public:
  TopicChannel(std::string key, bool accumulate) : key_(std::move(key)), accumulate_(accumulate) {}

  std::unique_ptr<Channel> clone_empty() const override {
    return std::make_unique<TopicChannel>(key_, accumulate_);
  }

  bool update(std::vector<Json>&& writes) override {
    bool updated = false;
    if (!accumulate_ && !empty()) {
      values_.assign(Json::array());
      updated = true;
    }
    for (Json& write : writes) {
      if (write.is_array() && write.empty()) continue;
      Json::array_t& values = values_.edit().get_ref<Json::array_t&>();
      if (write.is_array()) {
        Json::array_t& items = write.get_ref<Json::array_t&>();
        values.insert(values.end(), std::make_move_iterator(items.begin()),
                      std::make_move_iterator(items.end()));
      } else {
        values.push_back(std::move(write));
      }
      updated = true;
    }
    return updated;
  }

  bool is_available() const override { return !empty(); }
  JsonPtr get() const override { return empty() ? nullptr : values_.shared(); }
  void restore(JsonPtr value) override {
    if (!value) {
      values_.assign(Json::array());
    } else if (value->is_array()) {
      values_.adopt(std::move(value));
    } else {
      values_.assign(Json::array({*value}));
    }
  }

 private:
  bool empty() const { return values_.value().empty(); }

  std::string key_;
  bool accumulate_;
  CopyOnWriteJson values_{Json::array()};
};

}  // namespace

std::unique_ptr<Channel> make_last_value_channel(std::string key) {
  return std::make_unique<LastValueChannel>(std::move(key));
}

std::unique_ptr<Channel> make_reducer_channel(std::string key, Reducer reducer,
                                              std::optional<Json> initial) {
  return std::make_unique<ReducerChannel>(std::move(key), std::move(reducer), std::move(initial));
}

std::unique_ptr<Channel> make_ephemeral_channel(std::string key, bool guard) {
  return std::make_unique<EphemeralChannel>(std::move(key), guard);
}

std::unique_ptr<Channel> make_named_barrier_channel(std::string key,
                                                    std::vector<std::string> names) {
  return std::make_unique<NamedBarrierChannel>(std::move(key),
                                               std::set<std::string>(names.begin(), names.end()));
}

std::unique_ptr<Channel> make_topic_channel(std::string key, bool accumulate) {
  return std::make_unique<TopicChannel>(std::move(key), accumulate);
}

}  // namespace graph_internal
}  // namespace tollgate

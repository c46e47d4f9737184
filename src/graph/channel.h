// Channels: one per state key plus the runtime's internal ones (triggers, joins, sends).
// A channel holds a value and folds the writes of one superstep into it.
//
// Values are JsonPtr (immutable, shared). A list channel that is the sole owner of its value
// (use_count() == 1) may append to it in place: that keeps a step's cost independent of the
// list's length. Anything that keeps a JsonPtr alive (a snapshot, a stream consumer) makes
// the next update copy instead, which is correct, only slower.
//
// Thread-safety: none; a channel belongs to one run loop.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tollgate/checkpoint.h"
#include "tollgate/graph.h"
#include "tollgate/json.h"

namespace tollgate::graph_internal {

class Channel {
 public:
  virtual ~Channel() = default;

  // A new, empty channel of the same kind and configuration.
  virtual std::unique_ptr<Channel> clone_empty() const = 0;

  // Folds the writes of one superstep (in task order) into the value. Returns true when the
  // channel was updated. An empty `writes` is also a call: ephemeral channels clear then.
  // Invalid writes throw Error(kInvalidArgument) naming the key, e.g. "At key 'x': Can
  // receive only one value per step. Use an Annotated key to handle multiple values."
  virtual bool update(std::vector<Json>&& writes) = 0;

  // Whether the channel holds a value (an empty last-value channel does not).
  virtual bool is_available() const = 0;

  // The current value; nullptr when not available.
  virtual JsonPtr get() const = 0;

  // The value to persist in a checkpoint (nullptr: nothing to store), and its inverse.
  virtual JsonPtr checkpoint() const { return get(); }
  virtual void restore(JsonPtr value) = 0;
  // restore() of a value a channel of this kind and key gave as its checkpoint() (the values
  // cache hands them back): what restore() checks of a stored value holds already.
  virtual void restore_own(JsonPtr value) { restore(std::move(value)); }

  // Called after a node triggered by this channel ran (barriers reset). True if changed.
  virtual bool consume() { return false; }
  // Called when no more nodes are triggered (deferred channels). True if changed.
  virtual bool finish() { return false; }

  // For list channels: how the value changed since the last mark_saved() (or restore()), as
  // a ListDelta against the value at that time. nullopt: store the whole value.
  virtual std::optional<ListDelta> delta_since_saved() const { return std::nullopt; }
  virtual void mark_saved() {}

  // For list channels: how many leading items are the same as at the last mark_shown() (0
  // before the first, and after a restore()). nullopt: not a list channel.
  virtual std::optional<std::size_t> unchanged_since_shown() const { return std::nullopt; }
  virtual void mark_shown() {}
  // For list channels: counts the list as shown as it was last saved or restored (its items
  // before the first change since then are those of the saved list).
  virtual void mark_shown_as_saved() {}
};

// Factories for the channel kinds. `key` is used in error messages.
std::unique_ptr<Channel> make_last_value_channel(std::string key);
std::unique_ptr<Channel> make_append_channel(std::string key);
std::unique_ptr<Channel> make_add_messages_channel(std::string key);
std::unique_ptr<Channel> make_reducer_channel(std::string key, Reducer reducer,
                                              std::optional<Json> initial);
// Holds a value for one step only; `guard` forbids two writes in one step.
std::unique_ptr<Channel> make_ephemeral_channel(std::string key, bool guard);
// Available once every name in `names` was written ("join:a+b:c" edges); consume() resets.
std::unique_ptr<Channel> make_named_barrier_channel(std::string key, std::vector<std::string> names);
// Collects values (flattening lists) for one step; used for Sends ("__pregel_tasks").
std::unique_ptr<Channel> make_topic_channel(std::string key, bool accumulate);

// The add_messages reducer as a pure function (LangGraph semantics: id-aware merge, replace
// in place by id, {"type":"remove","id":...} removes, "__remove_all__" clears, missing ids
// get a UUID). Throws Error(kInvalidArgument) for removing an unknown id with the reference
// text "Attempting to delete a message with an ID that doesn't exist ('<id>')".
Json add_messages(const Json& left, const Json& right);

inline constexpr std::string_view kRemoveAllMessages = "__remove_all__";

// The value inside an overwrite write ({"__overwrite__": v} or {"type": "__overwrite__",
// "value": v}, see tollgate::overwrite), or nullptr when `write` is an ordinary write.
const Json* overwritten_value(const Json& write);

}  // namespace tollgate::graph_internal

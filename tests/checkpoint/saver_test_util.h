// Helpers for building checkpoints and comparing tuples in saver tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tollgate/checkpoint.h"

namespace tollgate::testing {

// A checkpoint at `step` with the given values and versions; versions_seen carries the dummy
// entry the JS suite uses ({"": {"someChannel": 1}}).
inline Checkpoint make_checkpoint(std::int64_t step, const std::map<std::string, Json>& values = {},
                                  ChannelVersions versions = {}) {
  Checkpoint checkpoint;
  checkpoint.id = new_checkpoint_id(step);
  checkpoint.ts = utc_timestamp();
  for (const auto& [channel, value] : values) {
    checkpoint.channel_values.emplace(channel, make_json_ptr(value));
    if (versions.find(channel) == versions.end()) versions.emplace(channel, 1);
  }
  checkpoint.channel_versions = std::move(versions);
  checkpoint.versions_seen[""]["someChannel"] = 1;
  return checkpoint;
}

inline Json values_of(const Checkpoint& checkpoint) {
  Json out = Json::object();
  for (const auto& [channel, value] : checkpoint.channel_values)
    out[channel] = value ? *value : Json();
  return out;
}

inline ::testing::AssertionResult tuples_equal(const CheckpointTuple& a, const CheckpointTuple& b) {
  auto config_text = [](const std::optional<CheckpointConfig>& c) {
    return c ? Json(*c).dump() : std::string("none");
  };
  if (!(a.config == b.config)) {
    return ::testing::AssertionFailure() << "config " << Json(a.config) << " vs " << Json(b.config);
  }
  if (!(a.checkpoint == b.checkpoint)) {
    return ::testing::AssertionFailure()
           << "checkpoint of " << a.config.checkpoint_id << ": values " << values_of(a.checkpoint)
           << " vs " << values_of(b.checkpoint);
  }
  if (a.metadata != b.metadata) {
    return ::testing::AssertionFailure() << "metadata " << a.metadata << " vs " << b.metadata;
  }
  if (a.parent_config != b.parent_config) {
    return ::testing::AssertionFailure()
           << "parent " << config_text(a.parent_config) << " vs " << config_text(b.parent_config);
  }
  if (a.pending_writes != b.pending_writes) {
    return ::testing::AssertionFailure()
           << "pending writes of " << a.config.checkpoint_id << " differ ("
           << a.pending_writes.size() << " vs " << b.pending_writes.size() << ")";
  }
  return ::testing::AssertionSuccess();
}

// A message of the shape add_messages keeps.
inline Json message(int i, const std::string& branch = "main") {
  return Json{{"type", "human"},
              {"id", branch + "-" + std::to_string(i)},
              {"content", "message number " + std::to_string(i) + " of a long conversation"}};
}

// Drives a thread the way the graph runtime does: one message appended per step, the list
// appended in place while this side is its only owner, a ListDelta per step.
class MessageThread final {
 public:
  MessageThread(Saver& saver, std::string thread_id)
      : saver_(saver), thread_id_(std::move(thread_id)) {}

  // Continues from `parent` (a checkpoint of this thread) whose messages are `messages`.
  // `next_step` numbers the following steps (metadata "step").
  void fork_from(const CheckpointConfig& parent, const Json& messages, std::int64_t next_step = 0) {
    parent_ = parent;
    messages_ = make_json_ptr(messages);
    version_ = 1000000 + next_step;
    messages_version_ = version_;
    step_ = next_step;
  }

  // Appends `item` after keeping the first `keep` messages; returns the new checkpoint.
  CheckpointConfig step(std::size_t keep, const Json& item) {
    if (messages_.use_count() != 1) messages_ = make_json_ptr(*messages_);  // copy on write
    Json& list = const_cast<Json&>(*messages_);
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(keep), list.end());
    list.push_back(item);
    ++version_;
    messages_version_ = version_;
    Checkpoint checkpoint = next_checkpoint();
    checkpoint.versions_seen["agent"]["messages"] = version_ - 1;
    return put(checkpoint, ChannelVersions{{"messages", version_}, {"step", version_}},
               ChannelDeltas{{"messages", ListDelta{keep, Json::array({item})}}});
  }

  CheckpointConfig append(const Json& item) {
    return step(messages_ ? messages_->size() : 0, item);
  }

  // A step that changes only "step": the messages keep the parent's stored value.
  CheckpointConfig touch() {
    ++version_;
    return put(next_checkpoint(), ChannelVersions{{"step", version_}}, {});
  }
  const Json& messages() const { return *messages_; }

 private:
  // The next checkpoint: the messages at messages_version_, "step" at version_.
  Checkpoint next_checkpoint() const {
    Checkpoint checkpoint;
    checkpoint.id = new_checkpoint_id(step_);
    checkpoint.ts = utc_timestamp();
    checkpoint.channel_values.emplace("messages", messages_);
    checkpoint.channel_values.emplace("step", make_json_ptr(step_));
    checkpoint.channel_versions = {{"messages", messages_version_}, {"step", version_}};
    return checkpoint;
  }

  CheckpointConfig put(const Checkpoint& checkpoint, const ChannelVersions& new_versions,
                       const ChannelDeltas& deltas) {
    parent_ = saver_.put(parent_, checkpoint, Json{{"source", "loop"}, {"step", step_}},
                         new_versions, deltas);
    ++step_;
    return parent_;
  }

  Saver& saver_;
  std::string thread_id_;
  CheckpointConfig parent_{thread_id_, "", ""};
  JsonPtr messages_ = make_json_ptr(Json::array());
  std::int64_t step_ = 0;
  ChannelVersion version_ = 0;
  ChannelVersion messages_version_ = 0;  // the messages' version at the last step()
};

}  // namespace tollgate::testing

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

}  // namespace tollgate::testing

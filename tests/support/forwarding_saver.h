// A Saver that passes every call to another one: a base for test savers that change or watch
// one call (fail it, record what it was asked) and leave the rest alone. put_after_writes is
// Saver's default, which calls put_writes and put: a decorator that watches those two sees
// every save (override put_after_writes to pass the combined call on instead).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tollgate/checkpoint.h"

namespace tollgate::testing {

class ForwardingSaver : public Saver {
 public:
  explicit ForwardingSaver(std::shared_ptr<Saver> inner) : inner_(std::move(inner)) {}

  std::optional<CheckpointTuple> get_tuple(const CheckpointConfig& config,
                                           const GetOptions& options = {}) override {
    return inner_->get_tuple(config, options);
  }
  std::vector<CheckpointTuple> list(const ListQuery& query) override { return inner_->list(query); }
  CheckpointConfig put(const CheckpointConfig& config, const Checkpoint& checkpoint,
                       const Json& metadata, const ChannelVersions& new_versions,
                       const ChannelDeltas& deltas = {}) override {
    return inner_->put(config, checkpoint, metadata, new_versions, deltas);
  }
  void put_writes(const CheckpointConfig& config,
                  const std::vector<std::pair<std::string, Json>>& writes,
                  const std::string& task_id, const std::string& task_path = "") override {
    inner_->put_writes(config, writes, task_id, task_path);
  }
  void delete_thread(const std::string& thread_id) override { inner_->delete_thread(thread_id); }
  void prune(const std::vector<std::string>& ids, PruneStrategy strategy) override {
    inner_->prune(ids, strategy);
  }
  void copy_thread(const std::string& from, const std::string& to) override {
    inner_->copy_thread(from, to);
  }
  ChannelVersion next_version(std::optional<ChannelVersion> current) const override {
    return inner_->next_version(current);
  }
  SaverStats stats() const override { return inner_->stats(); }

 protected:
  Saver& inner() { return *inner_; }

 private:
  std::shared_ptr<Saver> inner_;
};

}  // namespace tollgate::testing

// A Saver decorator for fault tests of savers without files (the memory saver): it counts the
// put and put_writes calls since it was made and fails the Nth of them once with
// Error(kUnavailable), before the inner saver sees it; every other call is passed through.
// Given a fault of its own, it runs that before the Nth call instead (e.g. breaking the
// connection of a PostgreSQL saver) and then lets the call through.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tollgate/checkpoint.h"
#include "tollgate/error.h"

namespace tollgate::testing {

class FailingSaver final : public Saver {
 public:
  // fail_at: the 1-based number of the put or put_writes call to fail; 0: none (count only).
  FailingSaver(std::shared_ptr<Saver> inner, std::uint64_t fail_at)
      : inner_(std::move(inner)), fail_at_(fail_at) {}
  // fault: what happens before the call numbered fail_at (which then goes to the inner saver).
  FailingSaver(std::shared_ptr<Saver> inner, std::uint64_t fail_at, std::function<void()> fault)
      : inner_(std::move(inner)), fail_at_(fail_at), fault_(std::move(fault)) {}

  std::uint64_t calls() const { return calls_.load(); }
  bool fired() const { return calls_.load() >= fail_at_ && fail_at_ > 0; }

  std::optional<CheckpointTuple> get_tuple(const CheckpointConfig& config,
                                           const GetOptions& options = {}) override {
    return inner_->get_tuple(config, options);
  }
  std::vector<CheckpointTuple> list(const ListQuery& query) override { return inner_->list(query); }
  CheckpointConfig put(const CheckpointConfig& config, const Checkpoint& checkpoint,
                       const Json& metadata, const ChannelVersions& new_versions,
                       const ChannelDeltas& deltas = {}) override {
    count("put");
    return inner_->put(config, checkpoint, metadata, new_versions, deltas);
  }
  void put_writes(const CheckpointConfig& config,
                  const std::vector<std::pair<std::string, Json>>& writes,
                  const std::string& task_id, const std::string& task_path = "") override {
    count("put_writes");
    inner_->put_writes(config, writes, task_id, task_path);
  }
  void delete_thread(const std::string& thread_id) override { inner_->delete_thread(thread_id); }
  void prune(const std::vector<std::string>& thread_ids, PruneStrategy strategy) override {
    inner_->prune(thread_ids, strategy);
  }
  void copy_thread(const std::string& source_thread_id,
                   const std::string& target_thread_id) override {
    inner_->copy_thread(source_thread_id, target_thread_id);
  }
  ChannelVersion next_version(std::optional<ChannelVersion> current) const override {
    return inner_->next_version(current);
  }
  SaverStats stats() const override { return inner_->stats(); }

 private:
  void count(const char* call) {
    if (calls_.fetch_add(1) + 1 == fail_at_) {
      if (fault_) {
        fault_();
        return;
      }
      throw Error::Unavailable(std::string("injected failure of ") + call + " call " +
                               std::to_string(fail_at_));
    }
  }

  std::shared_ptr<Saver> inner_;
  const std::uint64_t fail_at_;
  const std::function<void()> fault_;
  std::atomic<std::uint64_t> calls_{0};
};

}  // namespace tollgate::testing

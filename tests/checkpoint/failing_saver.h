// A Saver decorator for fault tests of savers without files (the memory saver): it counts the
// put and put_writes calls since it was made (put_after_writes counts as both) and fails the Nth of them once with
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

#include "support/forwarding_saver.h"
#include "tollgate/checkpoint.h"
#include "tollgate/error.h"

namespace tollgate::testing {

class FailingSaver final : public ForwardingSaver {
 public:
  // fail_at: the 1-based number of the put or put_writes call to fail; 0: none (count only).
  FailingSaver(std::shared_ptr<Saver> inner, std::uint64_t fail_at)
      : ForwardingSaver(std::move(inner)), fail_at_(fail_at) {}
  // fault: what happens before the call numbered fail_at (which then goes to the inner saver).
  FailingSaver(std::shared_ptr<Saver> inner, std::uint64_t fail_at, std::function<void()> fault)
      : ForwardingSaver(std::move(inner)), fail_at_(fail_at), fault_(std::move(fault)) {}

  std::uint64_t calls() const { return calls_.load(); }
  bool fired() const { return calls_.load() >= fail_at_ && fail_at_ > 0; }

  CheckpointConfig put(const CheckpointConfig& config, const Checkpoint& checkpoint,
                       const Json& metadata, const ChannelVersions& new_versions,
                       const ChannelDeltas& deltas = {}) override {
    count("put");
    return ForwardingSaver::put(config, checkpoint, metadata, new_versions, deltas);
  }
  void put_writes(const CheckpointConfig& config,
                  const std::vector<std::pair<std::string, Json>>& writes,
                  const std::string& task_id, const std::string& task_path = "") override {
    count("put_writes");
    ForwardingSaver::put_writes(config, writes, task_id, task_path);
  }
  // Two calls, the writes' then the checkpoint's; the inner saver gets the combined call (one
  // transaction), so a failure injected at either stores neither.
  CheckpointConfig put_after_writes(const CheckpointConfig& writes_config,
                                    const std::vector<std::pair<std::string, Json>>& writes,
                                    const std::string& task_id, const std::string& task_path,
                                    const CheckpointConfig& config, const Checkpoint& checkpoint,
                                    const Json& metadata, const ChannelVersions& new_versions,
                                    const ChannelDeltas& deltas = {}) override {
    count("put_writes");
    count("put");
    return inner().put_after_writes(writes_config, writes, task_id, task_path, config,
                                    checkpoint, metadata, new_versions, deltas);
  }

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

  const std::uint64_t fail_at_;
  const std::function<void()> fault_;
  std::atomic<std::uint64_t> calls_{0};
};

}  // namespace tollgate::testing

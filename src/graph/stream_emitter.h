// Delivers stream events of one run (and its subgraphs) to RunConfig::on_event, one at a
// time, only for the modes the caller asked for.
//
// Thread-safety: emit() may be called from several task threads; one mutex serialises the
// callback.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "tollgate/graph.h"

namespace tollgate::graph_internal {

class StreamEmitter {
 public:
  explicit StreamEmitter(const RunConfig& config) : config_(config) {
    if (!config.on_event) return;
    for (StreamMode mode : config.stream_modes) mask_ |= 1U << static_cast<unsigned>(mode);
  }

  // Whether an event of `mode` from namespace `ns` would be delivered (build it only then).
  bool wants(StreamMode mode, const std::vector<std::string>& ns) const {
    if ((mask_ & (1U << static_cast<unsigned>(mode))) == 0) return false;
    return ns.empty() || config_.stream_subgraphs;
  }

  // Whether `checkpoints` events carry the state (RunConfig::checkpoint_values).
  bool checkpoint_values() const { return config_.checkpoint_values; }
  // Whether `values` and task-start `tasks` events hand the state over by reference
  // (RunConfig::state_by_reference).
  bool state_by_reference() const { return config_.state_by_reference; }
  // Whether Runtime::emit_message_ref hands its chunk over by reference
  // (RunConfig::messages_by_reference).
  bool messages_by_reference() const { return config_.messages_by_reference; }
  void emit(StreamMode mode, const std::vector<std::string>& ns, Json data,
            const State* state = nullptr) {
    if (!wants(mode, ns)) return;
    StreamEvent event{};
    event.mode = mode;
    event.ns = ns;
    event.data = std::move(data);
    event.state = state;
    emit(event);
  }
  // A whole event, already known to be wanted.
  void emit(const StreamEvent& event) {
    std::lock_guard lock(mutex_);
    config_.on_event(event);
  }

 private:
  const RunConfig& config_;
  unsigned mask_ = 0;
  std::mutex mutex_;  // serialises on_event
};

}  // namespace tollgate::graph_internal

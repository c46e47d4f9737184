// What a PregelLoop inherits from whoever started it: CompiledGraph's entry points
// (invoke, get_state, update_state) or, for a subgraph, the parent task that runs it.
//
// Thread-safety: a plain value; the loop that holds it owns it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/stream_emitter.h"
#include "tollgate/checkpoint.h"
#include "tollgate/graph.h"

namespace tollgate::graph_internal {

struct LoopContext {
  const RunConfig* config = nullptr;  // the root run's config (streams, context, limits)
  StreamEmitter* emitter = nullptr;
  std::shared_ptr<Saver> saver;
  // The graph's clock (a subgraph's own, else its parent's); null: the system clock.
  const Clock* clock = nullptr;
  std::string checkpoint_ns;  // this loop's namespace ("" at the root)
  std::string checkpoint_id;  // replay/fork from this checkpoint (root only)
  std::vector<std::string> ns_segments;
  Json parents = Json::object();  // metadata.parents of this loop's checkpoints
  bool has_parent = false;
  // Resume answers addressed to interrupts raised inside this loop (by interrupt id).
  std::map<std::string, Json> answers;

  const Clock& clock_or_system() const { return clock != nullptr ? *clock : system_clock(); }
};

}  // namespace tollgate::graph_internal

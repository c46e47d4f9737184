// Control-flow signals that unwind a node. They do not derive from std::exception on
// purpose: user code's `catch (const std::exception&)` must not swallow a pause.
#pragma once

#include <vector>

#include "tollgate/graph.h"

namespace tollgate::graph_internal {

// interrupt() without an answer: the task pauses with these interrupts.
struct GraphInterruptSignal {
  std::vector<Interrupt> interrupts;
};

// A Command{graph=PARENT} leaving a subgraph for the task that runs it in the parent graph.
struct ParentCommandSignal {
  Command command;
};

}  // namespace tollgate::graph_internal

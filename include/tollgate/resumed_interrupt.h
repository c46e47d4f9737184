// What a resuming node was asked before: the stored value of the interrupt that a node's next
// interrupt() / Runtime::interrupt_or_pause() call answers, so that the node can check that
// what it would ask now is what the human was shown then (the HITL middleware refuses a
// decision whose review it would build differently on resume).
#pragma once

#include "tollgate/graph.h"

namespace tollgate {

// The value of the interrupt that the next interrupt call of the node running with `runtime`
// answers with a new answer, as stored when the run paused there; nullptr when that call would
// pause, or return an answer given in an earlier resume, or `runtime` is not a graph task's.
// Valid while the node runs. Cheap when the task is not resuming.
const Json* resumed_interrupt_value(const Runtime& runtime);

}  // namespace tollgate

// Small offline graphs served by `tollgate serve` next to the configured agents, mirroring
// the reference server's test graphs: "hitl" (agent -> review with interrupt() -> tool) and
// "hitl_sub" (the review inside a subgraph), and "sleepy" (sleeps for input.seconds). Used by the
// integration tests and for trying the API without a model.
#pragma once

#include "tollgate/server.h"

namespace tollgate::cli {

void add_example_graphs(GraphRegistry& registry);

}  // namespace tollgate::cli

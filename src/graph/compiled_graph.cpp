// CompiledGraph: the public entry points (invoke, get_state, history, update_state).
#include "graph/pregel_loop.h"
#include "tollgate/error.h"

namespace tollgate {

using graph_internal::LoopContext;
using graph_internal::PregelLoop;
using graph_internal::StreamEmitter;

CompiledGraph::CompiledGraph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CompiledGraph::~CompiledGraph() = default;

RunResult CompiledGraph::invoke(const Input& input, const RunConfig& config) const {
  StreamEmitter emitter(config);
  LoopContext context;
  context.config = &config;
  context.emitter = &emitter;
  context.saver = impl_->checkpointer;
  context.clock = impl_->clock;
  context.checkpoint_ns = config.checkpoint_ns;
  context.checkpoint_id = config.checkpoint_id;
  PregelLoop loop(*impl_, std::move(context));
  if (const Command* command = std::get_if<Command>(&input)) {
    return loop.run(nullptr, command);
  }
  const Json& json = std::get<Json>(input);
  return loop.run(json.is_null() ? nullptr : &json, nullptr);
}

StateSnapshot CompiledGraph::get_state(const RunConfig& config, bool subgraphs) const {
  if (!impl_->checkpointer) throw Error::InvalidArgument("get_state requires a checkpointer");
  if (config.thread_id.empty()) throw Error::InvalidArgument("get_state requires a thread_id");
  return graph_internal::read_state(*impl_, impl_->checkpointer, config, subgraphs);
}

std::vector<StateSnapshot> CompiledGraph::get_state_history(const RunConfig& config,
                                                            const ListQuery& query) const {
  if (!impl_->checkpointer) {
    throw Error::InvalidArgument("get_state_history requires a checkpointer");
  }
  if (config.thread_id.empty()) {
    throw Error::InvalidArgument("get_state_history requires a thread_id");
  }
  ListQuery q = query;
  if (!q.thread_id) q.thread_id = config.thread_id;
  if (!q.checkpoint_ns) q.checkpoint_ns = config.checkpoint_ns;
  std::vector<StateSnapshot> history;
  RunConfig quiet;
  quiet.thread_id = config.thread_id;
  StreamEmitter emitter(quiet);
  for (auto& tuple : impl_->checkpointer->list(q)) {
    LoopContext context;
    context.config = &quiet;
    context.emitter = &emitter;
    context.saver = impl_->checkpointer;
    context.clock = impl_->clock;
    context.checkpoint_ns = tuple.config.checkpoint_ns;
    PregelLoop loop(*impl_, std::move(context));
    history.push_back(loop.snapshot(std::move(tuple), false, false));
  }
  return history;
}

CheckpointConfig CompiledGraph::update_state(const RunConfig& config, const Json& values,
                                             const std::string& as_node) const {
  RunConfig quiet = config;
  quiet.on_event = nullptr;
  StreamEmitter emitter(quiet);
  LoopContext context;
  context.config = &quiet;
  context.emitter = &emitter;
  context.saver = impl_->checkpointer;
  context.clock = impl_->clock;
  context.checkpoint_ns = config.checkpoint_ns;
  context.checkpoint_id = config.checkpoint_id;
  PregelLoop loop(*impl_, std::move(context));
  return loop.update(values, as_node);
}

const std::string& CompiledGraph::name() const { return impl_->name; }
const std::shared_ptr<Saver>& CompiledGraph::checkpointer() const { return impl_->checkpointer; }

std::vector<std::string> CompiledGraph::node_names() const {
  std::vector<std::string> names;
  for (std::size_t i = 1; i < impl_->nodes.size(); ++i) names.push_back(impl_->nodes[i].name);
  return names;
}

}  // namespace tollgate

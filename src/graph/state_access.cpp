// get_state and update_state through the loop: the state at a checkpoint with the tasks it
// would run next (and what they saved), and a new checkpoint written as if a node had
// returned the given values.
#include <algorithm>
#include <cassert>

#include "graph/ids.h"
#include "graph/pregel_loop.h"
#include "tollgate/error.h"

namespace tollgate::graph_internal {

StateSnapshot PregelLoop::snapshot(CheckpointTuple tuple, bool apply_pending_writes, bool subgraphs,
                                   bool values_own) {
  StateSnapshot snapshot;
  snapshot.config = tuple.config;
  snapshot.metadata = tuple.metadata;  // the loop keeps the tuple's own
  snapshot.created_at = tuple.checkpoint.ts;
  snapshot.parent_config = tuple.parent_config;
  checkpointer_.load(std::move(tuple), values_own);
  prepare_tasks();
  const auto& saved_tasks = checkpointer_.saved_tasks();
  for (auto& task : tasks_) {
    if (auto it = saved_tasks.find(task.id); it != saved_tasks.end() && it->second.finished) {
      append_saved_writes(it->second.writes, task.writes);
      task.advance(TaskState::kReattached);
    }
  }
  describe_step(snapshot, apply_pending_writes, subgraphs, {});
  if (apply_pending_writes) apply_for_output(tasks_);
  snapshot.values = output_view();
  tasks_.clear();
  return snapshot;
}

void PregelLoop::describe_step(StateSnapshot& snapshot, bool apply_pending_writes,
                               bool subgraphs, const std::vector<Interrupt>& raised) const {
  const auto& saved_tasks = checkpointer_.saved_tasks();
  // What a task wrote, as its result shows it: its state keys, and keys this loop has no
  // channel for (yet).
  auto add_result = [&](TaskInfo& info, const std::string& channel, const Json& value) {
    const int index = channels_.find(channel);
    if (index < 0 || channels_.is_state(index)) info.result[channel] = value;
  };
  auto next_raised = raised.begin();
  for (const auto& task : tasks_) {
    const CompiledNode& node = graph_.nodes[static_cast<std::size_t>(task.node)];
    TaskInfo info;
    info.id = task.id;
    info.name = node.name;
    info.path = task.kind == TaskKind::kPush ? Json::array({kPushPath, task.push_index, false})
                                             : Json::array({kPullPath, node.name});
    auto it = saved_tasks.find(task.id);
    const SavedTask* saved = it != saved_tasks.end() ? &it->second : nullptr;
    if (task.state() == TaskState::kPaused) {
      // Paused in this run: what it raised replaced what an earlier attempt saved.
      assert(raised.end() - next_raised >= static_cast<std::ptrdiff_t>(task.interrupts.size()));
      info.interrupts.assign(next_raised, next_raised + static_cast<std::ptrdiff_t>(
                                                            task.interrupts.size()));
      next_raised += static_cast<std::ptrdiff_t>(task.interrupts.size());
    } else if (saved && saved->interrupts && saved->interrupts->is_array()) {
      for (const auto& interrupt : *saved->interrupts) {
        info.interrupts.push_back(
            Interrupt{interrupt.value("id", ""), interrupt.value("value", Json())});
      }
    }
    if (saved && saved->error) {
      info.error = saved->error->is_string() ? saved->error->get<std::string>() : saved->error->dump();
    }
    if (task.state() == TaskState::kDone) {  // finished in this run: its writes were saved
      info.result = Json::object();
      for (const auto& write : task.writes) add_result(info, channels_.name(write), write.value);
    } else if (saved && saved->finished) {
      info.result = Json::object();
      for (const auto& [channel, value] : saved->writes) add_result(info, channel, value);
    }
    if (node.subgraph) {
      info.state = CheckpointConfig{config_.thread_id, task.ns, ""};
      if (subgraphs) {
        RunConfig child;
        child.thread_id = config_.thread_id;
        child.checkpoint_ns = task.ns;
        auto saver = node.subgraph->impl().checkpointer ? node.subgraph->impl().checkpointer
                                                        : context_.saver;
        info.subgraph_state =
            std::make_shared<StateSnapshot>(read_state(node.subgraph->impl(), saver, child, true));
      }
    }
    if (!(apply_pending_writes && task.has_writes())) snapshot.next.push_back(node.name);
    for (const auto& interrupt : info.interrupts) snapshot.interrupts.push_back(interrupt);
    snapshot.tasks.push_back(std::move(info));
  }
  snapshot.task_input = channels_.view(false);
}

std::shared_ptr<StateSnapshot> PregelLoop::final_state(bool paused,
                                                       const std::vector<Interrupt>& interrupts) {
  if (!config_.final_state || context_.has_parent || !context_.saver ||
      !checkpointer_.has_checkpoint()) {
    return nullptr;
  }
  // A resuming Command's update is in the channels but not in the checkpoint (the step did
  // not end; it is saved as pending writes of no task): its state is read back instead.
  if (null_writes_on_ == checkpointer_.checkpoint_id()) return nullptr;
  // A static breakpoint stopped before the step's tasks ran (or after a step, before the next
  // one's): they are prepared again to be shown, and are left before the run ends.
  const bool breakpoint = paused && tasks_.empty();
  if (breakpoint) {
    prepare_tasks();
    const auto& saved_tasks = checkpointer_.saved_tasks();
    const bool reattaches = std::any_of(tasks_.begin(), tasks_.end(), [&](const Task& task) {
      auto it = saved_tasks.find(task.id);
      return it != saved_tasks.end() && it->second.finished;
    });
    if (reattaches) {  // writes of an earlier attempt would show in the values: read back
      tasks_.clear();
      return nullptr;
    }
  }
  auto state = std::make_shared<StateSnapshot>();
  state->config =
      CheckpointConfig{config_.thread_id, context_.checkpoint_ns, checkpointer_.checkpoint_id()};
  state->metadata = checkpointer_.metadata();
  state->created_at = checkpointer_.created_at();
  state->parent_config = checkpointer_.parent_config();
  describe_step(*state, true, false, interrupts);
  if (breakpoint) tasks_.clear();
  return state;
}

StateSnapshot read_state(const CompiledGraph::Impl& graph, const std::shared_ptr<Saver>& saver,
                         const RunConfig& config, bool subgraphs) {
  StateSnapshot empty;
  empty.config = CheckpointConfig{config.thread_id, config.checkpoint_ns, ""};
  if (!saver || config.thread_id.empty()) return empty;
  // The values of the checkpoint a run of the thread last ended on are still in memory: the
  // saver reads the rest of the checkpoint and leaves them (when it is still that checkpoint).
  std::optional<CachedValues> cached =
      graph.values_cache.peek(saver.get(), config.thread_id, config.checkpoint_ns);
  GetOptions options;
  if (cached) options.reuse_values_of = cached->checkpoint_id;
  auto tuple = saver->get_tuple(
      CheckpointConfig{config.thread_id, config.checkpoint_ns, config.checkpoint_id}, options);
  if (!tuple) return empty;
  const bool values_own = tuple->values_reused && cached;
  if (values_own) tuple->checkpoint.channel_values = std::move(cached->values);
  RunConfig quiet;
  quiet.thread_id = config.thread_id;
  StreamEmitter emitter(quiet);
  LoopContext context;
  context.config = &quiet;
  context.emitter = &emitter;
  context.saver = saver;
  context.clock = graph.clock;
  context.checkpoint_ns = config.checkpoint_ns;
  PregelLoop loop(graph, std::move(context));
  return loop.snapshot(std::move(*tuple), config.checkpoint_id.empty(), subgraphs, values_own);
}

// ------------------------------------------------------------------------------- updates

CheckpointConfig PregelLoop::update(const Json& values, const std::string& requested_node) {
  if (!context_.saver) throw Error::InvalidArgument("update_state requires a checkpointer");
  if (config_.thread_id.empty()) {
    throw Error::InvalidArgument("update_state requires a thread_id");
  }
  checkpointer_.skip_task_writes();
  if (!checkpointer_.load(context_.checkpoint_id, false)) channels_.set_initial_values();
  if (context_.checkpoint_id.empty() && !checkpointer_.saved_tasks().empty()) {
    // Updating the latest checkpoint of a paused step: the tasks that finished in it keep
    // their writes (they are folded in first, as if the step had ended with them).
    prepare_tasks();
    attach_saved_writes();
    std::vector<Task> finished;
    for (auto& task : tasks_) {
      if (task.has_writes()) finished.push_back(std::move(task));
    }
    tasks_.clear();
    if (!finished.empty()) apply_writes(finished, true);
  }
  auto result = [&] {
    return CheckpointConfig{config_.thread_id, context_.checkpoint_ns,
                            checkpointer_.checkpoint_id()};
  };

  if (requested_node == "__copy__") {
    checkpointer_.save_step("fork");
    return result();
  }
  if (requested_node == "__input__") {
    if (!values.is_object()) {
      throw Error::InvalidArgument("update_state as '__input__' needs an object of values");
    }
    Task start;
    start.kind = TaskKind::kSynthetic;
    start.node = 0;
    start.writes.push_back(Write{graph_.start_channel, values, {}});
    std::vector<Task> tasks;
    tasks.push_back(std::move(start));
    apply_writes(tasks, false);
    checkpointer_.save_step("input");
    return result();
  }
  if (requested_node == END && values.is_null()) {
    prepare_tasks();
    std::vector<Task> tasks = std::move(tasks_);
    tasks_.clear();
    apply_writes(tasks, true);
    checkpointer_.save_step("update");
    return result();
  }

  std::string as_node = requested_node;
  if (as_node.empty()) {
    if (graph_.nodes.size() == 2) {
      as_node = graph_.nodes[1].name;
    } else {
      std::vector<std::pair<ChannelVersion, std::size_t>> last_seen;
      for (std::size_t n = 0; n < graph_.nodes.size(); ++n) {
        ChannelVersion latest = 0;
        for (ChannelVersion version : channels_.seen(static_cast<int>(n))) latest = std::max(latest, version);
        if (latest > 0) last_seen.emplace_back(latest, n);
      }
      std::sort(last_seen.begin(), last_seen.end());
      if (last_seen.empty()) {
        as_node = std::string(START);
      } else if (last_seen.size() == 1 ||
                 last_seen[last_seen.size() - 1].first != last_seen[last_seen.size() - 2].first) {
        as_node = graph_.nodes[last_seen.back().second].name;
      } else {
        throw Error::InvalidArgument("Ambiguous update, specify as_node");
      }
    }
  }
  const int node = graph_.find_node(as_node);
  if (node < 0) throw Error::InvalidArgument("Node " + as_node + " does not exist");

  step_state_ = channels_.state_view();
  Task task;
  task.node = node;
  task.kind = TaskKind::kSynthetic;
  task.id = task_id({checkpointer_.checkpoint_id(), context_.checkpoint_ns,
                     std::to_string(step()), as_node, "__update__"});
  task.route_at_apply = true;
  add_update(task, values);
  const CompiledNode& compiled = graph_.nodes[static_cast<std::size_t>(node)];
  task.writes.insert(task.writes.end(), compiled.edge_writes.begin(), compiled.edge_writes.end());
  task.advance(TaskState::kDone);
  std::vector<Task> tasks;
  tasks.push_back(std::move(task));
  apply_writes(tasks, true);
  checkpointer_.save_step("update");
  return result();
}

}  // namespace tollgate::graph_internal

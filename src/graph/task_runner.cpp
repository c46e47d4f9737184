// Running one task: the Runtime handed to the node, interrupt(), subgraphs, and turning
// what the node returned into channel writes (its update, Command goto/Sends, static edges,
// conditional edges).
#include <chrono>
#include <optional>

#include "graph/ids.h"
#include "graph/pregel_loop.h"
#include "graph/signals.h"
#include "tollgate/effect_intents.h"
#include "tollgate/error.h"
#include "tollgate/resumed_interrupt.h"

namespace tollgate {

namespace {
thread_local Runtime* t_current_runtime = nullptr;
}  // namespace

Runtime* current_runtime() {
  return t_current_runtime;
}

Json interrupt(Json value) {
  Runtime* runtime = current_runtime();
  if (runtime == nullptr) {
    throw Error::InvalidArgument("interrupt() called outside of a graph node");
  }
  return runtime->interrupt(std::move(value));
}

namespace graph_internal {

namespace {

// Makes a runtime current on this thread for the duration of a node call (nests).
class RuntimeScope {
 public:
  explicit RuntimeScope(Runtime* runtime) : previous_(t_current_runtime) {
    t_current_runtime = runtime;
  }
  ~RuntimeScope() { t_current_runtime = previous_; }
  RuntimeScope(const RuntimeScope&) = delete;
  RuntimeScope& operator=(const RuntimeScope&) = delete;

 private:
  Runtime* previous_;
};

std::vector<std::string> task_segments(const PregelLoop& loop, Task& task) {
  loop.ensure_task_id(task);
  std::vector<std::string> segments = loop.context().ns_segments;
  segments.push_back(loop.graph().nodes[static_cast<std::size_t>(task.node)].name + ":" + task.id);
  return segments;
}

class TaskRuntime final : public Runtime {
 public:
  TaskRuntime(PregelLoop& loop, Task& task, bool resuming)
      : loop_(loop), task_(task), resuming_(resuming) {}

  Json interrupt(Json value) override {
    std::optional<Json> answer = interrupt_or_pause(std::move(value));
    if (!answer) throw GraphInterruptSignal{std::move(pause_)};
    return std::move(*answer);
  }

  std::optional<Json> interrupt_or_pause(Json value) override {
    if (!pause_.empty()) return std::nullopt;  // already pausing: the node is on its way out
    const std::size_t index = counter_++;
    if (index < task_.resume_values.size()) return task_.resume_values[index];
    loop_.ensure_task_id(task_);
    std::string id = interrupt_id(task_.ns, index);
    auto answer = task_.answers.find(id);
    if (answer != task_.answers.end()) {
      Json result = std::move(answer->second);
      task_.answers.erase(answer);
      task_.resume_values.push_back(result);
      return result;
    }
    pause_.push_back(Interrupt{std::move(id), std::move(value)});
    return std::nullopt;
  }

  const Json* resumed_interrupt_value() const {
    if (task_.answers.empty() || !pause_.empty()) return nullptr;  // not resuming: no hashing
    if (counter_ < task_.resume_values.size()) return nullptr;
    loop_.ensure_task_id(task_);
    const std::string id = interrupt_id(task_.ns, counter_);
    if (!task_.answers.count(id)) return nullptr;
    return saved_interrupt_value(id);
  }

  // The interrupt a node asked to pause on through interrupt_or_pause() and returned after.
  bool pausing() const { return !pause_.empty(); }
  std::vector<Interrupt> take_pause() { return std::move(pause_); }

  void write_custom(Json chunk) override {
    if (!loop_.emitter().wants(StreamMode::kCustom, loop_.context().ns_segments)) return;
    loop_.emitter().emit(StreamMode::kCustom, loop_.context().ns_segments, std::move(chunk));
  }

  void emit_message(Json message_chunk, Json metadata) override {
    if (!loop_.emitter().wants(StreamMode::kMessages, loop_.context().ns_segments)) return;
    if (!metadata.is_object()) metadata = Json::object();
    add_message_metadata(metadata);
    Json pair(Json::value_t::array);
    pair.get_ref<Json::array_t&>().reserve(2);
    pair.push_back(std::move(message_chunk));
    pair.push_back(std::move(metadata));
    loop_.emitter().emit(StreamMode::kMessages, loop_.context().ns_segments, std::move(pair));
  }

  void emit_message_ref(const Json& message_chunk) override {
    // Nobody reads the chunk: not even a copy.
    if (!loop_.emitter().wants(StreamMode::kMessages, loop_.context().ns_segments)) return;
    if (!loop_.emitter().messages_by_reference()) {
      emit_message(message_chunk, Json::object());
      return;
    }
    // The event and its metadata are the same for every chunk of the task: made once.
    if (!message_event_) {
      message_metadata_ = Json::object();
      add_message_metadata(message_metadata_);
      message_event_.emplace();
      message_event_->mode = StreamMode::kMessages;
      message_event_->ns = loop_.context().ns_segments;
      message_event_->message_metadata = &message_metadata_;
    }
    message_event_->message_chunk = &message_chunk;
    loop_.emitter().emit(*message_event_);
    message_event_->message_chunk = nullptr;
  }

  const std::string& node_name() const override {
    return loop_.graph().nodes[static_cast<std::size_t>(task_.node)].name;
  }
  const std::string& task_id() const override {
    loop_.ensure_task_id(task_);
    return task_.id;
  }
  const std::string& checkpoint_ns() const override {
    loop_.ensure_task_id(task_);
    return task_.ns;
  }
  const std::string& thread_id() const override { return loop_.context().config->thread_id; }
  const State& graph_state() const override { return loop_.step_state(); }
  const Json& context() const override { return loop_.context().config->context; }
  const RunActor& started_by() const override { return loop_.context().config->started_by; }
  const RunActor& decided_by() const override { return loop_.context().config->decided_by; }
  bool cancelled() const override {
    const auto& cancel = loop_.context().config->cancel;
    return cancel && cancel->load();
  }

  Json invoke_subgraph(const CompiledGraph& graph, const Json& input) override {
    return loop_.run_child_graph(task_, graph, input, resuming_);
  }

  void record_intent(const std::string& key, Json intent) {
    loop_.ensure_task_id(task_);
    task_.intents[key] = std::move(intent);
    task_.intents_stored = true;
    loop_.record_intents(task_);
  }

  void forget_intent(const std::string& key) { task_.intents.erase(key); }

  const Json& discarded_intents() const { return loop_.discarded_intents(); }

  const Json* recorded_intent(const std::string& key) const {
    if (task_.saved_intents == nullptr) return nullptr;
    auto found = task_.saved_intents->find(key);
    return found == task_.saved_intents->end() ? nullptr : &*found;
  }

 private:
  // The stored value of the interrupt `id` this task paused on, or nullptr.
  const Json* saved_interrupt_value(const std::string& id) const {
    if (task_.saved_interrupts == nullptr || !task_.saved_interrupts->is_array()) return nullptr;
    for (const Json& saved : *task_.saved_interrupts) {
      auto found = saved.find("id");
      if (found != saved.end() && *found == id) {
        auto value = saved.find("value");
        return value == saved.end() ? nullptr : &*value;
      }
    }
    return nullptr;
  }

  // The metadata of the task's message chunks (merged into `metadata`).
  void add_message_metadata(Json& metadata) const {
    metadata["langgraph_node"] = node_name();
    metadata["langgraph_step"] = loop_.step();
    loop_.ensure_task_id(task_);
    metadata["langgraph_task_id"] = task_.id;
    metadata["langgraph_checkpoint_ns"] = task_.ns;
  }

  PregelLoop& loop_;
  Task& task_;
  const bool resuming_;
  std::size_t counter_ = 0;
  std::vector<Interrupt> pause_;
  // emit_message_ref's event, made at the task's first chunk.
  Json message_metadata_;
  std::optional<StreamEvent> message_event_;
};

}  // namespace

}  // namespace graph_internal

void record_intent(Runtime& runtime, const std::string& key, Json intent) {
  if (auto* task = dynamic_cast<graph_internal::TaskRuntime*>(&runtime)) {
    task->record_intent(key, std::move(intent));
  }
}

void forget_intent(Runtime& runtime, const std::string& key) {
  if (auto* task = dynamic_cast<graph_internal::TaskRuntime*>(&runtime)) task->forget_intent(key);
}

const Json* recorded_intent(const Runtime& runtime, const std::string& key) {
  const auto* task = dynamic_cast<const graph_internal::TaskRuntime*>(&runtime);
  return task != nullptr ? task->recorded_intent(key) : nullptr;
}

const Json* discarded_intent(const Runtime& runtime, const std::string& key) {
  const auto* task = dynamic_cast<const graph_internal::TaskRuntime*>(&runtime);
  if (task == nullptr) return nullptr;
  const Json& intents = task->discarded_intents();
  auto found = intents.find(key);
  return found == intents.end() ? nullptr : &*found;
}

namespace graph_internal {


void PregelLoop::run_task(Task& task) {
  const CompiledNode& node = graph_.nodes[static_cast<std::size_t>(task.node)];
  const bool debug = context_.emitter->wants(StreamMode::kDebug, context_.ns_segments);
  if (debug || context_.emitter->wants(StreamMode::kTasks, context_.ns_segments)) {
    ensure_task_id(task);
    Json triggers = Json::array();
    for (int fired : task.fired) triggers.push_back(channels_.name(fired));
    Json payload = json_object("id", task.id, "name", node.name, "triggers", std::move(triggers));
    // A Send's task starts on its own argument, not on the step's state: it keeps its input.
    const bool by_reference =
        context_.emitter->state_by_reference() && task.kind != TaskKind::kPush;
    if (debug || !by_reference) payload["input"] = task.input.to_json();
    if (debug) {
      context_.emitter->emit(StreamMode::kDebug, context_.ns_segments,
                             Json{{"type", "task"},
                                  {"step", step()},
                                  {"timestamp", utc_timestamp(context_.clock_or_system())},
                                  {"payload", payload}});
    }
    if (by_reference) {
      if (context_.emitter->wants(StreamMode::kTasks, context_.ns_segments)) {
        payload.erase("input");
        StreamEvent event{};
        event.mode = StreamMode::kTasks;
        event.ns = context_.ns_segments;
        event.data = std::move(payload);
        event.state = &task.input;
        // Saves happen between steps: while tasks run, the checkpoint stays the step's.
        if (checkpointer_.checkpoint_id() != null_writes_on_) {
          event.checkpoint_id = checkpointer_.checkpoint_id();
        }
        if (values_shown_ == 0 && !values_base_.empty()) {
          // Before the loop's first values event: what the lists share with the loaded ones.
          event.values_base = values_base_;
          event.unchanged_items = channels_.unchanged_since_shown();
        }
        context_.emitter->emit(event);
      }
    } else {
      context_.emitter->emit(StreamMode::kTasks, context_.ns_segments, std::move(payload));
    }
  }

  const bool resuming = task.state() == TaskState::kResuming;
  task.advance(TaskState::kRunning);
  TaskRuntime runtime(*this, task, resuming);
  try {
    NodeResult result;
    try {
      RuntimeScope scope(&runtime);
      if (node.is_start) {
        JsonPtr input = channels_.slot(graph_.start_channel).channel->get();
        result = NodeResult(input ? *input : Json::object());
      } else if (node.subgraph) {
        result = NodeResult(run_child_graph(task, *node.subgraph, task.input.to_json(), resuming));
      } else {
        result = node.fn(task.input, runtime);
      }
    } catch (ParentCommandSignal& signal) {
      // A subgraph run by this task handed a Command to its parent: this graph.
      signal.command.graph.clear();
      result = NodeResult(std::move(signal.command));
    }
    if (runtime.pausing()) {  // paused through interrupt_or_pause(): what it returned is moot
      task.interrupts = runtime.take_pause();
      task.advance(TaskState::kPaused);
    } else {
      if (Command* command = result.command(); command && command->graph == Command::PARENT) {
        if (!context_.has_parent) throw Error::InvalidArgument("There is no parent graph");
        throw ParentCommandSignal{std::move(*command)};
      }
      collect_writes(task, std::move(result));
      task.advance(TaskState::kDone);
    }
  } catch (GraphInterruptSignal& signal) {
    task.interrupts = std::move(signal.interrupts);
    task.advance(TaskState::kPaused);
  } catch (...) {
    // Nothing of a failed task is saved: an answer it took stays unconsumed.
    task.error = std::current_exception();
    task.advance(TaskState::kFailed);
    emit_task_result(task);
    return;
  }
  try {
    if (!task.route_at_apply || task.state() == TaskState::kPaused) {
      checkpointer_.put_task_writes(task);
    }
  } catch (...) {
    task.error = std::current_exception();
  }
  // A task whose save failed is reported with what it did and the error, then fails.
  emit_task_result(task);
  if (task.error) task.advance(TaskState::kFailed);
}

Json PregelLoop::run_child_graph(Task& task, const CompiledGraph& child, const Json& input,
                                 bool resuming) {
  ensure_task_id(task);
  LoopContext context;
  context.config = context_.config;
  context.emitter = context_.emitter;
  context.saver = child.impl().checkpointer ? child.impl().checkpointer : context_.saver;
  context.clock = child.impl().clock != nullptr ? child.impl().clock : context_.clock;
  context.checkpoint_ns = task.ns;
  context.ns_segments = task_segments(*this, task);
  context.parents = context_.parents;
  context.parents[context_.checkpoint_ns] = checkpointer_.checkpoint_id();
  context.has_parent = true;
  context.answers = std::move(task.answers);
  task.answers.clear();
  PregelLoop loop(child.impl(), std::move(context));
  RunResult result = loop.run(&input, nullptr, resuming);
  if (result.paused) throw GraphInterruptSignal{std::move(result.interrupts)};
  return result.values.to_json();
}

// ------------------------------------------------------------------------------ writers

void PregelLoop::collect_writes(Task& task, NodeResult result) {
  const CompiledNode& node = graph_.nodes[static_cast<std::size_t>(task.node)];
  if (Json* update = result.update()) {
    add_update(task, std::move(*update));
  } else if (Command* command = result.command()) {
    if (command->resume || !command->resume_map.empty()) {
      throw Error::InvalidArgument("Node '" + node.name +
                                   "' returned a Command with resume; only graph input can resume");
    }
    if (command->update) add_update(task, std::move(*command->update));
    for (const auto& target : command->goto_nodes) add_goto(task, target, node.name);
    for (auto& send : command->goto_sends) add_send(task, std::move(send), node.name);
  }
  task.writes.insert(task.writes.end(), node.edge_writes.begin(), node.edge_writes.end());
  if (!node.branches.empty() && !task.route_at_apply) route(task, fresh_view(task));
}

void PregelLoop::add_update(Task& task, Json update) {
  if (update.is_null()) return;
  const std::string& origin = graph_.nodes[static_cast<std::size_t>(task.node)].name;
  if (!update.is_object()) {
    throw Error::InvalidArgument("Expected node '" + origin +
                                 "' to return an object (a partial state update), got " +
                                 update.type_name());
  }
  for (auto it = update.begin(); it != update.end(); ++it) {
    const std::string& key = it.key();
    const int channel = channels_.find(key);
    if (channel >= 0 && channels_.is_state(channel)) {
      task.writes.push_back(Write{channel, std::move(it.value()), {}});
    } else if (channel < 0 && !is_reserved_channel(key)) {
      task.writes.push_back(Write{-1, std::move(it.value()), key});
    } else {
      throw Error::InvalidArgument("Node '" + origin + "' wrote to reserved key '" + key + "'");
    }
  }
}

void PregelLoop::add_goto(Task& task, const std::string& target, const std::string& origin) {
  if (target == END) return;
  const int index = graph_.find_node(target);
  if (index <= 0) {
    throw Error::InvalidArgument("Node '" + origin + "' goes to unknown node '" + target + "'");
  }
  const CompiledNode& node = graph_.nodes[static_cast<std::size_t>(index)];
  task.writes.push_back(Write{node.trigger_channel, node.defer ? Json(node.name) : Json(), {}});
}

void PregelLoop::add_send(Task& task, Send send, const std::string& origin) {
  if (graph_.find_node(send.node) <= 0) {
    throw Error::InvalidArgument("Send from '" + origin + "' targets unknown node '" + send.node +
                                 "'");
  }
  if (!send.arg.is_object()) {
    throw Error::InvalidArgument("Send to '" + send.node + "': arg must be a JSON object, got " +
                                 send.arg.type_name());
  }
  task.writes.push_back(Write{graph_.tasks_channel,
                              json_object("node", std::move(send.node), "arg", std::move(send.arg)),
                              {}});
}

void PregelLoop::route(Task& task, const State& view) {
  const CompiledNode& node = graph_.nodes[static_cast<std::size_t>(task.node)];
  for (const auto& branch : node.branches) {
    Route route = branch.router(view);
    for (const auto& returned : route.nodes) {
      std::string target = returned;
      if (!branch.path_map.empty()) {
        auto it = branch.path_map.find(returned);
        if (it == branch.path_map.end()) {
          throw Error::InvalidArgument("Conditional edge from '" + node.name + "' returned '" +
                                       returned + "', which is not in its path_map");
        }
        target = it->second;
      } else if (target != END && graph_.find_node(target) <= 0) {
        throw Error::InvalidArgument("Conditional edge from '" + node.name +
                                     "' returned unknown node '" + target + "'");
      }
      add_goto(task, target, node.name);
    }
    for (auto& send : route.sends) add_send(task, std::move(send), node.name);
  }
}

State PregelLoop::fresh_view(const Task& task) const {
  bool any_state_write = false;
  for (const auto& write : task.writes) {
    if (write.channel < 0 || channels_.is_state(write.channel)) any_state_write = true;
  }
  if (!any_state_write) return step_state_;
  std::map<std::string, JsonPtr, std::less<>> values = step_state_.values();
  std::map<int, std::vector<Json>> by_channel;
  for (const auto& write : task.writes) {
    if (write.channel < 0) {
      values[write.key] = make_json_ptr(write.value);
    } else if (channels_.is_state(write.channel)) {
      by_channel[write.channel].push_back(write.value);
    }
  }
  for (auto& [index, writes] : by_channel) {
    std::unique_ptr<Channel> copy = channels_.clone_empty(index);
    if (JsonPtr current = channels_.slot(index).channel->checkpoint()) {
      copy->restore(std::move(current));
    }
    copy->update(std::move(writes));
    if (JsonPtr value = copy->get()) values[channels_.name(index)] = std::move(value);
  }
  return State(std::move(values));
}

void PregelLoop::emit_task_result(Task& task) {
  const auto& ns = context_.ns_segments;
  const std::string& name = graph_.nodes[static_cast<std::size_t>(task.node)].name;
  if (task.state() == TaskState::kDone && context_.emitter->wants(StreamMode::kUpdates, ns)) {
    Json update = Json::object();
    for (const auto& write : task.writes) {
      if (write.channel < 0) {
        update[write.key] = write.value;
      } else if (channels_.is_output(write.channel)) {
        update[channels_.name(write.channel)] = write.value;
      }
    }
    context_.emitter->emit(StreamMode::kUpdates, ns,
                           json_object(name, update.empty() ? Json() : std::move(update)));
  }
  const bool debug = context_.emitter->wants(StreamMode::kDebug, ns);
  if (!debug && !context_.emitter->wants(StreamMode::kTasks, ns)) return;
  Json result = Json::array();
  for (const auto& write : task.writes) {
    Json pair(Json::value_t::array);
    pair.get_ref<Json::array_t&>().reserve(2);
    pair.push_back(channels_.name(write));
    pair.push_back(write.value);
    result.push_back(std::move(pair));
  }
  Json error;
  if (task.error) {
    try {
      std::rethrow_exception(task.error);
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "unknown error";
    }
  }
  ensure_task_id(task);
  Json payload = json_object("id", task.id, "name", name, "error", std::move(error), "result",
                             std::move(result), "interrupts", task.interrupts);
  if (debug) {
    context_.emitter->emit(StreamMode::kDebug, ns,
                           Json{{"type", "task_result"},
                                {"step", step()},
                                {"timestamp", utc_timestamp(context_.clock_or_system())},
                                {"payload", payload}});
  }
  context_.emitter->emit(StreamMode::kTasks, ns, std::move(payload));
}

}  // namespace graph_internal

const Json* resumed_interrupt_value(const Runtime& runtime) {
  const auto* task = dynamic_cast<const graph_internal::TaskRuntime*>(&runtime);
  return task == nullptr ? nullptr : task->resumed_interrupt_value();
}

}  // namespace tollgate

// The superstep loop: starting a run (new input, resume, replay), preparing and running the
// tasks of each step, applying their writes, and finishing (done, paused, failed).
#include "graph/pregel_loop.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>

#include "graph/ids.h"
#include "tollgate/error.h"

namespace tollgate::graph_internal {

namespace {

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string recursion_limit_message(int limit) {
  return "Recursion limit of " + std::to_string(limit) +
         " reached without hitting a stop condition. You can increase the limit by setting the "
         "`recursion_limit` config key. For troubleshooting, visit: "
         "https://docs.langchain.com/oss/python/langgraph/errors/GRAPH_RECURSION_LIMIT";
}

}  // namespace

PregelLoop::PregelLoop(const CompiledGraph::Impl& graph, LoopContext context)
    : graph_(graph),
      context_(std::move(context)),
      config_(*context_.config),
      channels_(graph),
      checkpointer_(graph, context_, channels_) {
  static std::atomic<std::uint64_t> loops{0};
  serial_ = loops.fetch_add(1, std::memory_order_relaxed) + 1;
}

PregelLoop::~PregelLoop() = default;

void PregelLoop::release_state_view() {
  step_state_ = State();
  for (auto& task : tasks_) task.input = State();
  channels_.release_state_values();
}

const Json& PregelLoop::public_input(const Json& input, Json& storage) const {
  const Json* result = &input;
  for (const auto& spec : graph_.channels) {
    if (!spec.is_private || !result->contains(spec.name)) continue;
    if (result == &input) {
      storage = input;
      result = &storage;
    }
    storage.erase(spec.name);
  }
  return *result;
}

// ---------------------------------------------------------------------------------- run

RunResult PregelLoop::run(const Json* input, const Command* command, bool continue_if_exists) {
  Saver* saver = context_.saver.get();
  const std::string& thread_id = config_.thread_id;
  const bool has_resume = command && (command->resume || !command->resume_map.empty());
  if (command) {
    if (command->graph == Command::PARENT) throw Error::InvalidArgument("There is no parent graph");
    if (!command->graph.empty()) {
      throw Error::InvalidArgument("Command 'graph' must be empty or PARENT, got '" +
                                   command->graph + "'");
    }
    if (!has_resume && !command->update && command->goto_nodes.empty() &&
        command->goto_sends.empty()) {
      throw Error::InvalidArgument("Received empty Command input");
    }
    if (has_resume && !saver) {
      throw Error::InvalidArgument("Cannot use Command(resume=...) without checkpointer");
    }
  }
  if (saver && thread_id.empty()) {
    throw Error::InvalidArgument(
        "thread_id is required: the graph has a checkpointer (set RunConfig::thread_id)");
  }

  bool replay = false;
  if (saver) {
    checkpointer_.load(context_.checkpoint_id, /*use_cache=*/true);
    if (checkpointer_.has_checkpoint()) {
      // The first values event tells what its lists share with the checkpoint's.
      channels_.mark_lists_shown_as_loaded();
      values_base_ = checkpointer_.checkpoint_id();
    }
    if (checkpointer_.has_checkpoint() && !context_.checkpoint_id.empty()) {
      auto latest = saver->get_tuple(CheckpointConfig{thread_id, context_.checkpoint_ns, ""});
      replay = latest && latest->config.checkpoint_id != checkpointer_.checkpoint_id();
    }
  }
  channels_.create_missing();  // load() made them; without a saver they are made here
  if (!checkpointer_.has_checkpoint()) channels_.set_initial_values();

  if (input && !input->is_null() && (!checkpointer_.has_checkpoint() || !continue_if_exists)) {
    if (!input->is_object()) {
      throw Error::InvalidArgument(std::string("Graph input must be a JSON object, got ") +
                                   input->type_name());
    }
    // A new run discards the unfinished step of the old one: its tasks' triggers are
    // consumed without running them.
    checkpointer_.discard_saved_tasks();
    std::vector<Task> tasks;
    // Pending Sends (push tasks) count too: bumping the step clears them, so that a tool call
    // left unfinished is not run again by the new run.
    bool discarded = false;
    if (checkpointer_.has_checkpoint()) {
      prepare_tasks();
      discarded = !tasks_.empty();
      for (auto& task : tasks_) {
        if (task.kind != TaskKind::kPush) tasks.push_back(std::move(task));
      }
      tasks_.clear();
    }
    Task start;
    start.kind = TaskKind::kSynthetic;
    start.node = 0;
    Json storage;
    start.writes.push_back(Write{graph_.start_channel, public_input(*input, storage), {}});
    tasks.push_back(std::move(start));
    apply_writes(tasks, discarded);
    checkpointer_.save_step("input");
  } else {
    if (!checkpointer_.has_checkpoint()) {
      if (has_resume || !context_.answers.empty()) {
        throw Error::Conflict("Thread '" + thread_id + "' has no pending interrupt to resume");
      }
      if (!command) return finish(false, {});
    }
    if (replay) {
      checkpointer_.forget_saved_tasks();  // interrupts re-fire, finished tasks re-run
      checkpointer_.save_step("fork");
    }
    channels_.mark_interrupt_seen();
    distribute_answers(command);
    std::vector<Write> null_writes;
    const auto& saved_tasks = checkpointer_.saved_tasks();
    if (auto it = saved_tasks.find(kNullTaskId); it != saved_tasks.end()) {
      append_saved_writes(it->second.writes, null_writes);
    }
    if (command &&
        (command->update || !command->goto_nodes.empty() || !command->goto_sends.empty())) {
      Task pseudo;
      pseudo.kind = TaskKind::kSynthetic;
      pseudo.node = 0;
      if (command->update) add_update(pseudo, *command->update);
      for (const auto& target : command->goto_nodes) add_goto(pseudo, target, "Command");
      for (const auto& send : command->goto_sends) add_send(pseudo, send, "Command");
      for (auto& write : pseudo.writes) {
        checkpointer_.hold_null_write(channels_.name(write), write.value);
        null_writes.push_back(std::move(write));
      }
    }
    if (!null_writes.empty()) apply_null_writes(std::move(null_writes));
    if (!checkpointer_.has_checkpoint()) checkpointer_.save_step("input");
  }

  const std::int64_t stop = step() + config_.recursion_limit + 1;
  while (true) {
    if (config_.cancel && config_.cancel->load()) {
      checkpointer_.wait_for_saves();
      throw Error(ErrorCode::kCancelled, "Run cancelled");
    }
    prepare_tasks();
    if (tasks_.empty()) break;
    if (step() > stop) {
      checkpointer_.wait_for_saves();
      throw Error(ErrorCode::kRecursionLimit, recursion_limit_message(config_.recursion_limit));
    }
    attach_saved_writes();
    if (breakpoint_hit(config_.interrupt_before, graph_.interrupt_before)) {
      tasks_.clear();
      return finish(true, {});
    }
    try {
      run_step();
    } catch (...) {
      checkpointer_.flush_held_task_writes();  // a finished task's writes are kept as before
      throw;
    }
    for (auto& task : tasks_) {
      if (task.state() == TaskState::kFailed) {
        checkpointer_.wait_for_saves();
        std::rethrow_exception(task.error);
      }
    }
    std::vector<Interrupt> interrupts;
    bool paused = false;
    // Under exit durability finish() still saves the paused tasks' interrupts, so they are
    // copied; otherwise they were saved when their task paused and move to the result.
    const bool keep_interrupts = config_.durability == Durability::kExit;
    for (auto& task : tasks_) {
      if (task.state() != TaskState::kPaused) continue;
      paused = true;
      for (auto& interrupt : task.interrupts) {
        interrupts.push_back(keep_interrupts ? interrupt : std::move(interrupt));
      }
    }
    if (paused) return finish(true, std::move(interrupts));

    // Drop this step's references to channel values first, so that a list channel owning
    // its value alone appends in place instead of copying the whole list.
    release_state_view();
    try {
      apply_writes(tasks_, true);
    } catch (...) {
      checkpointer_.flush_held_task_writes();  // the step ends here, without its checkpoint
      throw;
    }
    checkpointer_.save_step("loop");  // with the writes of the step's only task, if held
    if (context_.emitter->wants(StreamMode::kValues, context_.ns_segments)) {
      if (context_.emitter->state_by_reference()) {
        const State values = output_view();
        StreamEvent event{};
        event.mode = StreamMode::kValues;
        event.ns = context_.ns_segments;
        event.state = &values;
        event.loop = serial_;
        if (values_shown_ == 0) event.values_base = values_base_;
        event.values_index = ++values_shown_;
        event.unchanged_items = channels_.take_unchanged_since_shown();
        context_.emitter->emit(event);
      } else {
        context_.emitter->emit(StreamMode::kValues, context_.ns_segments, values_json());
      }
    }
    if (breakpoint_hit(config_.interrupt_after, graph_.interrupt_after)) {
      tasks_.clear();
      return finish(true, {});
    }
  }
  tasks_.clear();
  return finish(false, {});
}

void PregelLoop::distribute_answers(const Command* command) {
  std::map<std::string, Json> answers = std::move(context_.answers);
  context_.answers.clear();
  const bool plain = command && command->resume.has_value();
  if (command && !command->resume_map.empty()) {
    for (const auto& [id, value] : command->resume_map) answers[id] = value;
  }
  if (!plain && answers.empty()) return;

  std::vector<std::pair<std::string, std::string>> pending;  // (interrupt id, task id)
  for (const auto& [task_id, saved] : checkpointer_.saved_tasks()) {
    if (saved.finished || !saved.interrupts || !saved.interrupts->is_array()) continue;
    for (const auto& interrupt : *saved.interrupts) {
      pending.emplace_back(interrupt.value("id", ""), task_id);
    }
  }
  const std::string where =
      "Thread '" + config_.thread_id + "'" +
      (context_.checkpoint_ns.empty() ? "" : " (namespace '" + context_.checkpoint_ns + "')");
  if (pending.empty()) throw Error::Conflict(where + " has no pending interrupt to resume");
  if (plain) {
    if (pending.size() > 1) {
      std::string ids;
      for (const auto& [id, task] : pending) ids += (ids.empty() ? "" : ", ") + id;
      throw Error::Conflict(where + " has " + std::to_string(pending.size()) +
                            " pending interrupts (" + ids +
                            "); resume them by id with a map {interrupt_id: value}");
    }
    answers_by_task_[pending[0].second][pending[0].first] = *command->resume;
  }
  for (auto& [id, value] : answers) {
    auto it = std::find_if(pending.begin(), pending.end(),
                           [&wanted = id](const auto& entry) { return entry.first == wanted; });
    if (it == pending.end()) {
      throw Error::Conflict("Unknown or already-answered interrupt id '" + id + "' on " + where);
    }
    answers_by_task_[it->second][id] = std::move(value);
  }
}

void PregelLoop::apply_null_writes(std::vector<Write> writes) {
  null_writes_on_ = checkpointer_.checkpoint_id();
  Task pseudo;
  pseudo.kind = TaskKind::kSynthetic;
  pseudo.node = 0;
  pseudo.writes = std::move(writes);
  std::vector<Task> tasks;
  tasks.push_back(std::move(pseudo));
  apply_writes(tasks, false);
}

// --------------------------------------------------------------------------------- steps

void PregelLoop::ensure_task_id(Task& task) const {
  if (!task.id.empty()) return;  // task ids are never empty (UUIDs)
  const std::string step_text = std::to_string(step());
  const std::string& name = graph_.nodes[static_cast<std::size_t>(task.node)].name;
  const std::string& checkpoint_id = checkpointer_.checkpoint_id();
  if (task.kind == TaskKind::kPush) {
    task.id = task_id({checkpoint_id, context_.checkpoint_ns, step_text, name, kPushPath,
                       std::to_string(task.push_index)});
  } else {
    std::vector<std::string_view> parts{checkpoint_id, context_.checkpoint_ns, step_text, name,
                                        kPullPath};
    for (int fired : task.fired) parts.emplace_back(channels_.name(fired));
    task.id = task_id(parts);
  }
  std::string& ns = task.ns;
  ns.clear();
  ns.reserve(context_.checkpoint_ns.size() + name.size() + task.id.size() + 2);
  if (!context_.checkpoint_ns.empty()) {
    ns += context_.checkpoint_ns;
    ns += '|';
  }
  ns += name;
  ns += ':';
  ns += task.id;
}

void PregelLoop::prepare_tasks() {
  tasks_.clear();
  tasks_.reserve(4);
  step_state_ = channels_.state_view();

  const Slot& sends = channels_.slot(graph_.tasks_channel);
  if (sends.channel->is_available()) {
    JsonPtr list = sends.channel->get();
    if (list && list->is_array()) {
      for (std::size_t i = 0; i < list->size(); ++i) {
        const Json& send = (*list)[i];
        const int node = graph_.find_node(send.value("node", ""));
        if (node <= 0) continue;
        Task task;
        task.node = node;
        task.kind = TaskKind::kPush;
        task.push_index = i;
        // Read in place: value("arg", ...) would copy the argument before from_json copies it.
        const auto arg = send.find("arg");
        task.input = arg != send.end() ? State::from_json(*arg) : State::from_json(Json::object());
        tasks_.push_back(std::move(task));
      }
    }
  }
  bool any_regular = false;
  for (std::size_t n = 0; n < graph_.nodes.size(); ++n) {
    const CompiledNode& node = graph_.nodes[n];
    Task task;
    const std::vector<ChannelVersion>& seen = channels_.seen(static_cast<int>(n));
    for (std::size_t j = 0; j < node.triggers.size(); ++j) {
      const Slot& slot = channels_.slot(node.triggers[j]);
      if (slot.version > seen[j] && slot.channel->is_available()) {
        task.fired.push_back(node.triggers[j]);
      }
    }
    if (task.fired.empty()) continue;
    task.node = static_cast<int>(n);
    task.input = step_state_;
    if (!node.defer) any_regular = true;
    tasks_.push_back(std::move(task));
  }
  if (any_regular) {
    std::erase_if(tasks_, [&](const Task& task) {
      return task.kind != TaskKind::kPush &&
             graph_.nodes[static_cast<std::size_t>(task.node)].defer;
    });
  }
  // With a saver the ids key saved writes and are part of every saved task; the checkpoint
  // id they hash changes once the step is applied, so they are fixed now.
  if (context_.saver) {
    for (auto& task : tasks_) ensure_task_id(task);
  }
}

void PregelLoop::attach_saved_writes() {
  const auto& saved_tasks = checkpointer_.saved_tasks();
  if (saved_tasks.empty() && answers_by_task_.empty()) return;
  for (auto& task : tasks_) {
    ensure_task_id(task);
    if (auto it = saved_tasks.find(task.id); it != saved_tasks.end()) {
      const SavedTask& saved = it->second;
      if (saved.finished) {
        append_saved_writes(saved.writes, task.writes);
        task.advance(TaskState::kReattached);
      } else {
        if (saved.intents && saved.intents->is_object()) {
          task.saved_intents = &*saved.intents;
          task.intents = *saved.intents;
        }
        if (saved.resume && saved.resume->is_array()) {
          task.resume_values.assign(saved.resume->begin(), saved.resume->end());
        }
        if (saved.interrupts) {
          task.saved_interrupts = &*saved.interrupts;
          task.advance(TaskState::kResuming);
        }
      }
    }
    if (auto it = answers_by_task_.find(task.id); it != answers_by_task_.end()) {
      task.answers = std::move(it->second);
      answers_by_task_.erase(it);
    }
  }
}

void PregelLoop::append_saved_writes(const SavedWrites& saved, std::vector<Write>& writes) const {
  for (const auto& [channel, value] : saved) {
    const int index = channels_.find(channel);
    if (index >= 0) {
      writes.push_back(Write{index, value, {}});
    } else if (!is_reserved_channel(channel)) {
      writes.push_back(Write{-1, value, channel});
    }
  }
}

bool PregelLoop::breakpoint_hit(const std::vector<std::string>& run_names,
                                const std::vector<std::string>& compiled_names) const {
  if (run_names.empty() && compiled_names.empty()) return false;
  if (!channels_.changed_since_interrupt_seen()) return false;
  for (const auto& task : tasks_) {
    const std::string& name = graph_.nodes[static_cast<std::size_t>(task.node)].name;
    if (task.node == 0) continue;
    if (contains(run_names, "*") || contains(run_names, name) || contains(compiled_names, "*") ||
        contains(compiled_names, name)) {
      return true;
    }
  }
  return false;
}

namespace {

// Shared by the threads working through one step's tasks; outlives the step if a pool
// thread picks up its job late.
struct StepWork {
  std::vector<Task*> tasks;
  std::atomic<std::size_t> next{0};
  std::mutex mutex;  // guards finished
  std::condition_variable all_done;
  std::size_t finished = 0;
  PregelLoop* loop = nullptr;

  void drain() {
    while (true) {
      const std::size_t i = next.fetch_add(1);
      if (i >= tasks.size()) return;
      loop->run_task(*tasks[i]);
      {
        std::lock_guard lock(mutex);
        ++finished;
      }
      all_done.notify_all();
    }
  }
};

}  // namespace

void PregelLoop::run_step() {
  std::vector<Task*> todo;
  for (auto& task : tasks_) {
    if (task.waits_to_run()) todo.push_back(&task);
  }
  if (todo.empty()) return;
  if (todo.size() == 1) {
    Task& task = *todo[0];
    task.route_at_apply =
        tasks_.size() == 1 && !graph_.nodes[static_cast<std::size_t>(task.node)].branches.empty();
    checkpointer_.hold_task_writes_for_next_put();
    run_task(task);
    return;
  }
  auto work = std::make_shared<StepWork>();
  work->tasks = std::move(todo);
  work->loop = this;
  for (std::size_t i = 1; i < work->tasks.size(); ++i) {
    graph_.pool.submit([work] { work->drain(); });
  }
  work->drain();
  std::unique_lock lock(work->mutex);
  work->all_done.wait(lock, [&] { return work->finished == work->tasks.size(); });
}

std::vector<int> PregelLoop::apply_writes(std::vector<Task>& tasks, bool bump_step) {
  std::vector<int> updated;
  updated.reserve(channels_.size());  // one allocation instead of one per doubling
  updated_.assign(channels_.size(), 0);
  auto mark = [&](int index) {
    if (!updated_[static_cast<std::size_t>(index)]) {
      updated_[static_cast<std::size_t>(index)] = 1;
      updated.push_back(index);
    }
  };
  for (auto& task : tasks) {
    if (task.kind != TaskKind::kPull) continue;
    const CompiledNode& node = graph_.nodes[static_cast<std::size_t>(task.node)];
    std::vector<ChannelVersion>& seen = channels_.seen(task.node);
    for (std::size_t j = 0; j < node.triggers.size(); ++j) {
      Slot& trigger = channels_.slot(node.triggers[j]);
      seen[j] = trigger.version;
      if (trigger.channel->consume()) mark(node.triggers[j]);
    }
  }
  Task* router = nullptr;
  for (auto& task : tasks) {
    for (auto& write : task.writes) {
      if (write.channel < 0) write.channel = channels_.for_key(write.key);
    }
    if (task.route_at_apply && task.state() == TaskState::kDone) router = &task;
  }
  updated_.resize(channels_.size(), 0);
  buckets_.resize(channels_.size());
  written_.assign(channels_.size(), 0);

  // State keys first, so that a step's only task can route on the state it produced.
  SavedWrites router_payload;
  const bool save_router_writes = router && checkpointer_.saves_task_writes_at_once();
  if (save_router_writes) router_payload = checkpointer_.saved_form(*router);
  for (int pass = 0; pass < 2; ++pass) {
    const bool state_pass = pass == 0;
    if (!state_pass && router) {
      const std::size_t before = router->writes.size();
      route(*router, channels_.state_view());
      if (save_router_writes) {
        checkpointer_.put_task_writes(*router, false, std::move(router_payload), before);
      }
    }
    for (auto& task : tasks) {
      for (auto& write : task.writes) {
        if (channels_.is_state(write.channel) != state_pass) continue;
        buckets_[static_cast<std::size_t>(write.channel)].push_back(std::move(write.value));
      }
    }
    for (std::size_t i = 0; i < channels_.size(); ++i) {
      if (buckets_[i].empty()) continue;
      written_[i] = 1;
      if (channels_[i].channel->update(std::move(buckets_[i]))) mark(static_cast<int>(i));
      buckets_[i].clear();
    }
  }
  if (bump_step) {
    for (std::size_t i = 0; i < channels_.size(); ++i) {
      if (!written_[i] && channels_[i].channel->update({})) mark(static_cast<int>(i));
    }
  }
  const Saver* saver = context_.saver.get();
  channels_.bump(updated, saver);
  const bool triggers_any = std::any_of(updated.begin(), updated.end(),
                                        [&](int index) { return channels_.triggers_node(index); });
  if (!triggers_any && bump_step) {
    std::vector<int> finished;
    for (std::size_t i = 0; i < channels_.size(); ++i) {
      if (channels_[i].channel->finish()) finished.push_back(static_cast<int>(i));
    }
    channels_.bump(finished, saver);
    updated.insert(updated.end(), finished.begin(), finished.end());
  }
  checkpointer_.record_updated_channels(updated);
  return updated;
}

void PregelLoop::apply_for_output(std::vector<Task>& tasks) {
  buckets_.resize(channels_.size());
  bool any = false;
  for (auto& task : tasks) {
    if (!task.has_writes()) continue;
    for (auto& write : task.writes) {
      if (write.channel < 0) write.channel = channels_.for_key(write.key);
      if (!channels_.is_state(write.channel)) continue;
      buckets_.resize(channels_.size());
      buckets_[static_cast<std::size_t>(write.channel)].push_back(std::move(write.value));
      any = true;
    }
  }
  if (!any) return;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    if (buckets_[i].empty()) continue;
    channels_[i].channel->update(std::move(buckets_[i]));
    buckets_[i].clear();
  }
}

RunResult PregelLoop::finish(bool paused, std::vector<Interrupt> interrupts) {
  checkpointer_.save_at_end(tasks_, paused);
  std::shared_ptr<StateSnapshot> state = final_state(paused, interrupts);
  const bool output_has_writes =
      paused &&
      std::any_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.has_writes(); });
  RunResult result;
  if (output_has_writes) {
    // The values shown include the writes of tasks that finished in the paused step; the
    // channels then no longer match the checkpoint, so only the values are cached.
    checkpointer_.stash_values(false);
    apply_for_output(tasks_);
    result.values = output_view();
  } else {
    result.values = output_view();
    checkpointer_.stash_values(true);
  }
  if (state) {
    // The checkpoint's values with the paused step's finished writes applied: get_state's.
    state->values = result.values;
    result.state = std::move(state);
  }
  result.paused = paused;
  result.interrupts = std::move(interrupts);
  if (paused && context_.emitter->wants(StreamMode::kUpdates, context_.ns_segments)) {
    context_.emitter->emit(StreamMode::kUpdates, context_.ns_segments,
                           Json{{"__interrupt__", result.interrupts}});
  }
  return result;
}

}  // namespace tollgate::graph_internal

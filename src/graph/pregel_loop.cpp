// The superstep loop: starting a run (new input, resume, replay), preparing and running the
// tasks of each step, applying their writes, and finishing (done, paused, failed).
#include "graph/pregel_loop.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>

#include "graph/async_saves.h"
#include "graph/ids.h"
#include "graph/map_entries.h"
#include "graph/signals.h"
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
    : graph_(graph), context_(std::move(context)), config_(*context_.config) {
  saver_ = context_.saver.get();
  thread_id_ = config_.thread_id;
  // The channels are made by create_missing_channels() once load() has taken what the values
  // cache holds: a resumed run adopts the channels its previous run left there.
  slots_.resize(graph_.channels.size());
  seen_.resize(graph_.nodes.size());
  for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
    seen_[i].assign(graph_.nodes[i].triggers.size(), 0);
  }
  changed_since_save_.assign(slots_.size(), 0);
}

PregelLoop::~PregelLoop() = default;

void PregelLoop::create_missing_channels() {
  for (std::size_t i = 0; i < base_channels(); ++i) {
    if (!slots_[i].channel) slots_[i].channel = graph_.channels[i].prototype->clone_empty();
  }
}

// ------------------------------------------------------------------------------ channels

const std::string& PregelLoop::channel_name(int index) const {
  const auto position = static_cast<std::size_t>(index);
  return position < base_channels() ? graph_.channels[position].name
                                    : dynamic_names_[position - base_channels()];
}

bool PregelLoop::is_state_channel(int index) const {
  const auto position = static_cast<std::size_t>(index);
  return position >= base_channels() || graph_.channels[position].is_state;
}

int PregelLoop::find_channel(std::string_view name) const {
  if (auto it = graph_.channel_index.find(name); it != graph_.channel_index.end()) {
    return it->second;
  }
  if (auto it = dynamic_index_.find(name); it != dynamic_index_.end()) return it->second;
  return -1;
}

int PregelLoop::channel_for_key(std::string_view key) {
  if (int index = find_channel(key); index >= 0) return index;
  const int index = static_cast<int>(slots_.size());
  slots_.push_back(Slot{make_last_value_channel(std::string(key)), 0});
  dynamic_index_.emplace(std::string(key), index);
  dynamic_names_.emplace_back(key);
  changed_since_save_.push_back(0);
  return index;
}

bool PregelLoop::is_output_channel(int index) const {
  const auto position = static_cast<std::size_t>(index);
  return position >= base_channels() ||
         (graph_.channels[position].is_state && !graph_.channels[position].is_private);
}

State PregelLoop::view(bool output_only) const {
  std::map<std::string, JsonPtr, std::less<>> values;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const int index = static_cast<int>(i);
    if (!(output_only ? is_output_channel(index) : is_state_channel(index))) continue;
    if (JsonPtr value = slots_[i].channel->get()) {
      values.emplace_hint(values.end(), channel_name(index), std::move(value));
    }
  }
  return State(std::move(values));
}

State PregelLoop::state_view() {
  // The previous view's map is reused when nobody holds it any more: its entries stay and
  // only their values change, so a step's view allocates nothing once the keys are known.
  if (!state_values_ || state_values_.use_count() > 1) {
    state_values_ = std::make_shared<std::map<std::string, JsonPtr, std::less<>>>();
  }
  auto& values = *state_values_;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const int index = static_cast<int>(i);
    if (!is_state_channel(index)) continue;
    if (JsonPtr value = slots_[i].channel->get()) {
      put_entry(values, channel_name(index), std::move(value));
    } else {
      erase_entry(values, channel_name(index));
    }
  }
  return State(std::shared_ptr<const std::map<std::string, JsonPtr, std::less<>>>(state_values_));
}

void PregelLoop::release_state_view() {
  step_state_ = State();
  for (auto& task : tasks_) task.input = State();
  // The kept map lets go of the values too (a list channel appends in place only while it
  // holds its list alone); state_view() sets every entry again before the map is shown.
  if (state_values_ && state_values_.use_count() == 1) {
    for (auto& entry : *state_values_) entry.second.reset();
  }
}

Json PregelLoop::values_json() const {
  return output_view().to_json();
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
    if (has_resume && !saver_) {
      throw Error::InvalidArgument("Cannot use Command(resume=...) without checkpointer");
    }
  }
  if (saver_ && thread_id_.empty()) {
    throw Error::InvalidArgument(
        "thread_id is required: the graph has a checkpointer (set RunConfig::thread_id)");
  }

  bool replay = false;
  if (saver_) {
    load(context_.checkpoint_id, /*use_cache=*/true);
    if (has_checkpoint_ && !context_.checkpoint_id.empty()) {
      auto latest = saver_->get_tuple(CheckpointConfig{thread_id_, context_.checkpoint_ns, ""});
      replay = latest && latest->config.checkpoint_id != checkpoint_id_;
    }
  }
  create_missing_channels();  // load() made them; without a saver they are made here
  if (!has_checkpoint_) new_thread();

  if (input && !input->is_null() && (!has_checkpoint_ || !continue_if_exists)) {
    if (!input->is_object()) {
      throw Error::InvalidArgument(std::string("Graph input must be a JSON object, got ") +
                                   input->type_name());
    }
    // A new run discards the unfinished step of the old one: its tasks' triggers are
    // consumed without running them.
    saved_tasks_.clear();
    std::vector<Task> tasks;
    if (has_checkpoint_) {
      prepare_tasks();
      for (auto& task : tasks_) {
        if (!task.push) tasks.push_back(std::move(task));
      }
      tasks_.clear();
    }
    const bool discarded = !tasks.empty();
    Task start;
    start.synthetic = true;
    start.node = 0;
    Json storage;
    start.writes.push_back(Write{graph_.start_channel, public_input(*input, storage), {}});
    tasks.push_back(std::move(start));
    apply_writes(tasks, discarded);
    step_ += 1;
    save_checkpoint("input");
  } else {
    if (!has_checkpoint_) {
      if (has_resume || !context_.answers.empty()) {
        throw Error::Conflict("Thread '" + thread_id_ + "' has no pending interrupt to resume");
      }
      if (!command) return finish(false, {});
    }
    if (replay) {
      saved_tasks_.clear();  // interrupts re-fire, finished tasks re-run
      step_ += 1;
      save_checkpoint("fork");
    }
    interrupt_seen_.clear();
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].version > 0)
        interrupt_seen_[channel_name(static_cast<int>(i))] = slots_[i].version;
    }
    distribute_answers(command);
    std::vector<Write> null_writes;
    if (auto it = saved_tasks_.find(kNullTaskId); it != saved_tasks_.end()) {
      for (auto& [channel, value] : it->second.writes) {
        const int index = find_channel(channel);
        if (index >= 0) {
          null_writes.push_back(Write{index, value, {}});
        } else if (!is_reserved_channel(channel)) {
          null_writes.push_back(Write{-1, value, channel});
        }
      }
    }
    if (command &&
        (command->update || !command->goto_nodes.empty() || !command->goto_sends.empty())) {
      Task pseudo;
      pseudo.node = 0;
      if (command->update) add_update(pseudo, *command->update);
      for (const auto& target : command->goto_nodes) add_goto(pseudo, target, "Command");
      for (const auto& send : command->goto_sends) add_send(pseudo, send, "Command");
      for (auto& write : pseudo.writes) {
        unsaved_null_writes_.emplace_back(channel_name(write), write.value);
        null_writes.push_back(std::move(write));
      }
    }
    if (!null_writes.empty()) apply_null_writes(std::move(null_writes));
    if (!has_checkpoint_) {
      step_ += 1;
      save_checkpoint("input");
      unsaved_null_writes_.clear();
    }
  }

  const std::int64_t stop = step_ + 1 + config_.recursion_limit + 1;
  while (true) {
    if (config_.cancel && config_.cancel->load()) {
      wait_for_saves();
      throw Error(ErrorCode::kCancelled, "Run cancelled");
    }
    prepare_tasks();
    if (tasks_.empty()) break;
    if (step_ + 1 > stop) {
      wait_for_saves();
      throw Error(ErrorCode::kRecursionLimit, recursion_limit_message(config_.recursion_limit));
    }
    attach_saved_writes();
    if (breakpoint_hit(config_.interrupt_before, graph_.interrupt_before)) {
      tasks_.clear();
      return finish(true, {});
    }
    run_step();
    for (auto& task : tasks_) {
      if (task.error) {
        wait_for_saves();
        std::rethrow_exception(task.error);
      }
    }
    std::vector<Interrupt> interrupts;
    bool paused = false;
    // Under exit durability finish() still saves the paused tasks' interrupts, so they are
    // copied; otherwise they were saved when their task paused and move to the result.
    const bool keep_interrupts = config_.durability == Durability::kExit;
    for (auto& task : tasks_) {
      if (!task.paused) continue;
      paused = true;
      for (auto& interrupt : task.interrupts) {
        interrupts.push_back(keep_interrupts ? interrupt : std::move(interrupt));
      }
    }
    if (paused) return finish(true, std::move(interrupts));

    // Drop this step's references to channel values first, so that a list channel owning
    // its value alone appends in place instead of copying the whole list.
    release_state_view();
    apply_writes(tasks_, true);
    step_ += 1;
    save_checkpoint("loop");
    unsaved_null_writes_.clear();
    if (context_.emitter->wants(StreamMode::kValues, context_.ns_segments)) {
      context_.emitter->emit(StreamMode::kValues, context_.ns_segments, values_json());
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
  for (const auto& [task_id, saved] : saved_tasks_) {
    if (saved.finished || !saved.interrupts || !saved.interrupts->is_array()) continue;
    for (const auto& interrupt : *saved.interrupts) {
      pending.emplace_back(interrupt.value("id", ""), task_id);
    }
  }
  const std::string where =
      "Thread '" + thread_id_ + "'" +
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
                           [&](const auto& entry) { return entry.first == id; });
    if (it == pending.end()) {
      throw Error::Conflict("Unknown or already-answered interrupt id '" + id + "' on " + where);
    }
    answers_by_task_[it->second][id] = std::move(value);
  }
}

void PregelLoop::apply_null_writes(std::vector<Write> writes) {
  Task pseudo;
  pseudo.synthetic = true;
  pseudo.node = 0;
  pseudo.writes = std::move(writes);
  std::vector<Task> tasks;
  tasks.push_back(std::move(pseudo));
  apply_writes(tasks, false);
}

// --------------------------------------------------------------------------------- steps

void PregelLoop::ensure_task_id(Task& task) const {
  if (task.has_id) return;
  const std::string step_text = std::to_string(step_ + 1);
  const std::string& name = graph_.nodes[static_cast<std::size_t>(task.node)].name;
  if (task.push) {
    task.id = task_id({checkpoint_id_, context_.checkpoint_ns, step_text, name, kPushPath,
                       std::to_string(task.push_index)});
  } else {
    std::vector<std::string_view> parts{checkpoint_id_, context_.checkpoint_ns, step_text, name,
                                        kPullPath};
    for (int fired : task.fired) parts.emplace_back(channel_name(fired));
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
  task.has_id = true;
}

void PregelLoop::prepare_tasks() {
  tasks_.clear();
  tasks_.reserve(4);
  step_state_ = state_view();

  const Slot& sends = slots_[static_cast<std::size_t>(graph_.tasks_channel)];
  if (sends.channel->is_available()) {
    JsonPtr list = sends.channel->get();
    if (list && list->is_array()) {
      for (std::size_t i = 0; i < list->size(); ++i) {
        const Json& send = (*list)[i];
        const int node = graph_.find_node(send.value("node", ""));
        if (node <= 0) continue;
        Task task;
        task.node = node;
        task.push = true;
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
    for (std::size_t j = 0; j < node.triggers.size(); ++j) {
      const Slot& slot = slots_[static_cast<std::size_t>(node.triggers[j])];
      if (slot.version > seen_[n][j] && slot.channel->is_available()) {
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
      return !task.push && graph_.nodes[static_cast<std::size_t>(task.node)].defer;
    });
  }
  // With a saver the ids key saved writes and are part of every saved task; the checkpoint
  // id they hash changes once the step is applied, so they are fixed now.
  if (saver_) {
    for (auto& task : tasks_) ensure_task_id(task);
  }
}

void PregelLoop::attach_saved_writes() {
  if (saved_tasks_.empty() && answers_by_task_.empty()) return;
  for (auto& task : tasks_) {
    ensure_task_id(task);
    if (auto it = saved_tasks_.find(task.id); it != saved_tasks_.end()) {
      const SavedTask& saved = it->second;
      if (saved.finished) {
        for (const auto& [channel, value] : saved.writes) {
          const int index = find_channel(channel);
          if (index >= 0) {
            task.writes.push_back(Write{index, value, {}});
          } else if (!is_reserved_channel(channel)) {
            task.writes.push_back(Write{-1, value, channel});
          }
        }
        task.done = true;
        task.reattached = true;
      } else {
        if (saved.resume && saved.resume->is_array()) {
          task.resume_values.assign(saved.resume->begin(), saved.resume->end());
        }
        task.resuming = saved.interrupts.has_value();
      }
    }
    if (auto it = answers_by_task_.find(task.id); it != answers_by_task_.end()) {
      task.answers = std::move(it->second);
      answers_by_task_.erase(it);
    }
  }
}

bool PregelLoop::breakpoint_hit(const std::vector<std::string>& run_names,
                                const std::vector<std::string>& compiled_names) const {
  if (run_names.empty() && compiled_names.empty()) return false;
  bool changed = false;
  for (std::size_t i = 0; i < slots_.size() && !changed; ++i) {
    if (slots_[i].version == 0) continue;
    auto it = interrupt_seen_.find(channel_name(static_cast<int>(i)));
    changed = it == interrupt_seen_.end() || slots_[i].version > it->second;
  }
  if (!changed) return false;
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
    if (!task.done) todo.push_back(&task);
  }
  if (todo.empty()) return;
  if (todo.size() == 1) {
    Task& task = *todo[0];
    task.route_at_apply =
        tasks_.size() == 1 && !graph_.nodes[static_cast<std::size_t>(task.node)].branches.empty();
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
  updated.reserve(slots_.size());  // one allocation instead of one per doubling
  updated_.assign(slots_.size(), 0);
  auto mark = [&](int index) {
    if (!updated_[static_cast<std::size_t>(index)]) {
      updated_[static_cast<std::size_t>(index)] = 1;
      updated.push_back(index);
    }
  };
  for (auto& task : tasks) {
    if (task.push || task.synthetic) continue;
    const CompiledNode& node = graph_.nodes[static_cast<std::size_t>(task.node)];
    for (std::size_t j = 0; j < node.triggers.size(); ++j) {
      const int trigger = node.triggers[j];
      seen_[static_cast<std::size_t>(task.node)][j] =
          slots_[static_cast<std::size_t>(trigger)].version;
      if (slots_[static_cast<std::size_t>(trigger)].channel->consume()) mark(trigger);
    }
  }
  Task* router = nullptr;
  for (auto& task : tasks) {
    for (auto& write : task.writes) {
      if (write.channel < 0) write.channel = channel_for_key(write.key);
    }
    if (task.route_at_apply && task.done && !task.reattached) router = &task;
  }
  updated_.resize(slots_.size(), 0);
  buckets_.resize(slots_.size());
  written_.assign(slots_.size(), 0);

  // State keys first, so that a step's only task can route on the state it produced.
  std::vector<std::pair<std::string, Json>> router_payload;
  const bool save_router_writes =
      router && saver_ && !updating_state_ && config_.durability != Durability::kExit;
  if (save_router_writes) router_payload = saved_form(*router);
  for (int pass = 0; pass < 2; ++pass) {
    const bool state_pass = pass == 0;
    if (!state_pass && router) {
      const std::size_t before = router->writes.size();
      route(*router, state_view());
      if (save_router_writes) put_task_writes(*router, false, std::move(router_payload), before);
    }
    for (auto& task : tasks) {
      for (auto& write : task.writes) {
        if (is_state_channel(write.channel) != state_pass) continue;
        buckets_[static_cast<std::size_t>(write.channel)].push_back(std::move(write.value));
      }
    }
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (buckets_[i].empty()) continue;
      written_[i] = 1;
      if (slots_[i].channel->update(std::move(buckets_[i]))) mark(static_cast<int>(i));
      buckets_[i].clear();
    }
  }
  if (bump_step) {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (!written_[i] && slots_[i].channel->update({})) mark(static_cast<int>(i));
    }
  }
  auto bump = [&](const std::vector<int>& channels) {
    if (channels.empty()) return;
    const ChannelVersion next = saver_ ? saver_->next_version(max_version_) : max_version_ + 1;
    for (int index : channels) {
      slots_[static_cast<std::size_t>(index)].version = next;
      changed_since_save_[static_cast<std::size_t>(index)] = 1;
    }
    max_version_ = next;
  };
  bump(updated);
  const bool triggers_any = std::any_of(updated.begin(), updated.end(), [&](int index) {
    const auto position = static_cast<std::size_t>(index);
    return position < base_channels() && graph_.channels[position].triggers_node;
  });
  if (!triggers_any && bump_step) {
    std::vector<int> finished;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].channel->finish()) finished.push_back(static_cast<int>(i));
    }
    bump(finished);
    updated.insert(updated.end(), finished.begin(), finished.end());
  }
  if (saver_) {
    updated_channels_.clear();
    for (int index : updated) updated_channels_.push_back(channel_name(index));
  }
  return updated;
}

void PregelLoop::apply_for_output(std::vector<Task>& tasks) {
  buckets_.resize(slots_.size());
  bool any = false;
  for (auto& task : tasks) {
    if (!task.done) continue;
    for (auto& write : task.writes) {
      if (write.channel < 0) write.channel = channel_for_key(write.key);
      if (!is_state_channel(write.channel)) continue;
      buckets_.resize(slots_.size());
      buckets_[static_cast<std::size_t>(write.channel)].push_back(std::move(write.value));
      any = true;
    }
  }
  if (!any) return;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (buckets_[i].empty()) continue;
    slots_[i].channel->update(std::move(buckets_[i]));
    buckets_[i].clear();
  }
}

RunResult PregelLoop::finish(bool paused, std::vector<Interrupt> interrupts) {
  if (saver_ && has_checkpoint_) {
    if (config_.durability == Durability::kExit) {
      if (!saved_) put_current_checkpoint();
      if (paused) {
        for (auto& task : tasks_) {
          if ((task.done && !task.reattached) || task.paused) put_task_writes(task, true);
        }
      }
    }
    if (paused && !unsaved_null_writes_.empty()) {
      put_writes_payload(std::string(kNullTaskId), std::move(unsaved_null_writes_), true);
      unsaved_null_writes_.clear();
    }
    wait_for_saves();
  }
  const bool output_has_writes =
      paused && std::any_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.done; });
  RunResult result;
  if (output_has_writes) {
    // The values shown include the writes of tasks that finished in the paused step; the
    // channels then no longer match the checkpoint, so only the values are cached.
    if (saver_ && has_checkpoint_) stash_values(false);
    apply_for_output(tasks_);
    result.values = output_view();
  } else {
    result.values = output_view();
    if (saver_ && has_checkpoint_) stash_values(true);
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

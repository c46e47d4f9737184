// The superstep (Pregel) loop of one graph in one namespace of one thread.
//
// A run loads the latest (or a chosen) checkpoint, restores the channels from it, and then
// repeats: prepare the tasks the last step triggered (Sends first, then nodes), run them
// (in parallel when there are several), save each finished task's writes, apply all writes
// together, save a checkpoint. It stops when nothing is triggered, at an interrupt or a
// static breakpoint, or on an error. A subgraph runs its own PregelLoop inside its parent's
// task, in the namespace "<node>:<task_id>".
//
// Thread-safety: a loop belongs to one run. Only run_task() runs on several threads at once
// (one task each); it reads channels and never writes them.
#pragma once

#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph_definition.h"
#include "graph/stream_emitter.h"
#include "tollgate/graph.h"

namespace tollgate::graph_internal {

// What a loop inherits from whoever started it (CompiledGraph::invoke or a parent task).
struct LoopContext {
  const RunConfig* config = nullptr;  // the root run's config (streams, context, limits)
  StreamEmitter* emitter = nullptr;
  std::shared_ptr<Saver> saver;
  std::string checkpoint_ns;  // this loop's namespace ("" at the root)
  std::string checkpoint_id;  // replay/fork from this checkpoint (root only)
  std::vector<std::string> ns_segments;
  Json parents = Json::object();  // metadata.parents of this loop's checkpoints
  bool has_parent = false;
  // Resume answers addressed to interrupts raised inside this loop (by interrupt id).
  std::map<std::string, Json> answers;
};

struct Slot {
  std::unique_ptr<Channel> channel;  // null until PregelLoop::create_missing_channels()
  ChannelVersion version = 0;        // 0: never written
};

struct Task {
  int node = -1;
  bool push = false;
  bool synthetic = false;  // update_state's stand-in: consumes no triggers
  std::size_t push_index = 0;
  // Without a saver nothing may need them, so they are computed on first use
  // (PregelLoop::ensure_task_id); with a saver, when the task is prepared.
  bool has_id = false;
  std::string id;
  std::string ns;          // "<loop ns>|<node>:<id>": its interrupts' and subgraph's
  std::vector<int> fired;  // the trigger channels that made it run
  State input;
  std::vector<Write> writes;
  bool done = false;                    // writes are ready: it ran now, or they were saved before
  bool reattached = false;              // its writes come from a previous attempt of this step
  bool resuming = false;                // it paused in a previous attempt of this step
  bool route_at_apply = false;          // the only task of its step: routers see the applied state
  bool paused = false;                  // stopped at interrupt() (or inside a paused subgraph)
  std::vector<Json> resume_values;      // answers to its interrupts so far, in order
  std::map<std::string, Json> answers;  // new answers for it, by interrupt id
  std::vector<Interrupt> interrupts;    // raised now (or, in snapshots, saved)
  std::optional<std::string> saved_error;
  std::exception_ptr error;
};

class AsyncSaves;

class PregelLoop {
 public:
  PregelLoop(const CompiledGraph::Impl& graph, LoopContext context);
  ~PregelLoop();
  PregelLoop(const PregelLoop&) = delete;
  PregelLoop& operator=(const PregelLoop&) = delete;

  // Runs the graph. `input` non-null: new input (an object); `command`: a Command input;
  // both null: continue from the checkpoint. `continue_if_exists`: a subgraph re-run by its
  // resumed parent task continues its own checkpoint instead of taking `input`.
  RunResult run(const Json* input, const Command* command, bool continue_if_exists = false);

  // The state at a checkpoint (get_state / get_state_history).
  StateSnapshot snapshot(const CheckpointTuple& tuple, bool apply_pending_writes, bool subgraphs);

  // update_state: applies `values` as if `as_node` wrote them and saves a new checkpoint.
  CheckpointConfig update(const Json& values, const std::string& as_node);

  // Fills task.id and task.ns if not done yet. Touches only `task` (safe from the thread
  // running it); the loop's checkpoint id and step do not change while a step runs.
  void ensure_task_id(Task& task) const;

  // Task bodies (called by the step runner, possibly on pool threads).
  void run_task(Task& task);
  Json run_child_graph(Task& task, const CompiledGraph& child, const Json& input);

  // Accessors used by the task runtime.
  const CompiledGraph::Impl& graph() const { return graph_; }
  const LoopContext& context() const { return context_; }
  const State& step_state() const { return step_state_; }
  std::int64_t step() const { return step_ + 1; }
  StreamEmitter& emitter() { return *context_.emitter; }

 private:
  // What a previous attempt of the current step saved for one task.
  struct SavedTask {
    std::vector<std::pair<std::string, Json>> writes;
    std::optional<Json> interrupts;
    std::optional<Json> resume;
    std::optional<Json> error;
    bool finished = false;
  };

  // Channels.
  std::size_t base_channels() const { return graph_.channels.size(); }
  const std::string& channel_name(int index) const;
  // The name `write` goes to: its channel's, or its new state key.
  const std::string& channel_name(const Write& write) const {
    return write.channel < 0 ? write.key : channel_name(write.channel);
  }
  bool is_state_channel(int index) const;
  int find_channel(std::string_view name) const;
  int channel_for_key(std::string_view key);  // creates a last-value channel if needed
  // A state key shown in output (not private, see StateSchema::make_private).
  bool is_output_channel(int index) const;
  State view(bool output_only) const;
  // Every state key: what nodes and routers see. Reuses the previous view's map when no one
  // holds it (see state_values_).
  State state_view();
  // Drops the step's state views (step_state_, the tasks' inputs) and the values the kept
  // map holds.
  void release_state_view();
  // The output keys: what invoke, the streams and get_state show.
  State output_view() const { return view(true); }
  Json values_json() const;  // output_view() as one object
  // `input` without its private keys (they are ignored in input); `input` itself when it
  // has none.
  const Json& public_input(const Json& input, Json& storage) const;

  // Checkpoints.
  // Makes the graph's channels that no cached run handed over (see load()).
  void create_missing_channels();
  // Loads a checkpoint (the latest when `checkpoint_id` is empty) and makes every channel;
  // false when there is none.
  bool load(const std::string& checkpoint_id, bool use_cache);
  // Sets the channels, versions and saved task writes from `tuple` (taken apart: it is moved
  // from where it can be).
  void restore(CheckpointTuple tuple, const std::map<std::string, JsonPtr, std::less<>>* values,
               bool channels_adopted = false);
  void new_thread();
  // The checkpoint of the current state, kept in `header_` and updated in place: a save
  // only rewrites the entries that changed instead of rebuilding every map.
  const Checkpoint& make_checkpoint();
  Json make_metadata(const char* source) const;
  void save_checkpoint(const char* source);
  void put_current_checkpoint();
  // Saves a finished task's writes, or a paused one's interrupts. A save made in this thread
  // borrows the write values and gives them back before returning. A finished task saves
  // `saved_before` and then its writes from `first_write` on (a router: its own writes,
  // copied before they were applied, then the routing writes).
  void put_task_writes(Task& task, bool force = false,
                       std::vector<std::pair<std::string, Json>> saved_before = {},
                       std::size_t first_write = 0);
  // Saves `writes` for `task_id`. A save made in this thread reads `writes` in place and
  // leaves them whole; an async save takes them. Nothing is saved under exit durability
  // unless `force`.
  void put_writes_payload(const std::string& task_id,
                          std::vector<std::pair<std::string, Json>>&& writes, bool force);
  std::vector<std::pair<std::string, Json>> saved_form(const Task& task) const;
  void wait_for_saves();
  void stash_values(bool move_channels);

  // Steps.
  void prepare_tasks();
  void attach_saved_writes();
  bool breakpoint_hit(const std::vector<std::string>& run_names,
                      const std::vector<std::string>& compiled_names) const;
  void run_step();
  void collect_writes(Task& task, NodeResult result);
  void add_update(Task& task, Json update);
  void add_goto(Task& task, const std::string& target, const std::string& origin);
  void add_send(Task& task, Send send, const std::string& origin);
  void route(Task& task, const State& view);
  State fresh_view(const Task& task) const;
  std::vector<int> apply_writes(std::vector<Task>& tasks, bool bump_step);
  void apply_for_output(std::vector<Task>& tasks);
  void distribute_answers(const Command* command);
  void apply_null_writes(std::vector<Write> writes);
  RunResult finish(bool paused, std::vector<Interrupt> interrupts);
  void emit_task_result(Task& task);
  Json checkpoint_payload() const;

  const CompiledGraph::Impl& graph_;
  LoopContext context_;
  const RunConfig& config_;
  Saver* saver_ = nullptr;
  std::string thread_id_;

  std::vector<Slot> slots_;
  std::map<std::string, int, std::less<>> dynamic_index_;
  std::vector<std::string> dynamic_names_;
  std::vector<std::vector<ChannelVersion>> seen_;  // per node, aligned with its triggers
  ChannelVersions interrupt_seen_;
  ChannelVersion max_version_ = 0;
  std::vector<char> changed_since_save_;
  std::vector<std::string> updated_channels_;

  bool has_checkpoint_ = false;
  std::string checkpoint_id_;
  std::int64_t step_ = -2;
  std::string created_at_;
  Json metadata_ = Json::object();
  bool own_metadata_ = false;  // metadata_ came from make_metadata(), not from a loaded tuple
  std::optional<CheckpointConfig> parent_config_;
  Checkpoint header_;  // see make_checkpoint()
  bool saved_ = false;
  std::string last_saved_id_;

  std::map<std::string, SavedTask, std::less<>> saved_tasks_;
  std::map<std::string, std::map<std::string, Json>, std::less<>> answers_by_task_;
  std::vector<std::pair<std::string, Json>> unsaved_null_writes_;

  std::vector<Task> tasks_;
  State step_state_;
  // The map of the last state_view(), rewritten in place by the next one when step_state_
  // and the tasks' inputs were its only holders.
  std::shared_ptr<std::map<std::string, JsonPtr, std::less<>>> state_values_;
  std::unique_ptr<AsyncSaves> async_saves_;
  std::vector<std::vector<Json>> buckets_;
  std::vector<char> written_;
  std::vector<char> updated_;
  bool updating_state_ = false;  // update(): writes are not saved as task writes
};

// The state of (thread, namespace) at a checkpoint, read with `saver` (get_state).
StateSnapshot read_state(const CompiledGraph::Impl& graph, const std::shared_ptr<Saver>& saver,
                         const RunConfig& config, bool subgraphs);

}  // namespace tollgate::graph_internal

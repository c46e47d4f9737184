// The superstep (Pregel) loop of one graph in one namespace of one thread.
//
// A run loads the latest (or a chosen) checkpoint, restores the channels from it, and then
// repeats: prepare the tasks the last step triggered (Sends first, then nodes), run them
// (in parallel when there are several), save each finished task's writes, apply all writes
// together, save a checkpoint. It stops when nothing is triggered, at an interrupt or a
// static breakpoint, or on an error. A subgraph runs its own PregelLoop inside its parent's
// task, in the namespace "<node>:<task_id>".
//
// The loop delegates: LoopChannels holds the channels and their versions, LoopCheckpointer
// loads and saves them (and knows what a previous attempt of the step saved), Task carries
// one task's lifecycle. The loop itself prepares, runs, routes and applies.
//
// Thread-safety: a loop belongs to one run. Only run_task() runs on several threads at once
// (one task each); it reads channels and never writes them.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph_definition.h"
#include "graph/loop_channels.h"
#include "graph/loop_checkpointer.h"
#include "graph/loop_context.h"
#include "graph/stream_emitter.h"
#include "graph/task.h"
#include "tollgate/graph.h"

namespace tollgate::graph_internal {

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

  // The state at a checkpoint (get_state / get_state_history); takes the tuple apart.
  // `values_own`: the tuple's channel values are the values cache's (Channel::restore_own).
  StateSnapshot snapshot(CheckpointTuple tuple, bool apply_pending_writes, bool subgraphs,
                         bool values_own = false);

  // update_state: applies `values` as if `as_node` wrote them and saves a new checkpoint.
  CheckpointConfig update(const Json& values, const std::string& as_node);

  // Fills task.id and task.ns if not done yet. Touches only `task` (safe from the thread
  // running it); the loop's checkpoint id and step do not change while a step runs.
  void ensure_task_id(Task& task) const;

  // Task bodies (called by the step runner, possibly on pool threads). `resuming`: the task
  // paused in a previous attempt, so its subgraph continues its own checkpoint.
  void run_task(Task& task);
  Json run_child_graph(Task& task, const CompiledGraph& child, const Json& input, bool resuming);
  // Stores `task`'s effect intents at once (record_intent, effect_intents.h; from the task's thread).
  void record_intents(const Task& task) { checkpointer_.put_intents(task); }

  // Accessors used by the task runtime.
  const CompiledGraph::Impl& graph() const { return graph_; }
  const LoopContext& context() const { return context_; }
  const State& step_state() const { return step_state_; }
  const Json& discarded_intents() const { return checkpointer_.discarded_intents(); }
  std::int64_t step() const { return checkpointer_.step() + 1; }
  StreamEmitter& emitter() { return *context_.emitter; }

 private:
  // Runs (run()).
  void distribute_answers(const Command* command);
  void apply_null_writes(std::vector<Write> writes);
  RunResult finish(bool paused, std::vector<Interrupt> interrupts);
  // The state the run ends on, as snapshot() of its checkpoint shows it, without the values
  // (the run's own; RunConfig::final_state). Called by finish() once the checkpoint and the
  // step's writes are saved, before the writes of a paused step's finished tasks are applied
  // for output; `interrupts`: the paused tasks', in task order. Null when not asked for, or
  // not known without reading the checkpoint back.
  std::shared_ptr<StateSnapshot> final_state(bool paused, const std::vector<Interrupt>& interrupts);

  // Snapshots (state_access.cpp): the tasks of the step the loop stands on (as prepared, their
  // saved writes reattached, those of this run's attempt done or paused) with what the
  // checkpoint's pending writes hold for them, `next`, the interrupts and task_input; values
  // are left to the caller (applying the step's writes for output when asked).
  // `raised`: the interrupts the paused tasks raised in this run, in task order.
  void describe_step(StateSnapshot& snapshot, bool apply_pending_writes, bool subgraphs,
                     const std::vector<Interrupt>& raised) const;

  // Steps.
  void prepare_tasks();
  void attach_saved_writes();
  // Appends `saved` to `writes` as writes of this loop's channels (dropping reserved names
  // this graph has no channel for).
  void append_saved_writes(const SavedWrites& saved, std::vector<Write>& writes) const;
  bool breakpoint_hit(const std::vector<std::string>& run_names,
                      const std::vector<std::string>& compiled_names) const;
  void run_step();
  std::vector<int> apply_writes(std::vector<Task>& tasks, bool bump_step);
  void apply_for_output(std::vector<Task>& tasks);
  // Drops the step's state views (step_state_, the tasks' inputs) and the values the kept
  // map holds.
  void release_state_view();

  // Writers (task_runner.cpp).
  void collect_writes(Task& task, NodeResult result);
  void add_update(Task& task, Json update);
  void add_goto(Task& task, const std::string& target, const std::string& origin);
  void add_send(Task& task, Send send, const std::string& origin);
  void route(Task& task, const State& view);
  State fresh_view(const Task& task) const;
  void emit_task_result(Task& task);

  // Output.
  // The output keys: what invoke, the streams and get_state show.
  State output_view() const { return channels_.view(true); }
  Json values_json() const { return output_view().to_json(); }
  // `input` without its private keys (they are ignored in input); `input` itself when it
  // has none.
  const Json& public_input(const Json& input, Json& storage) const;

  const CompiledGraph::Impl& graph_;
  LoopContext context_;
  const RunConfig& config_;
  LoopChannels channels_;
  LoopCheckpointer checkpointer_;  // borrows context_ and channels_

  std::map<std::string, std::map<std::string, Json>, std::less<>> answers_by_task_;
  std::vector<Task> tasks_;
  State step_state_;
  std::uint64_t serial_ = 0;        // this loop among the process's (StreamEvent::loop)
  std::uint64_t values_shown_ = 0;  // values events emitted with the state by reference
  std::string values_base_;         // the checkpoint loaded (StreamEvent::values_base)
  // The checkpoint whose state null writes (a resuming Command's update) changed: the tasks of
  // its step do not start on the state it holds.
  std::string null_writes_on_;
  // apply_writes()'s per-channel scratch, kept between steps.
  std::vector<std::vector<Json>> buckets_;
  std::vector<char> written_;
  std::vector<char> updated_;
};

// The state of (thread, namespace) at a checkpoint, read with `saver` (get_state).
StateSnapshot read_state(const CompiledGraph::Impl& graph, const std::shared_ptr<Saver>& saver,
                         const RunConfig& config, bool subgraphs);

}  // namespace tollgate::graph_internal

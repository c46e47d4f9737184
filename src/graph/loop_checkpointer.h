// The persistence half of one loop: where the loop stands in its thread's history (the
// checkpoint it is on and that checkpoint's step), loading and restoring a checkpoint into
// the loop's channels, saving a checkpoint per step and each task's writes as it finishes
// (at once, in the background or at exit, per RunConfig::durability), what a previous
// attempt of the current step saved, and handing the channels to the values cache when the
// run ends.
//
// Without a saver it only counts steps: every save is a no-op and nothing was saved before.
//
// Thread-safety: belongs to the loop's thread, except put_task_writes(), which a task's
// thread calls for that task while its step runs (several at once in a parallel step); it
// reads only the loop's position, which does not change while a step runs. Background saves
// run on the graph's pool (see AsyncSaves).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/loop_channels.h"
#include "graph/task.h"
#include "tollgate/checkpoint.h"

namespace tollgate::graph_internal {

class AsyncSaves;
struct LoopContext;

// Writes as a saver stores them: (channel name, value) in order.
using SavedWrites = std::vector<std::pair<std::string, Json>>;

// What a previous attempt of the current step saved for one task.
struct SavedTask {
  SavedWrites writes;
  std::optional<Json> interrupts;
  std::optional<Json> resume;
  std::optional<Json> error;
  std::optional<Json> intents;  // its effect intents ({key: intent}), see effect_intents.h
  bool finished = false;  // its writes (maybe none) were saved: it is not run again
};

class LoopCheckpointer {
 public:
  // `context` and `channels` are the loop's and outlive this.
  LoopCheckpointer(const CompiledGraph::Impl& graph, const LoopContext& context,
                   LoopChannels& channels);
  ~LoopCheckpointer();
  LoopCheckpointer(const LoopCheckpointer&) = delete;
  LoopCheckpointer& operator=(const LoopCheckpointer&) = delete;

  // ---- where the loop stands
  bool has_checkpoint() const { return has_checkpoint_; }
  // The checkpoint the current step starts from ("" before the first save, or without a
  // saver).
  const std::string& checkpoint_id() const { return checkpoint_id_; }
  // That checkpoint's step: -1 for the input, then 0, 1, ...; -2 on a new thread.
  std::int64_t step() const { return step_; }
  // That checkpoint's metadata, time (`ts`) and parent, as the saver stores them once it is put.
  const Json& metadata() const { return metadata_; }
  const std::string& created_at() const { return created_at_; }
  const std::optional<CheckpointConfig>& parent_config() const { return parent_config_; }

  // ---- loading
  // Loads a checkpoint (the latest when `checkpoint_id` is empty; `use_cache`: adopting the
  // channels or values the thread's previous run left in the values cache) and makes every
  // channel. False when there is none; a named checkpoint that is missing throws kNotFound.
  bool load(const std::string& checkpoint_id, bool use_cache);
  // Restores the channels, versions and saved task writes from `tuple` (get_state), which it
  // takes apart. `values_own`: its channel values are the values cache's (Channel::restore_own).
  void load(CheckpointTuple tuple, bool values_own = false);

  // ---- what a previous attempt of this step saved, by task id (kNullTaskId: the writes of
  // the Command that resumed it)
  const std::map<std::string, SavedTask, std::less<>>& saved_tasks() const {
    return saved_tasks_;
  }
  // A new input or a replay: the unfinished step's saved writes no longer count.
  void forget_saved_tasks() { saved_tasks_.clear(); }
  // A new input: as forget_saved_tasks(), keeping the intents of the tasks that had not finished
  // (their effects may have happened) for discarded_intents().
  void discard_saved_tasks();
  // {key: intent} of the unfinished tasks the run's new input discarded; an empty object if none.
  const Json& discarded_intents() const { return discarded_intents_; }

  // ---- saving
  // Advances to the next step and saves its checkpoint (`source`: "input", "loop", "update",
  // "fork"); under exit durability it is put when the run ends. Writes held by
  // hold_null_writes() are part of it from then on.
  void save_step(const char* source);
  // A Command's update/goto writes, applied but saved only as the null task's pending writes,
  // and only if the run pauses before the next checkpoint.
  void hold_null_write(std::string channel, Json value);
  // update_state: the tasks it folds in are part of its checkpoint, their writes are not
  // saved on their own.
  void skip_task_writes() { skip_task_writes_ = true; }
  // Whether a finished task's writes are saved as soon as it finishes.
  bool saves_task_writes_at_once() const;
  // `task`'s writes in saved form (copies of the values).
  SavedWrites saved_form(const Task& task) const;
  // Saves a done task's writes, or a paused one's interrupts and answers so far; nothing
  // under exit durability unless `force`. A save made in this thread borrows the write values
  // and gives them back before returning. A done task saves `saved_before` and then its
  // writes from `first_write` on (a router: its own writes, copied before they were applied,
  // then the routing writes).
  void put_task_writes(Task& task, bool force = false, SavedWrites saved_before = {},
                       std::size_t first_write = 0);
  // The step's only task is about to run, and the step's checkpoint is put right after its
  // writes are applied: under sync durability the writes of the task, if it finishes, are
  // held and saved in the transaction of that checkpoint (Saver::put_after_writes, one commit
  // instead of two). A task that pauses saves at once as always.
  void hold_task_writes_for_next_put();
  // Saves writes held by hold_task_writes_for_next_put() on their own (a step that ends
  // without its checkpoint: an error while its writes are applied); stops holding.
  void flush_held_task_writes();
  // Stores `task`'s effect intents (Task::intents, effect_intents.h) now and synchronously, whatever the
  // durability: under exit durability the step's checkpoint is put first, in the background
  // mode the queue of earlier saves is waited for, so that the intents are never stored before
  // the checkpoint they belong to. May be called from a task's thread (one mutex guards it).
  void put_intents(const Task& task);
  // The channels a step's writes updated (the checkpoint's "updated_channels").
  void record_updated_channels(const std::vector<int>& updated);
  // Waits for the background saves; rethrows the first that failed.
  void wait_for_saves();
  // The run ends: under exit durability puts the checkpoint and, when paused, the writes of
  // `tasks`; puts the held null writes when paused; waits for every save.
  void save_at_end(std::vector<Task>& tasks, bool paused);
  // Hands the values of the checkpoint the run ended on to the values cache for the thread's
  // next run: the channels themselves (`move_channels`; the loop ends on exactly that
  // checkpoint and uses them no more) or their values.
  void stash_values(bool move_channels);

 private:
  // `values` (else the tuple's) restored as channels' own values when `values_own`.
  void restore(CheckpointTuple tuple, const LoopChannels::ValueMap* values, bool channels_adopted,
               bool values_own);
  // The checkpoint of the current state, kept in `header_` and updated in place: a save only
  // rewrites the entries that changed instead of rebuilding every map.
  const Checkpoint& make_checkpoint();
  Json make_metadata(const char* source) const;
  void put_current_checkpoint();
  void emit_checkpoint();
  // Saves `writes` for `task_id`. A save made in this thread reads `writes` in place and
  // leaves them whole; an async save takes them. Nothing is saved under exit durability
  // unless `force`.
  void put_writes(const std::string& task_id, SavedWrites&& writes, bool force);

  const CompiledGraph::Impl& graph_;
  const LoopContext& context_;
  const RunConfig& config_;
  LoopChannels& channels_;
  Saver* saver_ = nullptr;

  bool has_checkpoint_ = false;
  std::string checkpoint_id_;
  std::int64_t step_ = -2;
  std::string created_at_;
  Json metadata_ = Json::object();
  bool own_metadata_ = false;  // metadata_ came from make_metadata(), not from a loaded tuple
  std::optional<CheckpointConfig> parent_config_;
  Checkpoint header_;  // see make_checkpoint()
  std::vector<std::string> updated_channels_;
  bool saved_ = false;  // the current checkpoint was put
  std::string last_saved_id_;

  std::map<std::string, SavedTask, std::less<>> saved_tasks_;
  Json discarded_intents_ = Json::object();
  SavedWrites held_null_writes_;
  // A finished task's writes kept for the next put (hold_task_writes_for_next_put).
  struct HeldTaskWrites {
    CheckpointConfig config;
    std::string task_id;
    SavedWrites writes;
  };
  bool hold_task_writes_ = false;
  std::optional<HeldTaskWrites> held_task_writes_;
  bool skip_task_writes_ = false;
  std::unique_ptr<AsyncSaves> async_saves_;
  // Guards put_intents(): tasks of a parallel step may record intents at the same time, and
  // under exit durability the first one puts the step's checkpoint.
  std::mutex intents_mutex_;
};

}  // namespace tollgate::graph_internal

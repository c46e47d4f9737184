// The persistence half of one loop (see loop_checkpointer.h): loading and restoring a
// checkpoint, saving checkpoints and task writes (sync, async or at exit), and the values
// cache.
#include "graph/loop_checkpointer.h"

#include <algorithm>
#include <cassert>

#include "graph/async_saves.h"
#include "graph/ids.h"
#include "graph/loop_context.h"
#include "graph/map_entries.h"
#include "tollgate/effect_intents.h"
#include "tollgate/error.h"

namespace tollgate::graph_internal {

LoopCheckpointer::LoopCheckpointer(const CompiledGraph::Impl& graph, const LoopContext& context,
                                   LoopChannels& channels)
    : graph_(graph),
      context_(context),
      config_(*context.config),
      channels_(channels),
      saver_(context.saver.get()) {}

LoopCheckpointer::~LoopCheckpointer() = default;

// ------------------------------------------------------------------------------- loading

bool LoopCheckpointer::load(const std::string& checkpoint_id, bool use_cache) {
  const std::string& thread_id = config_.thread_id;
  std::optional<CachedValues> cached;
  GetOptions options;
  if (use_cache) {
    cached = graph_.values_cache.take(saver_, thread_id, context_.checkpoint_ns);
    if (cached) options.reuse_values_of = cached->checkpoint_id;
  }
  auto tuple = saver_->get_tuple(
      CheckpointConfig{thread_id, context_.checkpoint_ns, checkpoint_id}, options);
  if (!tuple) {
    channels_.create_missing();
    if (!checkpoint_id.empty()) {
      throw Error::NotFound("Checkpoint '" + checkpoint_id + "' not found on thread '" +
                            thread_id + "'");
    }
    return false;
  }
  bool adopted = false;
  if (tuple->values_reused && cached && !cached->channels.empty()) {
    for (auto& [name, channel] : cached->channels) {
      const int index = channels_.for_saved_name(name);
      if (index >= 0) channels_.slot(index).channel = std::move(channel);
    }
    adopted = true;
  }
  channels_.create_missing();
  const bool reuse = tuple->values_reused && cached;
  restore(std::move(*tuple), reuse ? &cached->values : nullptr, adopted, reuse);
  return true;
}

void LoopCheckpointer::load(CheckpointTuple tuple, bool values_own) {
  channels_.create_missing();
  restore(std::move(tuple), nullptr, false, values_own);
}

void LoopCheckpointer::restore(CheckpointTuple tuple, const LoopChannels::ValueMap* values,
                               bool channels_adopted, bool values_own) {
  Checkpoint& checkpoint = tuple.checkpoint;
  if (!channels_adopted) {
    auto restore_values = [&](auto& restored) {
      for (auto& [name, value] : restored) {
        const int index = channels_.for_saved_name(name);
        if (index < 0 || !value) continue;
        Channel& channel = *channels_.slot(index).channel;
        if (values_own) {
          channel.restore_own(value);
        } else {
          channel.restore(value);
        }
      }
    };
    if (values) {
      restore_values(*values);
    } else {
      restore_values(checkpoint.channel_values);
    }
  }
  for (auto it = checkpoint.channel_versions.begin(); it != checkpoint.channel_versions.end();) {
    const int index = channels_.for_saved_name(it->first);
    channels_.raise_max_version(it->second);
    if (index < 0) {
      it = checkpoint.channel_versions.erase(it);
      continue;
    }
    channels_.slot(index).version = it->second;
    ++it;
  }
  for (auto seen = checkpoint.versions_seen.begin(); seen != checkpoint.versions_seen.end();) {
    ChannelVersions& versions = seen->second;
    if (seen->first == kInterruptSeenKey) {
      channels_.interrupt_seen() = versions;
      ++seen;
      continue;
    }
    const int node = graph_.find_node(seen->first);
    if (node < 0) {
      seen = checkpoint.versions_seen.erase(seen);
      continue;
    }
    const auto& triggers = graph_.nodes[static_cast<std::size_t>(node)].triggers;
    std::vector<ChannelVersion>& node_seen = channels_.seen(node);
    for (auto it = versions.begin(); it != versions.end();) {
      const int channel = channels_.find(it->first);
      bool trigger = false;
      for (std::size_t j = 0; j < triggers.size(); ++j) {
        if (channel < 0 || triggers[j] != channel) continue;
        node_seen[j] = it->second;
        trigger = true;
      }
      it = trigger ? std::next(it) : versions.erase(it);
    }
    ++seen;
  }
  // The version maps, cut to what make_checkpoint() writes, seed the header it keeps: the
  // next save then updates their entries instead of allocating them again.
  header_.channel_versions = std::move(checkpoint.channel_versions);
  header_.versions_seen = std::move(checkpoint.versions_seen);
  checkpoint_id_ = checkpoint.id;
  created_at_ = std::move(checkpoint.ts);
  metadata_ = std::move(tuple.metadata);
  own_metadata_ = false;
  step_ = metadata_.is_object() ? metadata_.value("step", std::int64_t{-1}) : -1;
  parent_config_ = std::move(tuple.parent_config);
  updated_channels_ = std::move(checkpoint.updated_channels);
  last_saved_id_ = std::move(checkpoint.id);
  saved_ = true;
  has_checkpoint_ = true;
  for (std::size_t i = 0; i < channels_.size(); ++i) channels_[i].changed_since_save = false;

  saved_tasks_.clear();
  for (auto& write : tuple.pending_writes) {
    SavedTask& saved = saved_tasks_[std::move(write.task_id)];
    if (write.channel == kInterruptChannel) {
      saved.interrupts = std::move(write.value);
    } else if (write.channel == kResumeChannel) {
      saved.resume = std::move(write.value);
    } else if (write.channel == kErrorChannel) {
      saved.error = std::move(write.value);
    } else if (write.channel == kIntentChannel) {
      saved.intents = std::move(write.value);
    } else if (write.channel == kScheduledChannel) {
      continue;
    } else if (write.channel == kNoWritesChannel) {
      saved.finished = true;
    } else {
      saved.writes.emplace_back(std::move(write.channel), std::move(write.value));
      saved.finished = true;
    }
  }
}

void LoopCheckpointer::discard_saved_tasks() {
  for (const auto& [task_id, saved] : saved_tasks_) {
    if (saved.finished || !saved.intents || !saved.intents->is_object()) continue;
    for (const auto& [key, intent] : saved.intents->items()) discarded_intents_[key] = intent;
  }
  saved_tasks_.clear();
}

// ------------------------------------------------------------------------- checkpoints

const Checkpoint& LoopCheckpointer::make_checkpoint() {
  Checkpoint& checkpoint = header_;
  checkpoint.id = checkpoint_id_;
  checkpoint.ts = created_at_;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    const std::string& name = channels_.name(static_cast<int>(i));
    // Not only available channels: a join barrier that has seen some of its sources holds
    // state without being available.
    if (JsonPtr value = channels_[i].channel->checkpoint()) {
      put_entry(checkpoint.channel_values, name, std::move(value));
    } else {
      erase_entry(checkpoint.channel_values, name);
    }
    if (channels_[i].version > 0) {
      put_entry(checkpoint.channel_versions, name, channels_[i].version);
    } else {
      erase_entry(checkpoint.channel_versions, name);
    }
  }
  for (std::size_t n = 0; n < graph_.nodes.size(); ++n) {
    const auto& triggers = graph_.nodes[n].triggers;
    const std::string& node = graph_.nodes[n].name;
    const std::vector<ChannelVersion>& node_seen = channels_.seen(static_cast<int>(n));
    auto seen = checkpoint.versions_seen.find(node);
    for (std::size_t j = 0; j < triggers.size(); ++j) {
      const std::string& channel = channels_.name(triggers[j]);
      if (node_seen[j] > 0) {
        if (seen == checkpoint.versions_seen.end()) {
          seen = checkpoint.versions_seen.emplace(node, ChannelVersions{}).first;
        }
        put_entry(seen->second, channel, node_seen[j]);
      } else if (seen != checkpoint.versions_seen.end()) {
        erase_entry(seen->second, channel);
      }
    }
    if (seen != checkpoint.versions_seen.end() && seen->second.empty()) {
      checkpoint.versions_seen.erase(seen);
    }
  }
  if (!channels_.interrupt_seen().empty()) {
    put_entry(checkpoint.versions_seen, std::string(kInterruptSeenKey), channels_.interrupt_seen());
  } else {
    erase_entry(checkpoint.versions_seen, std::string(kInterruptSeenKey));
  }
  checkpoint.updated_channels = updated_channels_;
  return checkpoint;
}

Json LoopCheckpointer::make_metadata(const char* source) const {
  Json metadata = Json::object();
  if (config_.metadata.is_object()) {
    for (const auto& [key, value] : config_.metadata.items()) metadata[key] = value;
  }
  metadata["source"] = source;
  metadata["step"] = step_;
  metadata["parents"] = context_.parents;
  if (!config_.run_id.empty()) metadata["run_id"] = config_.run_id;
  return metadata;
}

void LoopCheckpointer::save_step(const char* source) {
  step_ += 1;
  has_checkpoint_ = true;
  held_null_writes_.clear();
  if (!saver_) return;
  checkpoint_id_ = new_checkpoint_id(step_, context_.clock_or_system());
  created_at_ = utc_timestamp(context_.clock_or_system());
  if (own_metadata_) {
    // Only the source and the step differ from this loop's previous save: both are set in
    // place (the source text is short, so its string keeps its storage).
    metadata_["source"].get_ref<std::string&>() = source;
    metadata_["step"] = step_;
  } else {
    metadata_ = make_metadata(source);
    own_metadata_ = true;
  }
  saved_ = false;
  if (config_.durability != Durability::kExit) put_current_checkpoint();
}

void LoopCheckpointer::put_current_checkpoint() {
  const Checkpoint& checkpoint = make_checkpoint();
  ChannelVersions new_versions;
  ChannelDeltas deltas;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    if (!channels_[i].changed_since_save) continue;
    const std::string& name = channels_.name(static_cast<int>(i));
    new_versions[name] = channels_[i].version;
    if (auto delta = channels_[i].channel->delta_since_saved())
      deltas.emplace(name, std::move(*delta));
  }
  CheckpointConfig parent{config_.thread_id, context_.checkpoint_ns, last_saved_id_};
  if (config_.durability == Durability::kAsync) {
    if (!async_saves_) async_saves_ = std::make_unique<AsyncSaves>(graph_.pool);
    async_saves_->submit([saver = saver_, parent, checkpoint = checkpoint, metadata = metadata_,
                          new_versions = std::move(new_versions), deltas = std::move(deltas)] {
      saver->put(parent, checkpoint, metadata, new_versions, deltas);
    });
  } else if (held_task_writes_) {
    HeldTaskWrites held = std::move(*held_task_writes_);
    held_task_writes_.reset();
    hold_task_writes_ = false;
    saver_->put_after_writes(held.config, held.writes, held.task_id, "", parent, checkpoint,
                             metadata_, new_versions, deltas);
  } else {
    hold_task_writes_ = false;
    saver_->put(parent, checkpoint, metadata_, new_versions, deltas);
  }
  if (last_saved_id_.empty()) {
    parent_config_.reset();
  } else {
    parent_config_ = std::move(parent);
  }
  // Let go of the values (keeping the map's entries): a list channel edits its list in place
  // only while nobody else holds it.
  for (auto& entry : header_.channel_values) entry.second.reset();
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    if (!channels_[i].changed_since_save) continue;
    channels_[i].channel->mark_saved();
    channels_[i].changed_since_save = false;
  }
  last_saved_id_ = checkpoint_id_;
  saved_ = true;
  emit_checkpoint();
}

void LoopCheckpointer::emit_checkpoint() {
  StreamEmitter& emitter = *context_.emitter;
  const auto& ns = context_.ns_segments;
  if (!emitter.wants(StreamMode::kCheckpoints, ns) && !emitter.wants(StreamMode::kDebug, ns)) {
    return;
  }
  Json config;
  to_json(config, CheckpointConfig{config_.thread_id, context_.checkpoint_ns, checkpoint_id_});
  Json parent;
  if (parent_config_) to_json(parent, *parent_config_);
  Json payload = json_object("config", std::move(config), "metadata", metadata_, "parent_config",
                             std::move(parent));
  // The state (large on a long thread) only for the streams that show it.
  const bool debug = emitter.wants(StreamMode::kDebug, ns);
  const bool with_values =
      emitter.wants(StreamMode::kCheckpoints, ns) && emitter.checkpoint_values();
  if (debug) {
    Json shown = payload;
    shown["values"] = channels_.view(true).to_json();
    if (with_values) payload["values"] = shown["values"];
    emitter.emit(StreamMode::kDebug, ns,
                 json_object("type", "checkpoint", "step", step_, "timestamp", created_at_,
                             "payload", std::move(shown)));
  } else if (with_values) {
    payload["values"] = channels_.view(true).to_json();
  }
  emitter.emit(StreamMode::kCheckpoints, ns, std::move(payload));
}

void LoopCheckpointer::record_updated_channels(const std::vector<int>& updated) {
  if (!saver_) return;
  updated_channels_.clear();
  for (int index : updated) updated_channels_.push_back(channels_.name(index));
}

// ---------------------------------------------------------------------------- task writes

void LoopCheckpointer::hold_null_write(std::string channel, Json value) {
  held_null_writes_.emplace_back(std::move(channel), std::move(value));
}

bool LoopCheckpointer::saves_task_writes_at_once() const {
  return saver_ && !skip_task_writes_ && config_.durability != Durability::kExit;
}

SavedWrites LoopCheckpointer::saved_form(const Task& task) const {
  SavedWrites writes;
  writes.reserve(task.writes.size());
  for (const auto& write : task.writes) {
    writes.emplace_back(channels_.name(write), write.value);
  }
  return writes;
}

void LoopCheckpointer::put_task_writes(Task& task, bool force, SavedWrites saved_before,
                                       std::size_t first_write) {
  if (!saver_ || skip_task_writes_) return;
  if (config_.durability == Durability::kExit && !force) return;
  const bool done = task.state() == TaskState::kDone;
  assert((done || task.state() == TaskState::kPaused) && "only a done or paused task saves");
  const bool hold = done && hold_task_writes_ && !force;
  // A save made in this thread has encoded the values when put_writes returns, so they are
  // lent to it (moved out of the task and back) instead of deep-copied; a save in the
  // background, or held for the next put, gets copies.
  const bool lend = config_.durability != Durability::kAsync && !hold;
  auto take = [lend](Json& value) { return lend ? Json(std::move(value)) : Json(value); };
  SavedWrites writes = std::move(saved_before);
  const std::size_t lent_at = writes.size();
  if (done) {
    writes.reserve(lent_at + task.writes.size() - first_write);
    for (std::size_t i = first_write; i < task.writes.size(); ++i) {
      Write& write = task.writes[i];
      writes.emplace_back(channels_.name(write), take(write.value));
    }
  } else {
    Json interrupts = Json::array();
    for (auto& interrupt : task.interrupts) {
      interrupts.push_back(json_object("id", interrupt.id, "value", take(interrupt.value)));
    }
    writes.emplace_back(std::string(kInterruptChannel), std::move(interrupts));
    // A task that paused inside an effect dropped that intent (forget_intent): saved again.
    if (task.intents_stored || task.saved_intents != nullptr) {
      writes.emplace_back(std::string(kIntentChannel), task.intents);
    }
    if (!task.resume_values.empty()) {
      writes.emplace_back(std::string(kResumeChannel), Json(task.resume_values));
    }
  }
  auto give_back = [&] {
    if (!lend) return;
    if (done) {
      for (std::size_t i = first_write; i < task.writes.size(); ++i) {
        task.writes[i].value = std::move(writes[lent_at + i - first_write].second);
      }
    } else {
      Json& saved = writes[0].second;
      for (std::size_t i = 0; i < task.interrupts.size(); ++i) {
        task.interrupts[i].value = std::move(saved[i]["value"]);
      }
    }
  };
  if (hold) {
    if (writes.empty()) writes.emplace_back(std::string(kNoWritesChannel), Json());
    held_task_writes_ = HeldTaskWrites{
        CheckpointConfig{config_.thread_id, context_.checkpoint_ns, checkpoint_id_}, task.id,
        std::move(writes)};
    return;
  }
  try {
    put_writes(task.id, std::move(writes), force);
  } catch (...) {
    give_back();
    throw;
  }
  give_back();
}

void LoopCheckpointer::put_writes(const std::string& task_id, SavedWrites&& writes, bool force) {
  if (!saver_ || skip_task_writes_) return;
  if (config_.durability == Durability::kExit && !force) return;
  if (writes.empty()) writes.emplace_back(std::string(kNoWritesChannel), Json());
  CheckpointConfig config{config_.thread_id, context_.checkpoint_ns, checkpoint_id_};
  if (config_.durability == Durability::kAsync) {
    // The queue exists once a checkpoint was put in the background; tasks of a parallel
    // step only use it, never create it.
    if (async_saves_) {
      async_saves_->submit([saver = saver_, config, writes = std::move(writes), task_id] {
        saver->put_writes(config, writes, task_id);
      });
      return;
    }
  }
  saver_->put_writes(config, writes, task_id);
}

void LoopCheckpointer::hold_task_writes_for_next_put() {
  hold_task_writes_ = saver_ && !skip_task_writes_ && config_.durability == Durability::kSync;
}

void LoopCheckpointer::flush_held_task_writes() {
  hold_task_writes_ = false;
  if (!held_task_writes_) return;
  HeldTaskWrites held = std::move(*held_task_writes_);
  held_task_writes_.reset();
  saver_->put_writes(held.config, held.writes, held.task_id);
}

void LoopCheckpointer::put_intents(const Task& task) {
  if (!saver_ || skip_task_writes_) return;
  std::lock_guard lock(intents_mutex_);
  if (!saved_) put_current_checkpoint();  // exit durability: the step's checkpoint is not stored
  CheckpointConfig config{config_.thread_id, context_.checkpoint_ns, checkpoint_id_};
  SavedWrites writes{{std::string(kIntentChannel), task.intents}};
  if (async_saves_) {
    // Behind the background saves of this run (the step's checkpoint among them), and waited for.
    async_saves_->submit([saver = saver_, config, writes = std::move(writes), id = task.id] {
      saver->put_writes(config, writes, id);
    });
    async_saves_->wait();
    return;
  }
  saver_->put_writes(config, writes, task.id);
}

void LoopCheckpointer::wait_for_saves() {
  if (async_saves_) async_saves_->wait();
}

void LoopCheckpointer::save_at_end(std::vector<Task>& tasks, bool paused) {
  flush_held_task_writes();
  if (!saver_ || !has_checkpoint_) return;
  if (config_.durability == Durability::kExit) {
    if (!saved_) put_current_checkpoint();
    if (paused) {
      for (auto& task : tasks) {
        const TaskState state = task.state();
        if (state == TaskState::kDone || state == TaskState::kPaused) put_task_writes(task, true);
      }
    }
  }
  if (paused && !held_null_writes_.empty()) {
    put_writes(std::string(kNullTaskId), std::move(held_null_writes_), true);
    held_null_writes_.clear();
  }
  wait_for_saves();
}

void LoopCheckpointer::stash_values(bool move_channels) {
  if (!saver_ || !saved_) return;
  CachedValues cached;
  cached.checkpoint_id = checkpoint_id_;
  if (move_channels) {
    // The loop ends here: its channels move to the cache as they are.
    cached.channels.reserve(channels_.size());
    for (std::size_t i = 0; i < channels_.size(); ++i) {
      cached.channels.emplace_back(channels_.name(static_cast<int>(i)),
                                   std::move(channels_[i].channel));
    }
  } else {
    for (std::size_t i = 0; i < channels_.size(); ++i) {
      if (JsonPtr value = channels_[i].channel->checkpoint()) {
        cached.values.emplace(channels_.name(static_cast<int>(i)), std::move(value));
      }
    }
  }
  graph_.values_cache.put(saver_, config_.thread_id, context_.checkpoint_ns, std::move(cached));
}

}  // namespace tollgate::graph_internal

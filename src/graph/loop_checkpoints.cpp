// The loop's side of persistence: loading and restoring a checkpoint, saving checkpoints and
// task writes (sync, async or at exit), the values cache, and reading/updating the state at
// a checkpoint (get_state, update_state).
#include <algorithm>

#include "graph/async_saves.h"
#include "graph/ids.h"
#include "graph/map_entries.h"
#include "graph/pregel_loop.h"
#include "tollgate/error.h"

namespace tollgate::graph_internal {

bool PregelLoop::load(const std::string& checkpoint_id, bool use_cache) {
  std::optional<CachedValues> cached;
  GetOptions options;
  if (use_cache) {
    cached = graph_.values_cache.take(saver_, thread_id_, context_.checkpoint_ns);
    if (cached) options.reuse_values_of = cached->checkpoint_id;
  }
  auto tuple = saver_->get_tuple(
      CheckpointConfig{thread_id_, context_.checkpoint_ns, checkpoint_id}, options);
  if (!tuple) {
    create_missing_channels();
    if (!checkpoint_id.empty()) {
      throw Error::NotFound("Checkpoint '" + checkpoint_id + "' not found on thread '" +
                            thread_id_ + "'");
    }
    return false;
  }
  bool adopted = false;
  if (tuple->values_reused && cached && !cached->channels.empty()) {
    for (auto& [name, channel] : cached->channels) {
      int index = find_channel(name);
      if (index < 0 && !is_reserved_channel(name)) index = channel_for_key(name);
      if (index >= 0) slots_[static_cast<std::size_t>(index)].channel = std::move(channel);
    }
    adopted = true;
  }
  create_missing_channels();
  const bool reuse = tuple->values_reused && cached;
  restore(std::move(*tuple), reuse ? &cached->values : nullptr, adopted);
  return true;
}

void PregelLoop::restore(CheckpointTuple tuple,
                         const std::map<std::string, JsonPtr, std::less<>>* values,
                         bool channels_adopted) {
  Checkpoint& checkpoint = tuple.checkpoint;
  auto slot_for = [&](const std::string& name) {
    const int index = find_channel(name);
    if (index >= 0) return index;
    return is_reserved_channel(name) ? -1 : channel_for_key(name);
  };
  if (!channels_adopted) {
    auto restore_values = [&](auto& restored) {
      for (auto& [name, value] : restored) {
        const int index = slot_for(name);
        if (index >= 0 && value) slots_[static_cast<std::size_t>(index)].channel->restore(value);
      }
    };
    if (values) {
      restore_values(*values);
    } else {
      restore_values(checkpoint.channel_values);
    }
  }
  for (auto it = checkpoint.channel_versions.begin(); it != checkpoint.channel_versions.end();) {
    const int index = slot_for(it->first);
    max_version_ = std::max(max_version_, it->second);
    if (index < 0) {
      it = checkpoint.channel_versions.erase(it);
      continue;
    }
    slots_[static_cast<std::size_t>(index)].version = it->second;
    ++it;
  }
  for (auto seen = checkpoint.versions_seen.begin(); seen != checkpoint.versions_seen.end();) {
    ChannelVersions& versions = seen->second;
    if (seen->first == kInterruptSeenKey) {
      interrupt_seen_ = versions;
      ++seen;
      continue;
    }
    const int node = graph_.find_node(seen->first);
    if (node < 0) {
      seen = checkpoint.versions_seen.erase(seen);
      continue;
    }
    const auto& triggers = graph_.nodes[static_cast<std::size_t>(node)].triggers;
    for (auto it = versions.begin(); it != versions.end();) {
      const int channel = find_channel(it->first);
      bool trigger = false;
      for (std::size_t j = 0; j < triggers.size(); ++j) {
        if (channel < 0 || triggers[j] != channel) continue;
        seen_[static_cast<std::size_t>(node)][j] = it->second;
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
  std::fill(changed_since_save_.begin(), changed_since_save_.end(), 0);

  saved_tasks_.clear();
  for (auto& write : tuple.pending_writes) {
    SavedTask& saved = saved_tasks_[std::move(write.task_id)];
    if (write.channel == kInterruptChannel) {
      saved.interrupts = std::move(write.value);
    } else if (write.channel == kResumeChannel) {
      saved.resume = std::move(write.value);
    } else if (write.channel == kErrorChannel) {
      saved.error = std::move(write.value);
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

void PregelLoop::new_thread() {
  step_ = -2;
  for (std::size_t i = 0; i < base_channels(); ++i) {
    if (graph_.channels[i].initial) slots_[i].channel->restore(graph_.channels[i].initial);
  }
}

const Checkpoint& PregelLoop::make_checkpoint() {
  Checkpoint& checkpoint = header_;
  checkpoint.id = checkpoint_id_;
  checkpoint.ts = created_at_;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const std::string& name = channel_name(static_cast<int>(i));
    // Not only available channels: a join barrier that has seen some of its sources holds
    // state without being available.
    if (JsonPtr value = slots_[i].channel->checkpoint()) {
      put_entry(checkpoint.channel_values, name, std::move(value));
    } else {
      erase_entry(checkpoint.channel_values, name);
    }
    if (slots_[i].version > 0) {
      put_entry(checkpoint.channel_versions, name, slots_[i].version);
    } else {
      erase_entry(checkpoint.channel_versions, name);
    }
  }
  for (std::size_t n = 0; n < graph_.nodes.size(); ++n) {
    const auto& triggers = graph_.nodes[n].triggers;
    const std::string& node = graph_.nodes[n].name;
    auto seen = checkpoint.versions_seen.find(node);
    for (std::size_t j = 0; j < triggers.size(); ++j) {
      const std::string& channel = channel_name(triggers[j]);
      if (seen_[n][j] > 0) {
        if (seen == checkpoint.versions_seen.end()) {
          seen = checkpoint.versions_seen.emplace(node, ChannelVersions{}).first;
        }
        put_entry(seen->second, channel, seen_[n][j]);
      } else if (seen != checkpoint.versions_seen.end()) {
        erase_entry(seen->second, channel);
      }
    }
    if (seen != checkpoint.versions_seen.end() && seen->second.empty()) {
      checkpoint.versions_seen.erase(seen);
    }
  }
  if (!interrupt_seen_.empty()) {
    put_entry(checkpoint.versions_seen, std::string(kInterruptSeenKey), interrupt_seen_);
  } else {
    erase_entry(checkpoint.versions_seen, std::string(kInterruptSeenKey));
  }
  checkpoint.updated_channels = updated_channels_;
  return checkpoint;
}

Json PregelLoop::make_metadata(const char* source) const {
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

void PregelLoop::save_checkpoint(const char* source) {
  has_checkpoint_ = true;
  if (!saver_) return;
  checkpoint_id_ = new_checkpoint_id(step_);
  created_at_ = utc_timestamp();
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

void PregelLoop::put_current_checkpoint() {
  const Checkpoint& checkpoint = make_checkpoint();
  ChannelVersions new_versions;
  ChannelDeltas deltas;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (!changed_since_save_[i]) continue;
    const std::string& name = channel_name(static_cast<int>(i));
    new_versions[name] = slots_[i].version;
    if (auto delta = slots_[i].channel->delta_since_saved())
      deltas.emplace(name, std::move(*delta));
  }
  CheckpointConfig parent{thread_id_, context_.checkpoint_ns, last_saved_id_};
  if (config_.durability == Durability::kAsync) {
    if (!async_saves_) async_saves_ = std::make_unique<AsyncSaves>(graph_.pool);
    async_saves_->submit([saver = saver_, parent, checkpoint = checkpoint, metadata = metadata_,
                          new_versions = std::move(new_versions), deltas = std::move(deltas)] {
      saver->put(parent, checkpoint, metadata, new_versions, deltas);
    });
  } else {
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
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (!changed_since_save_[i]) continue;
    slots_[i].channel->mark_saved();
    changed_since_save_[i] = 0;
  }
  last_saved_id_ = checkpoint_id_;
  saved_ = true;
  if (context_.emitter->wants(StreamMode::kCheckpoints, context_.ns_segments) ||
      context_.emitter->wants(StreamMode::kDebug, context_.ns_segments)) {
    Json payload = checkpoint_payload();
    context_.emitter->emit(StreamMode::kDebug, context_.ns_segments,
                           Json{{"type", "checkpoint"},
                                {"step", step_},
                                {"timestamp", created_at_},
                                {"payload", payload}});
    context_.emitter->emit(StreamMode::kCheckpoints, context_.ns_segments, std::move(payload));
  }
}

Json PregelLoop::checkpoint_payload() const {
  Json config;
  to_json(config, CheckpointConfig{thread_id_, context_.checkpoint_ns, checkpoint_id_});
  Json parent;
  if (parent_config_) to_json(parent, *parent_config_);
  return Json{{"config", config},
              {"metadata", metadata_},
              {"values", values_json()},
              {"parent_config", parent}};
}

std::vector<std::pair<std::string, Json>> PregelLoop::saved_form(const Task& task) const {
  std::vector<std::pair<std::string, Json>> writes;
  writes.reserve(task.writes.size());
  for (const auto& write : task.writes) {
    writes.emplace_back(channel_name(write), write.value);
  }
  return writes;
}

void PregelLoop::put_task_writes(Task& task, bool force,
                                 std::vector<std::pair<std::string, Json>> saved_before,
                                 std::size_t first_write) {
  if (!saver_ || updating_state_) return;
  if (config_.durability == Durability::kExit && !force) return;
  if (!task.done && !task.paused) return;
  // A save made in this thread has encoded the values when put_writes returns, so they are
  // lent to it (moved out of the task and back) instead of deep-copied; a save in the
  // background gets copies.
  const bool lend = config_.durability != Durability::kAsync;
  auto take = [lend](Json& value) { return lend ? Json(std::move(value)) : Json(value); };
  std::vector<std::pair<std::string, Json>> writes = std::move(saved_before);
  const std::size_t lent_at = writes.size();
  if (task.done) {
    writes.reserve(lent_at + task.writes.size() - first_write);
    for (std::size_t i = first_write; i < task.writes.size(); ++i) {
      Write& write = task.writes[i];
      writes.emplace_back(channel_name(write), take(write.value));
    }
  } else {
    Json interrupts = Json::array();
    for (auto& interrupt : task.interrupts) {
      interrupts.push_back(json_object("id", interrupt.id, "value", take(interrupt.value)));
    }
    writes.emplace_back(std::string(kInterruptChannel), std::move(interrupts));
    if (!task.resume_values.empty()) {
      writes.emplace_back(std::string(kResumeChannel), Json(task.resume_values));
    }
  }
  auto give_back = [&] {
    if (!lend) return;
    if (task.done) {
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
  try {
    put_writes_payload(task.id, std::move(writes), force);
  } catch (...) {
    give_back();
    throw;
  }
  give_back();
}

void PregelLoop::put_writes_payload(const std::string& task_id,
                                    std::vector<std::pair<std::string, Json>>&& writes,
                                    bool force) {
  if (!saver_ || updating_state_) return;
  if (config_.durability == Durability::kExit && !force) return;
  if (writes.empty()) writes.emplace_back(std::string(kNoWritesChannel), Json());
  CheckpointConfig config{thread_id_, context_.checkpoint_ns, checkpoint_id_};
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

void PregelLoop::wait_for_saves() {
  if (async_saves_) async_saves_->wait();
}

void PregelLoop::stash_values(bool move_channels) {
  if (!saver_ || !saved_) return;
  CachedValues cached;
  cached.checkpoint_id = checkpoint_id_;
  if (move_channels) {
    // The loop ends here: its channels move to the cache as they are.
    cached.channels.reserve(slots_.size());
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      cached.channels.emplace_back(channel_name(static_cast<int>(i)), std::move(slots_[i].channel));
    }
    graph_.values_cache.put(saver_, thread_id_, context_.checkpoint_ns, std::move(cached));
    return;
  }
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (JsonPtr value = slots_[i].channel->checkpoint()) {
      cached.values.emplace(channel_name(static_cast<int>(i)), std::move(value));
    }
  }
  graph_.values_cache.put(saver_, thread_id_, context_.checkpoint_ns, std::move(cached));
}

// ------------------------------------------------------------------------------ snapshots

StateSnapshot PregelLoop::snapshot(const CheckpointTuple& tuple, bool apply_pending_writes,
                                   bool subgraphs) {
  create_missing_channels();
  restore(tuple, nullptr);
  prepare_tasks();
  StateSnapshot snapshot;
  for (auto& task : tasks_) {
    const CompiledNode& node = graph_.nodes[static_cast<std::size_t>(task.node)];
    TaskInfo info;
    info.id = task.id;
    info.name = node.name;
    info.path = task.push ? Json::array({kPushPath, task.push_index, false})
                          : Json::array({kPullPath, node.name});
    if (auto it = saved_tasks_.find(task.id); it != saved_tasks_.end()) {
      const SavedTask& saved = it->second;
      if (saved.interrupts && saved.interrupts->is_array()) {
        for (const auto& interrupt : *saved.interrupts) {
          info.interrupts.push_back(
              Interrupt{interrupt.value("id", ""), interrupt.value("value", Json())});
        }
      }
      if (saved.error)
        info.error =
            saved.error->is_string() ? saved.error->get<std::string>() : saved.error->dump();
      if (saved.finished) {
        info.result = Json::object();
        for (const auto& [channel, value] : saved.writes) {
          const int index = find_channel(channel);
          if (index < 0 || is_state_channel(index)) info.result[channel] = value;
          if (index >= 0) {
            task.writes.push_back(Write{index, value, {}});
          } else if (!is_reserved_channel(channel)) {
            task.writes.push_back(Write{-1, value, channel});
          }
        }
        task.done = true;
      }
    }
    if (node.subgraph) {
      info.state = CheckpointConfig{thread_id_, task.ns, ""};
      if (subgraphs) {
        RunConfig child;
        child.thread_id = thread_id_;
        child.checkpoint_ns = task.ns;
        auto saver = node.subgraph->impl().checkpointer ? node.subgraph->impl().checkpointer
                                                        : context_.saver;
        info.subgraph_state =
            std::make_shared<StateSnapshot>(read_state(node.subgraph->impl(), saver, child, true));
      }
    }
    if (!(apply_pending_writes && task.done)) snapshot.next.push_back(node.name);
    for (const auto& interrupt : info.interrupts) snapshot.interrupts.push_back(interrupt);
    snapshot.tasks.push_back(std::move(info));
  }
  if (apply_pending_writes) apply_for_output(tasks_);
  snapshot.values = output_view();
  snapshot.config = tuple.config;
  snapshot.metadata = tuple.metadata;
  snapshot.created_at = tuple.checkpoint.ts;
  snapshot.parent_config = tuple.parent_config;
  tasks_.clear();
  return snapshot;
}

StateSnapshot read_state(const CompiledGraph::Impl& graph, const std::shared_ptr<Saver>& saver,
                         const RunConfig& config, bool subgraphs) {
  StateSnapshot empty;
  empty.config = CheckpointConfig{config.thread_id, config.checkpoint_ns, ""};
  if (!saver || config.thread_id.empty()) return empty;
  auto tuple = saver->get_tuple(
      CheckpointConfig{config.thread_id, config.checkpoint_ns, config.checkpoint_id});
  if (!tuple) return empty;
  RunConfig quiet;
  quiet.thread_id = config.thread_id;
  StreamEmitter emitter(quiet);
  LoopContext context;
  context.config = &quiet;
  context.emitter = &emitter;
  context.saver = saver;
  context.checkpoint_ns = config.checkpoint_ns;
  PregelLoop loop(graph, std::move(context));
  return loop.snapshot(*tuple, config.checkpoint_id.empty(), subgraphs);
}

// ------------------------------------------------------------------------------- updates

CheckpointConfig PregelLoop::update(const Json& values, const std::string& requested_node) {
  if (!saver_) throw Error::InvalidArgument("update_state requires a checkpointer");
  if (thread_id_.empty()) throw Error::InvalidArgument("update_state requires a thread_id");
  updating_state_ = true;
  if (!load(context_.checkpoint_id, false)) new_thread();
  if (context_.checkpoint_id.empty() && !saved_tasks_.empty()) {
    // Updating the latest checkpoint of a paused step: the tasks that finished in it keep
    // their writes (they are folded in first, as if the step had ended with them).
    prepare_tasks();
    attach_saved_writes();
    std::vector<Task> finished;
    for (auto& task : tasks_) {
      if (task.done) finished.push_back(std::move(task));
    }
    tasks_.clear();
    if (!finished.empty()) apply_writes(finished, true);
  }
  auto result = [&] {
    return CheckpointConfig{thread_id_, context_.checkpoint_ns, checkpoint_id_};
  };

  if (requested_node == "__copy__") {
    step_ += 1;
    save_checkpoint("fork");
    return result();
  }
  if (requested_node == "__input__") {
    if (!values.is_object()) {
      throw Error::InvalidArgument("update_state as '__input__' needs an object of values");
    }
    Task start;
    start.synthetic = true;
    start.node = 0;
    start.writes.push_back(Write{graph_.start_channel, values, {}});
    std::vector<Task> tasks;
    tasks.push_back(std::move(start));
    apply_writes(tasks, false);
    step_ += 1;
    save_checkpoint("input");
    return result();
  }
  if (requested_node == END && values.is_null()) {
    prepare_tasks();
    std::vector<Task> tasks = std::move(tasks_);
    tasks_.clear();
    apply_writes(tasks, true);
    step_ += 1;
    save_checkpoint("update");
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
        for (ChannelVersion version : seen_[n]) latest = std::max(latest, version);
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

  step_state_ = state_view();
  Task task;
  task.node = node;
  task.synthetic = true;
  task.id = task_id(
      {checkpoint_id_, context_.checkpoint_ns, std::to_string(step_ + 1), as_node, "__update__"});
  task.has_id = true;
  task.route_at_apply = true;
  add_update(task, values);
  const CompiledNode& compiled = graph_.nodes[static_cast<std::size_t>(node)];
  task.writes.insert(task.writes.end(), compiled.edge_writes.begin(), compiled.edge_writes.end());
  task.done = true;
  std::vector<Task> tasks;
  tasks.push_back(std::move(task));
  apply_writes(tasks, true);
  step_ += 1;
  save_checkpoint("update");
  return result();
}

}  // namespace tollgate::graph_internal

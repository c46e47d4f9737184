// The channel table of one loop (see loop_channels.h).
#include "graph/loop_channels.h"

#include "graph/map_entries.h"

namespace tollgate::graph_internal {

LoopChannels::LoopChannels(const CompiledGraph::Impl& graph) : graph_(graph) {
  // The channels are made by create_missing() once LoopCheckpointer::load() has taken what
  // the values cache holds.
  slots_.resize(graph_.channels.size());
  seen_.resize(graph_.nodes.size());
  for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
    seen_[i].assign(graph_.nodes[i].triggers.size(), 0);
  }
}

void LoopChannels::create_missing() {
  for (std::size_t i = 0; i < base_size(); ++i) {
    if (!slots_[i].channel) slots_[i].channel = graph_.channels[i].prototype->clone_empty();
  }
}

void LoopChannels::set_initial_values() {
  for (std::size_t i = 0; i < base_size(); ++i) {
    if (graph_.channels[i].initial) slots_[i].channel->restore(graph_.channels[i].initial);
  }
}

bool LoopChannels::is_output(int index) const {
  const auto position = static_cast<std::size_t>(index);
  return position >= base_size() ||
         (graph_.channels[position].is_state && !graph_.channels[position].is_private);
}

bool LoopChannels::triggers_node(int index) const {
  const auto position = static_cast<std::size_t>(index);
  return position < base_size() && graph_.channels[position].triggers_node;
}

int LoopChannels::find(std::string_view name) const {
  if (auto it = graph_.channel_index.find(name); it != graph_.channel_index.end()) {
    return it->second;
  }
  if (auto it = dynamic_index_.find(name); it != dynamic_index_.end()) return it->second;
  return -1;
}

int LoopChannels::for_key(std::string_view key) {
  if (int index = find(key); index >= 0) return index;
  const int index = static_cast<int>(slots_.size());
  slots_.push_back(Slot{make_last_value_channel(std::string(key)), 0, false});
  dynamic_index_.emplace(std::string(key), index);
  dynamic_names_.emplace_back(key);
  return index;
}

int LoopChannels::for_saved_name(std::string_view name) {
  const int index = find(name);
  if (index >= 0) return index;
  return is_reserved_channel(name) ? -1 : for_key(name);
}

std::unique_ptr<Channel> LoopChannels::clone_empty(int index) const {
  const auto position = static_cast<std::size_t>(index);
  return position < base_size() ? graph_.channels[position].prototype->clone_empty()
                                : make_last_value_channel(name(index));
}

State LoopChannels::view(bool output_only) const {
  ValueMap values;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const int index = static_cast<int>(i);
    if (!(output_only ? is_output(index) : is_state(index))) continue;
    if (JsonPtr value = slots_[i].channel->get()) {
      values.emplace_hint(values.end(), name(index), std::move(value));
    }
  }
  return State(std::move(values));
}

State LoopChannels::state_view() {
  if (!state_values_ || state_values_.use_count() > 1) {
    state_values_ = std::make_shared<ValueMap>();
  }
  auto& values = *state_values_;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const int index = static_cast<int>(i);
    if (!is_state(index)) continue;
    if (JsonPtr value = slots_[i].channel->get()) {
      put_entry(values, name(index), std::move(value));
    } else {
      erase_entry(values, name(index));
    }
  }
  return State(std::shared_ptr<const ValueMap>(state_values_));
}

std::vector<std::pair<std::string, std::size_t>> LoopChannels::unchanged_since_shown() const {
  std::vector<std::pair<std::string, std::size_t>> out;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Channel* channel = slots_[i].channel.get();
    if (channel == nullptr || !is_output(static_cast<int>(i))) continue;
    if (const std::optional<std::size_t> unchanged = channel->unchanged_since_shown()) {
      out.emplace_back(name(static_cast<int>(i)), *unchanged);
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::size_t>> LoopChannels::take_unchanged_since_shown() {
  std::vector<std::pair<std::string, std::size_t>> out = unchanged_since_shown();
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Channel* channel = slots_[i].channel.get();
    if (channel != nullptr && is_output(static_cast<int>(i))) channel->mark_shown();
  }
  return out;
}

void LoopChannels::mark_lists_shown_as_loaded() {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Channel* channel = slots_[i].channel.get();
    if (channel != nullptr && is_output(static_cast<int>(i))) channel->mark_shown_as_saved();
  }
}

void LoopChannels::release_state_values() {
  if (state_values_ && state_values_.use_count() == 1) {
    for (auto& entry : *state_values_) entry.second.reset();
  }
}

void LoopChannels::bump(const std::vector<int>& channels, const Saver* saver) {
  if (channels.empty()) return;
  const ChannelVersion next = saver ? saver->next_version(max_version_) : max_version_ + 1;
  for (int index : channels) {
    Slot& bumped = slot(index);
    bumped.version = next;
    bumped.changed_since_save = true;
  }
  max_version_ = next;
}

void LoopChannels::mark_interrupt_seen() {
  interrupt_seen_.clear();
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].version > 0) interrupt_seen_[name(static_cast<int>(i))] = slots_[i].version;
  }
}

bool LoopChannels::changed_since_interrupt_seen() const {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].version == 0) continue;
    auto it = interrupt_seen_.find(name(static_cast<int>(i)));
    if (it == interrupt_seen_.end() || slots_[i].version > it->second) return true;
  }
  return false;
}

}  // namespace tollgate::graph_internal

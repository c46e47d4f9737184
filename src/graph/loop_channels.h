// The channel table of one loop: a slot per channel of the graph, plus one per state key a
// node wrote without the schema declaring it, each with its version; the versions each node
// has seen of its triggers, and those seen when the run last started or resumed (what
// static breakpoints compare with). PregelLoop runs steps on it; LoopCheckpointer saves
// and restores it.
//
// Thread-safety: none; the table belongs to one loop. While a step runs, its tasks only
// read it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph_definition.h"
#include "tollgate/checkpoint.h"
#include "tollgate/graph.h"

namespace tollgate::graph_internal {

struct Slot {
  std::unique_ptr<Channel> channel;  // null until LoopChannels::create_missing()
  ChannelVersion version = 0;        // 0: never written
  bool changed_since_save = false;   // its version moved since the last checkpoint was put
};

class LoopChannels {
 public:
  using ValueMap = std::map<std::string, JsonPtr, std::less<>>;

  explicit LoopChannels(const CompiledGraph::Impl& graph);

  std::size_t size() const { return slots_.size(); }
  Slot& operator[](std::size_t index) { return slots_[index]; }
  const Slot& operator[](std::size_t index) const { return slots_[index]; }
  Slot& slot(int index) { return slots_[static_cast<std::size_t>(index)]; }
  const Slot& slot(int index) const { return slots_[static_cast<std::size_t>(index)]; }

  // Makes the graph's channels that are still missing (a resumed run first adopts the
  // channels its previous run left in the values cache, see LoopCheckpointer::load).
  void create_missing();
  // A new thread: the declared defaults of last-value keys.
  void set_initial_values();

  const std::string& name(int index) const {
    const auto position = static_cast<std::size_t>(index);
    return position < base_size() ? graph_.channels[position].name
                                  : dynamic_names_[position - base_size()];
  }
  // The name `write` goes to: its channel's, or its new state key.
  const std::string& name(const Write& write) const {
    return write.channel < 0 ? write.key : name(write.channel);
  }
  // A state key (shown to nodes), not one of the runtime's channels.
  bool is_state(int index) const {
    const auto position = static_cast<std::size_t>(index);
    return position >= base_size() || graph_.channels[position].is_state;
  }
  // A state key shown in output (not private, see StateSchema::make_private).
  bool is_output(int index) const;
  // Some node is triggered by it.
  bool triggers_node(int index) const;
  // -1 when there is no such channel.
  int find(std::string_view name) const;
  // The channel of a state key; makes a last-value channel for a key not seen before.
  int for_key(std::string_view key);
  // The channel a saved name is restored to: for_key() for a state key, -1 for a runtime
  // channel this graph does not have.
  int for_saved_name(std::string_view name);
  // An empty channel of the same kind as channel `index`.
  std::unique_ptr<Channel> clone_empty(int index) const;

  // The state keys' values (`output_only`: the output keys' only), in a new map.
  State view(bool output_only) const;
  // Every state key: what nodes and routers see. Rewrites the previous view's map in place
  // when no one holds it any more, so a step's view allocates nothing once the keys are known.
  State state_view();
  // For each list-valued output key, how many leading items are unchanged since the last
  // call (none before the first, or after a restore); the lists count as shown from now on.
  std::vector<std::pair<std::string, std::size_t>> take_unchanged_since_shown();
  // The same counts, the lists left as they are.
  std::vector<std::pair<std::string, std::size_t>> unchanged_since_shown() const;
  // The output lists count as shown as the checkpoint just loaded holds them: the next
  // take_unchanged_since_shown() counts against that checkpoint's lists.
  void mark_lists_shown_as_loaded();
  // The kept map lets go of its values (a list channel appends in place only while it holds
  // its list alone); state_view() sets every entry again before the map is shown.
  void release_state_values();

  // Moves `channels` to the next version (the saver's numbering when there is one) and marks
  // them changed since the last save.
  void bump(const std::vector<int>& channels, const Saver* saver);
  // A restored version, of a channel of this table or not: later versions are above it.
  void raise_max_version(ChannelVersion version) {
    if (version > max_version_) max_version_ = version;
  }

  // The versions node `node` has seen of its triggers, aligned with CompiledNode::triggers.
  std::vector<ChannelVersion>& seen(int node) { return seen_[static_cast<std::size_t>(node)]; }
  const std::vector<ChannelVersion>& seen(int node) const {
    return seen_[static_cast<std::size_t>(node)];
  }
  // The versions when the run last started or resumed (checkpointed as "__interrupt__").
  ChannelVersions& interrupt_seen() { return interrupt_seen_; }
  const ChannelVersions& interrupt_seen() const { return interrupt_seen_; }
  // Remembers every channel's current version as seen at this start or resume.
  void mark_interrupt_seen();
  // Some channel moved since mark_interrupt_seen().
  bool changed_since_interrupt_seen() const;

 private:
  std::size_t base_size() const { return graph_.channels.size(); }

  const CompiledGraph::Impl& graph_;
  std::vector<Slot> slots_;
  std::map<std::string, int, std::less<>> dynamic_index_;  // undeclared state keys
  std::vector<std::string> dynamic_names_;
  std::vector<std::vector<ChannelVersion>> seen_;  // per node, aligned with its triggers
  ChannelVersions interrupt_seen_;
  ChannelVersion max_version_ = 0;
  // The map of the last state_view(), rewritten in place by the next one when the views
  // handed out were its only other holders.
  std::shared_ptr<ValueMap> state_values_;
};

}  // namespace tollgate::graph_internal

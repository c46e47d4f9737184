// StateGraph: records nodes and edges; compile() validates them and lays out the channels.
#include <algorithm>
#include <deque>
#include <set>

#include "graph/graph_definition.h"
#include "tollgate/error.h"

namespace tollgate {

using graph_internal::ChannelSpec;
using graph_internal::CompiledNode;
using graph_internal::Write;

StateGraph::StateGraph(StateSchema schema) : definition_(std::make_shared<Definition>()) {
  definition_->schema = std::move(schema);
}

StateGraph& StateGraph::add_node(std::string name, NodeFn fn, NodeOptions options) {
  definition_->nodes.push_back(Definition::Node{std::move(name), std::move(fn), nullptr,
                                                std::move(options)});
  return *this;
}

StateGraph& StateGraph::add_node(std::string name, std::shared_ptr<const CompiledGraph> subgraph,
                                 NodeOptions options) {
  if (!subgraph) throw Error::InvalidArgument("Subgraph node '" + name + "' is null");
  definition_->nodes.push_back(
      Definition::Node{std::move(name), nullptr, std::move(subgraph), std::move(options)});
  return *this;
}

StateGraph& StateGraph::add_edge(std::string_view from, std::string_view to) {
  definition_->edges.push_back(Definition::Edge{{std::string(from)}, std::string(to)});
  return *this;
}

StateGraph& StateGraph::add_edge(std::vector<std::string> from, std::string_view to) {
  definition_->edges.push_back(Definition::Edge{std::move(from), std::string(to)});
  return *this;
}

StateGraph& StateGraph::add_conditional_edges(std::string_view from, RouterFn router,
                                              std::map<std::string, std::string> path_map) {
  definition_->branches.push_back(
      Definition::Branch{std::string(from), std::move(router), std::move(path_map)});
  return *this;
}

namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error::InvalidArgument(message); }

std::string join_channel_name(const std::vector<std::string>& from, const std::string& to) {
  std::string name(graph_internal::kJoinPrefix);
  for (std::size_t i = 0; i < from.size(); ++i) {
    if (i > 0) name += '+';
    name += from[i];
  }
  return name + ":" + to;
}

void validate_node_name(const std::string& name) {
  if (name.empty()) invalid("Node name must not be empty");
  if (name == START || name == END) invalid("'" + name + "' is a reserved node name");
  if (name.starts_with("__")) {
    invalid("Node name '" + name + "' is reserved: names starting with '__' belong to the runtime");
  }
  if (name.find_first_of(":|") != std::string::npos) {
    invalid("Node name '" + name + "' must not contain ':' or '|'");
  }
}

std::unique_ptr<graph_internal::Channel> make_state_channel(const std::string& key,
                                                            const StateSchema::Channel& spec) {
  switch (spec.kind) {
    case ChannelKind::kLastValue: return graph_internal::make_last_value_channel(key);
    case ChannelKind::kAppend: return graph_internal::make_append_channel(key);
    case ChannelKind::kAddMessages: return graph_internal::make_add_messages_channel(key);
    case ChannelKind::kReducer:
      if (!spec.reducer) invalid("State key '" + key + "' has a reducer channel without a reducer");
      return graph_internal::make_reducer_channel(key, spec.reducer, spec.initial);
  }
  invalid("State key '" + key + "' has an unknown channel kind");
}

}  // namespace

std::shared_ptr<CompiledGraph> StateGraph::compile(CompileOptions options) const {
  const Definition& def = *definition_;
  auto impl = std::make_unique<CompiledGraph::Impl>();
  impl->name = options.name;
  impl->checkpointer = std::move(options.checkpointer);
  impl->clock = options.clock;

  // ----------------------------------------------------------------- nodes and their names
  std::map<std::string, const Definition::Node*, std::less<>> by_name;
  for (const auto& node : def.nodes) {
    validate_node_name(node.name);
    if (!by_name.emplace(node.name, &node).second) {
      invalid("Node '" + node.name + "' is already present");
    }
    if (!node.fn && !node.subgraph) invalid("Node '" + node.name + "' has no function");
  }
  auto is_node = [&](std::string_view name) { return by_name.count(name) > 0; };

  // ------------------------------------------------------------------------------- edges
  bool has_entry = false;
  std::map<std::string, std::set<std::string>, std::less<>> successors;  // for reachability
  std::set<std::string> open_ended;  // nodes with a router without path_map: reach anything
  for (const auto& edge : def.edges) {
    if (edge.from.empty()) invalid("Edge to '" + edge.to + "' has no source node");
    for (const auto& from : edge.from) {
      if (from == END) invalid("END cannot be the start of an edge (edge to '" + edge.to + "')");
      if (from != START && !is_node(from)) {
        invalid("Found edge starting at unknown node '" + from + "'");
      }
    }
    if (edge.to == START) invalid("START cannot be the end of an edge");
    if (edge.to != END && !is_node(edge.to)) {
      invalid("Found edge ending at unknown node '" + edge.to + "'");
    }
    if (edge.from.size() > 1 && edge.to == END) invalid("A join edge cannot end at END");
    for (const auto& from : edge.from) {
      successors[from].insert(edge.to);
      if (from == START) has_entry = true;
    }
  }
  for (const auto& branch : def.branches) {
    if (branch.from == END) invalid("END cannot be the start of a conditional edge");
    if (branch.from != START && !is_node(branch.from)) {
      invalid("Found conditional edge starting at unknown node '" + branch.from + "'");
    }
    if (!branch.router) invalid("Conditional edge from '" + branch.from + "' has no router");
    if (branch.from == START) has_entry = true;
    if (branch.path_map.empty()) open_ended.insert(branch.from);
    for (const auto& [key, target] : branch.path_map) {
      if (target == START) invalid("Conditional edge from '" + branch.from + "' maps to START");
      if (target != END && !is_node(target)) {
        invalid("Conditional edge from '" + branch.from + "' maps '" + key +
                "' to unknown node '" + target + "'");
      }
      successors[branch.from].insert(target);
    }
  }
  for (const auto& node : def.nodes) {
    for (const auto& target : node.options.destinations) {
      if (target != END && !is_node(target)) {
        invalid("Node '" + node.name + "' lists unknown destination '" + target + "'");
      }
      successors[node.name].insert(target);
    }
  }
  if (!has_entry) {
    invalid("Graph must have an entrypoint: add at least one edge from START to another node");
  }

  // Reachability from START (a router without a path_map may reach any node).
  std::set<std::string> reached;
  std::deque<std::string> frontier{std::string(START)};
  bool reach_all = false;
  while (!frontier.empty() && !reach_all) {
    std::string current = std::move(frontier.front());
    frontier.pop_front();
    if (open_ended.count(current)) reach_all = true;
    for (const auto& next : successors[current]) {
      if (next != END && reached.insert(next).second) frontier.push_back(next);
    }
  }
  if (!reach_all) {
    for (const auto& node : def.nodes) {
      if (!reached.count(node.name)) invalid("Node '" + node.name + "' is unreachable from START");
    }
  }

  // ------------------------------------------------------------------ static breakpoints
  auto check_breakpoints = [&](const std::vector<std::string>& names, const char* what) {
    for (const auto& name : names) {
      if (name != "*" && !is_node(name)) {
        invalid(std::string(what) + " names unknown node '" + name + "'");
      }
    }
  };
  check_breakpoints(options.interrupt_before, "interrupt_before");
  check_breakpoints(options.interrupt_after, "interrupt_after");
  impl->interrupt_before = std::move(options.interrupt_before);
  impl->interrupt_after = std::move(options.interrupt_after);

  // ------------------------------------------------------------------------------ channels
  auto add_channel = [&](std::string name, std::unique_ptr<graph_internal::Channel> channel,
                         bool is_state) {
    const int index = static_cast<int>(impl->channels.size());
    impl->channel_index.emplace(name, index);
    impl->channels.push_back(ChannelSpec{std::move(name), std::move(channel), is_state, false, nullptr});
    return index;
  };
  for (const auto& [key, spec] : def.schema.channels()) {
    if (graph_internal::is_reserved_channel(key)) {
      invalid("State key '" + key + "' is reserved: names starting with '__', 'branch:to:' or "
              "'join:' belong to the runtime");
    }
    const int index = add_channel(key, make_state_channel(key, spec), true);
    impl->channels[static_cast<std::size_t>(index)].is_private = spec.is_private;
    if (spec.kind == ChannelKind::kLastValue && spec.initial) {
      impl->channels[static_cast<std::size_t>(index)].initial = make_json_ptr(*spec.initial);
    }
  }
  impl->start_channel = add_channel(std::string(START),
                                    graph_internal::make_ephemeral_channel(std::string(START), true),
                                    false);
  impl->tasks_channel = add_channel(std::string(kTasksChannel),
                                    graph_internal::make_topic_channel(std::string(kTasksChannel), false),
                                    false);

  // START is node 0, then the user's nodes in the order they were added.
  CompiledNode start;
  start.name = std::string(START);
  start.is_start = true;
  start.trigger_channel = impl->start_channel;
  start.triggers = {impl->start_channel};
  impl->node_index.emplace(start.name, 0);
  impl->nodes.push_back(std::move(start));
  for (const auto& node : def.nodes) {
    CompiledNode compiled;
    compiled.name = node.name;
    compiled.fn = node.fn;
    compiled.subgraph = node.subgraph;
    compiled.defer = node.options.defer;
    const std::string trigger = std::string(graph_internal::kBranchPrefix) + node.name;
    compiled.trigger_channel =
        add_channel(trigger,
                    node.options.defer
                        ? graph_internal::make_named_barrier_channel(trigger, {node.name})
                        : graph_internal::make_ephemeral_channel(trigger, false),
                    false);
    compiled.triggers = {compiled.trigger_channel};
    impl->node_index.emplace(node.name, static_cast<int>(impl->nodes.size()));
    impl->nodes.push_back(std::move(compiled));
  }

  // The value a writer puts into a node's trigger channel.
  auto trigger_write = [&](const std::string& target) {
    const auto& node = impl->nodes[static_cast<std::size_t>(impl->find_node(target))];
    return Write{node.trigger_channel, node.defer ? Json(node.name) : Json(), {}};
  };
  for (const auto& edge : def.edges) {
    if (edge.to == END) continue;
    if (edge.from.size() == 1) {
      auto& from = impl->nodes[static_cast<std::size_t>(impl->find_node(edge.from[0]))];
      const Write write = trigger_write(edge.to);
      const bool duplicate = std::any_of(from.edge_writes.begin(), from.edge_writes.end(),
                                         [&](const Write& w) { return w.channel == write.channel; });
      if (!duplicate) from.edge_writes.push_back(write);
      continue;
    }
    const std::string name = join_channel_name(edge.from, edge.to);
    if (impl->channel_index.count(name)) continue;
    const int join = add_channel(
        name, graph_internal::make_named_barrier_channel(name, edge.from), false);
    auto& target = impl->nodes[static_cast<std::size_t>(impl->find_node(edge.to))];
    target.triggers.push_back(join);
    for (const auto& from : edge.from) {
      auto& source = impl->nodes[static_cast<std::size_t>(impl->find_node(from))];
      source.edge_writes.push_back(Write{join, Json(from), {}});
    }
  }
  for (const auto& branch : def.branches) {
    impl->nodes[static_cast<std::size_t>(impl->find_node(branch.from))].branches.push_back(branch);
    impl->has_branches = true;
  }
  for (const auto& node : impl->nodes) {
    for (int trigger : node.triggers) {
      impl->channels[static_cast<std::size_t>(trigger)].triggers_node = true;
    }
  }
  return std::make_shared<CompiledGraph>(std::move(impl));
}

}  // namespace tollgate

// The internal shape of a graph: what StateGraph records (Definition) and what compile()
// turns it into (CompiledGraph::Impl): nodes with their trigger channels and writers, and the
// channel table every run clones its channels from.
//
// Thread-safety: a Definition belongs to one builder; an Impl is immutable after compile()
// except for its thread pool and values cache, which guard themselves.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/channel.h"
#include "graph/thread_pool.h"
#include "graph/values_cache.h"
#include "tollgate/graph.h"

namespace tollgate {

struct StateGraph::Definition {
  struct Node {
    std::string name;
    NodeFn fn;
    std::shared_ptr<const CompiledGraph> subgraph;
    NodeOptions options;
  };
  struct Edge {
    std::vector<std::string> from;  // more than one: a join
    std::string to;
  };
  struct Branch {
    std::string from;
    RouterFn router;
    std::map<std::string, std::string> path_map;
  };

  StateSchema schema;
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<Branch> branches;
};

namespace graph_internal {

// Channel names of the runtime (LangGraph's, so checkpoints read the same).
inline constexpr std::string_view kStartChannel = "__start__";
inline constexpr std::string_view kBranchPrefix = "branch:to:";
inline constexpr std::string_view kJoinPrefix = "join:";
inline constexpr std::string_view kInterruptSeenKey = "__interrupt__";
inline constexpr std::string_view kPullPath = "__pregel_pull";
inline constexpr std::string_view kPushPath = "__pregel_push";

// True for names the runtime owns: "__*", "branch:to:*", "join:*".
bool is_reserved_channel(std::string_view name);

struct Write {
  int channel = -1;  // index into the run's channel table; -1: a new state key, see `key`
  Json value;
  std::string key;   // only for channel == -1
};

struct CompiledNode {
  std::string name;
  NodeFn fn;                                      // empty for START and subgraph nodes
  std::shared_ptr<const CompiledGraph> subgraph;  // a compiled graph as a node
  bool is_start = false;
  bool defer = false;
  int trigger_channel = -1;  // what goto/edges/routers write to run this node
  std::vector<int> triggers;  // every channel whose update runs this node
  std::vector<Write> edge_writes;  // static edges out of this node
  std::vector<StateGraph::Definition::Branch> branches;
};

struct ChannelSpec {
  std::string name;
  std::unique_ptr<Channel> prototype;
  bool is_state = false;        // a state key (shown in values), not a runtime channel
  bool triggers_node = false;   // some node is triggered by it
  JsonPtr initial;              // a last-value key's default, set on a new thread
  bool is_private = false;      // a state key left out of output values and input
};

}  // namespace graph_internal

struct CompiledGraph::Impl {
  std::string name;
  std::shared_ptr<Saver> checkpointer;
  const Clock* clock = nullptr;  // CompileOptions::clock
  std::vector<std::string> interrupt_before;
  std::vector<std::string> interrupt_after;
  std::vector<graph_internal::CompiledNode> nodes;  // nodes[0] is START
  std::map<std::string, int, std::less<>> node_index;
  std::vector<graph_internal::ChannelSpec> channels;
  std::map<std::string, int, std::less<>> channel_index;
  int start_channel = -1;
  int tasks_channel = -1;
  bool has_branches = false;

  mutable graph_internal::ThreadPool pool;
  mutable graph_internal::ValuesCache values_cache;

  int find_node(std::string_view node) const {
    auto it = node_index.find(node);
    return it == node_index.end() ? -1 : it->second;
  }
};

}  // namespace tollgate

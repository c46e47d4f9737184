// The graph runtime: build a StateGraph, compile it, run it in supersteps with durable
// checkpoints, pause it with interrupt() and resume it with a Command.
//
//   StateSchema schema;
//   schema.add_messages("messages");
//   StateGraph g(schema);
//   g.add_node("ask", [](const State& s, Runtime& rt) -> NodeResult {
//     Json answer = rt.interrupt("What is your name?");     // pauses the run here
//     return Json{{"name", answer}};
//   });
//   g.add_edge(START, "ask");
//   auto graph = g.compile({.checkpointer = saver});
//   graph->invoke(Json::object(), {.thread_id = "t1"});      // -> interrupts: [{id, value}]
//   graph->invoke(Command{.resume = "Ada"}, {.thread_id = "t1"});
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tollgate/checkpoint.h"
#include "tollgate/json.h"
#include "tollgate/run_actor.h"

namespace tollgate {

inline constexpr std::string_view START = "__start__";
inline constexpr std::string_view END = "__end__";

// ----------------------------------------------------------------------------- state schema

// A binary reducer: folds one written value into the channel's current value.
using Reducer = std::function<Json(const Json& current, const Json& update)>;

enum class ChannelKind {
  kLastValue,    // one write per step; two writes in one step is an error naming the key
  kAppend,       // list concatenation (a non-list write appends one item)
  kAddMessages,  // id-aware message merge with RemoveMessage and remove-all
  kReducer,      // a user-supplied binary reducer
};

// The channels (keys) of a graph's state. Keys not declared are last-value channels.
class StateSchema {
 public:
  StateSchema& last_value(std::string key, std::optional<Json> default_value = std::nullopt);
  StateSchema& append(std::string key);
  StateSchema& add_messages(std::string key);
  StateSchema& reducer(std::string key, Reducer reducer, std::optional<Json> initial = std::nullopt);
  // Marks a declared key private (LangChain's PrivateStateAttr), e.g. a middleware's routing or
  // bookkeeping key: nodes and routers read and write it and it is checkpointed like any key,
  // but it is left out of the graph's output (invoke's values, the values/updates/checkpoints
  // streams, get_state().values) and ignored when it appears in graph input. Declare the key
  // first; throws Error(kInvalidArgument) naming an undeclared key.
  StateSchema& make_private(std::string_view key);

  struct Channel {
    ChannelKind kind = ChannelKind::kLastValue;
    Reducer reducer;
    std::optional<Json> initial;
    bool is_private = false;  // see make_private
  };
  const std::map<std::string, Channel, std::less<>>& channels() const { return channels_; }

 private:
  std::map<std::string, Channel, std::less<>> channels_;
};

// A write that replaces a reducer channel's value instead of being folded into it:
// {"__overwrite__": value}.
Json overwrite(Json value);

// --------------------------------------------------------------------------- state snapshot

// An immutable snapshot of the state's channel values, cheap to copy (values are shared).
class State {
 public:
  State() = default;
  explicit State(std::map<std::string, JsonPtr, std::less<>> values);
  // Shares a map that nobody changes while a State holds it (non-null).
  explicit State(std::shared_ptr<const std::map<std::string, JsonPtr, std::less<>>> values);
  static State from_json(const Json& object);

  // The value of `key`, or JSON null when the channel is empty.
  const Json& operator[](std::string_view key) const;
  const Json* find(std::string_view key) const;
  JsonPtr value_ptr(std::string_view key) const;
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  bool empty() const;
  Json to_json() const;  // deep copy as one JSON object
  const std::map<std::string, JsonPtr, std::less<>>& values() const;

 private:
  std::shared_ptr<const std::map<std::string, JsonPtr, std::less<>>> values_;
};

// ------------------------------------------------------------------------- control values

struct Interrupt {
  std::string id;  // stable for a given (task namespace, interrupt index)
  Json value;
  bool operator==(const Interrupt&) const = default;
};
void to_json(Json& j, const Interrupt& interrupt);

// Fan-out: run `node` with `arg` as its input (instead of the state).
struct Send {
  std::string node;
  Json arg;
};

struct Command {
  static constexpr std::string_view PARENT = "__parent__";

  std::string graph;                             // "" this graph; PARENT: the parent graph
  std::optional<Json> update;                    // channel writes (an object)
  std::vector<std::string> goto_nodes;           // nodes to run next
  std::vector<Send> goto_sends;                  // fan-out targets to run next
  std::optional<Json> resume;                    // answer to the single pending interrupt
  std::map<std::string, Json> resume_map;        // answers by interrupt id

  // Parses {"resume":..., "update":..., "goto":...}. A resume object whose keys are all
  // interrupt ids (32 hex digits) becomes resume_map. Throws Error(kInvalidArgument).
  static Command from_json(const Json& json);
};

// What a node returns: nothing, a partial state update, or a Command.
class NodeResult {
 public:
  NodeResult() = default;
  NodeResult(Json update) : value_(std::move(update)) {}  // NOLINT: implicit by design
  NodeResult(Command command) : value_(std::move(command)) {}  // NOLINT
  NodeResult(std::vector<Send> sends);  // NOLINT: a Command going to these Sends

  const Json* update() const { return std::get_if<Json>(&value_); }
  const Command* command() const { return std::get_if<Command>(&value_); }
  Json* update() { return std::get_if<Json>(&value_); }
  Command* command() { return std::get_if<Command>(&value_); }

 private:
  std::variant<Json, Command> value_;
};

// ------------------------------------------------------------------------------ streaming

enum class StreamMode { kValues, kUpdates, kCustom, kMessages, kDebug, kTasks, kCheckpoints };
const char* stream_mode_name(StreamMode mode);

struct StreamEvent {
  StreamMode mode;
  std::vector<std::string> ns;  // subgraph namespace ("node:task_id" segments); empty at root
  Json data;
  // With RunConfig::state_by_reference, the state a `values` event shows (`data` is then
  // null) or the step's state a `tasks` event's task starts on (`data` then has no "input";
  // a Send's task keeps its input in `data`), valid during the callback only. Null
  // otherwise: `data` holds all.
  const State* state = nullptr;
  // With `state` on a `values` event, what a reader that kept the text of the previous one
  // may reuse: `loop` tells a run's graph loops apart (a subgraph call runs a loop of its
  // own), `values_index` counts that loop's values events from 1, and `unchanged_items`
  // gives, for each list-valued key (append, add_messages), how many of its leading items
  // are the same as in the loop's values event `values_index - 1`; for the first
  // (`values_index` 1), as in the checkpoint the loop loaded, `values_base` ("" and counts of
  // 0 when it loaded none). A `tasks` event with `state` before the loop's first values event
  // has the same `values_base` and `unchanged_items` against it (when the loop loaded one).
  std::uint64_t loop = 0;
  std::uint64_t values_index = 0;
  std::vector<std::pair<std::string, std::size_t>> unchanged_items;
  std::string values_base;
  // With `state` on a `tasks` event: the checkpoint whose state it is, the step's ("" when
  // the step's state holds writes that no checkpoint holds, such as a resuming Command's
  // update). On disk with durability "sync"; "async" may still be saving it, and "exit"
  // stores only the run's last checkpoint.
  std::string checkpoint_id;
  // With RunConfig::messages_by_reference, a `messages` event of Runtime::emit_message_ref
  // hands over the chunk and its metadata here instead of the pair [chunk, metadata] in `data`
  // (`data` is then null), valid during the callback only. Null otherwise.
  const Json* message_chunk = nullptr;
  const Json* message_metadata = nullptr;
};
// Called serially (never concurrently) from the running graph's threads.
using StreamCallback = std::function<void(const StreamEvent&)>;

// --------------------------------------------------------------------------------- runtime

class CompiledGraph;
struct RunConfig;

// The per-task context handed to a node. Valid only during the node call.
class Runtime {
 public:
  virtual ~Runtime() = default;

  // Pauses the run with `value` shown to a human. Returns the answer when the run resumes;
  // the node re-runs from its first line then, earlier interrupt() calls returning their
  // stored answers in order. Never catch the internal exception it throws to pause.
  virtual Json interrupt(Json value) = 0;
  // interrupt() without unwinding the node: returns the answer when resuming, or std::nullopt
  // when the run pauses here — the node must then return at once; what it returns is discarded
  // and nothing it wrote is kept. For code that can return cleanly (the HITL middleware's
  // hook); throwing costs tens of microseconds per pause on a hot path. The default throws
  // like interrupt().
  virtual std::optional<Json> interrupt_or_pause(Json value) { return interrupt(std::move(value)); }
  // Writes a chunk to the `custom` stream mode.
  virtual void write_custom(Json chunk) = 0;
  // Emits a message chunk (e.g. a token) to the `messages` stream mode.
  virtual void emit_message(Json message_chunk, Json metadata = Json::object()) = 0;
  // emit_message() of a chunk the caller keeps, with no metadata of its own (a chat model's
  // token callback): a run whose consumer reads chunks in place
  // (RunConfig::messages_by_reference) does not copy it. The default copies it.
  virtual void emit_message_ref(const Json& message_chunk) { emit_message(message_chunk); }

  virtual const std::string& node_name() const = 0;
  virtual const std::string& task_id() const = 0;
  virtual const std::string& checkpoint_ns() const = 0;  // this task's namespace
  virtual const std::string& thread_id() const = 0;
  // The whole graph state at the start of this step (for Send tasks too).
  virtual const State& graph_state() const = 0;
  // Per-run context given in RunConfig::context.
  virtual const Json& context() const = 0;
  // Who started the run and who decided the review it resumes with (RunConfig).
  virtual const RunActor& started_by() const = 0;
  virtual const RunActor& decided_by() const = 0;
  // True when the run was asked to stop; long nodes should check it.
  virtual bool cancelled() const = 0;

  // Runs `graph` as a child of this task: it shares the thread and checkpointer, keeps its
  // checkpoints in this task's namespace, and its interrupts pause the parent run.
  virtual Json invoke_subgraph(const CompiledGraph& graph, const Json& input) = 0;
};

// The Runtime of the task running on this thread, or nullptr outside a node.
Runtime* current_runtime();
// interrupt() for code that has no Runtime& at hand (e.g. a tool deep in a call chain).
Json interrupt(Json value);

// --------------------------------------------------------------------------------- builder

using NodeFn = std::function<NodeResult(const State& input, Runtime& runtime)>;
// A conditional edge: returns node names (or END) and/or Sends.
struct Route {
  std::vector<std::string> nodes;
  std::vector<Send> sends;
  Route() = default;
  Route(std::string node) { nodes.push_back(std::move(node)); }  // NOLINT
  Route(std::string_view node) { nodes.emplace_back(node); }     // NOLINT
  Route(const char* node) { nodes.emplace_back(node); }          // NOLINT
  Route(std::vector<std::string> n) : nodes(std::move(n)) {}     // NOLINT
  Route(std::vector<Send> s) : sends(std::move(s)) {}            // NOLINT
};
using RouterFn = std::function<Route(const State& state)>;

struct NodeOptions {
  bool defer = false;  // run only when nothing else is left to run
  // Nodes this node may reach with Command{goto} (for validation: they count as reachable).
  std::vector<std::string> destinations;
};

enum class Durability {
  kSync,   // each step's checkpoint is stored before the next step starts (default)
  kAsync,  // stored in the background while the next step runs; waited for at the end
  kExit,   // stored only when the run ends (finishes, pauses or fails)
};

struct CompileOptions {
  std::shared_ptr<Saver> checkpointer;
  std::vector<std::string> interrupt_before;  // "*" means every node
  std::vector<std::string> interrupt_after;
  std::string name = "LangGraph";
  // Where the graph's runs read the time: the ids and `ts` of the checkpoints they write and
  // the timestamps of debug events (a subgraph without a clock of its own uses its parent's).
  // Null: system_clock(). Not owned; it must outlive the compiled graph.
  const Clock* clock = nullptr;
};

class StateGraph {
 public:
  explicit StateGraph(StateSchema schema = {});

  StateGraph& add_node(std::string name, NodeFn fn, NodeOptions options = {});
  // A compiled graph as a node: its checkpoints live in the node's namespace.
  StateGraph& add_node(std::string name, std::shared_ptr<const CompiledGraph> subgraph,
                       NodeOptions options = {});
  StateGraph& add_edge(std::string_view from, std::string_view to);
  // A join: `to` runs once every node of `from` has finished.
  StateGraph& add_edge(std::vector<std::string> from, std::string_view to);
  // `path_map` (optional) maps the router's return values to node names, and lists the
  // possible targets for validation.
  StateGraph& add_conditional_edges(std::string_view from, RouterFn router,
                                    std::map<std::string, std::string> path_map = {});
  StateGraph& set_entry_point(std::string_view node) { return add_edge(START, node); }
  StateGraph& set_finish_point(std::string_view node) { return add_edge(node, END); }

  // Validates the graph (unknown nodes in edges, unreachable nodes, duplicate names, no entry
  // point, ...); throws Error(kInvalidArgument) naming the problem.
  std::shared_ptr<CompiledGraph> compile(CompileOptions options = {}) const;

  struct Definition;  // internal: what the builder recorded

 private:
  std::shared_ptr<Definition> definition_;
};

// ----------------------------------------------------------------------------- running

struct RunConfig {
  std::string thread_id;      // required with a checkpointer
  std::string checkpoint_id;  // replay/fork from this checkpoint instead of the latest
  std::string checkpoint_ns;  // normally empty (root graph)
  int recursion_limit = 25;
  Durability durability = Durability::kSync;
  std::vector<std::string> interrupt_before;  // in addition to the compiled ones
  std::vector<std::string> interrupt_after;
  Json context = Json::object();   // handed to nodes as Runtime::context()
  Json metadata = Json::object();  // merged into each checkpoint's metadata
  std::string run_id;
  // Who asked for the work this run does; for a run that resumes a pause, who started the run
  // that paused. Handed to nodes as Runtime::started_by() and to tools as
  // ToolContext::started_by(). Empty: nobody was named.
  RunActor started_by;
  // Who sent the answer this run resumes with (a review's decision); empty when the run
  // resumes nothing.
  RunActor decided_by;
  std::vector<StreamMode> stream_modes;  // empty: no events
  bool stream_subgraphs = false;
  // False: `checkpoints` events leave out "values" (they carry config, parent_config and
  // metadata), for a consumer that only names the checkpoints, such as the Agent Server's v2
  // thread stream; a long thread's state is then not copied once more at every step.
  bool checkpoint_values = true;
  // True: `values` events and the `tasks` events that start a task hand the state over in
  // StreamEvent::state instead of a copy in `data`, for a consumer that writes the state out
  // itself, such as the server; a long thread's state is then not copied twice a step.
  bool state_by_reference = false;
  // True: `messages` events of Runtime::emit_message_ref hand the chunk and its metadata over
  // in StreamEvent::message_chunk and message_metadata instead of a copy in `data`, for a
  // consumer that reads each token's chunk once, such as the server.
  bool messages_by_reference = false;
  StreamCallback on_event;
  std::shared_ptr<std::atomic<bool>> cancel;  // set to true to stop the run between steps
  // True: invoke hands back the state the run ended on in RunResult::state, for a caller that
  // reads it right after the run, such as the server writing the thread's outcome; the loop
  // holds it, so it is not read back from the checkpointer.
  bool final_state = false;
};

using Input = std::variant<Json, Command>;  // Json null = continue from the checkpoint

struct StateSnapshot;

struct RunResult {
  State values;
  std::vector<Interrupt> interrupts;  // non-empty when the run paused on interrupt()
  bool paused = false;                // stopped at an interrupt or a static breakpoint
  // With RunConfig::final_state: what get_state of the run's namespace (the latest checkpoint,
  // without subgraphs) returns once the run has returned. Null when the run cannot tell it
  // without reading the checkpointer (no checkpoint, or a resuming Command's update applied to
  // a step that did not end): call get_state then.
  std::shared_ptr<const StateSnapshot> state;
  // values plus "__interrupt__": [...] when paused, the shape LangGraph's invoke returns.
  Json to_json() const;
};

struct TaskInfo {
  std::string id;
  std::string name;
  Json path;                          // e.g. ["__pregel_pull", "node"]
  std::optional<std::string> error;
  std::vector<Interrupt> interrupts;
  std::optional<CheckpointConfig> state;  // a subgraph task: its namespace
  std::shared_ptr<const StateSnapshot> subgraph_state;  // get_state(subgraphs=true) only
  Json result;                        // writes of a finished task, or null
};

struct StateSnapshot {
  State values;
  // Every state key, the private ones too (StateSchema::make_private): what the tasks of the
  // next step start on, before the pending writes of `values` are applied.
  State task_input;
  std::vector<std::string> next;
  std::vector<TaskInfo> tasks;
  CheckpointConfig config;
  Json metadata = Json::object();
  std::string created_at;
  std::optional<CheckpointConfig> parent_config;
  std::vector<Interrupt> interrupts;
  Json to_json() const;
};

// A compiled, immutable graph. Thread-safety: invoke/stream/get_state/... may be called
// concurrently for different threads; calls for the same thread must not overlap.
class CompiledGraph : public std::enable_shared_from_this<CompiledGraph> {
 public:
  ~CompiledGraph();

  RunResult invoke(const Input& input, const RunConfig& config = {}) const;

  StateSnapshot get_state(const RunConfig& config, bool subgraphs = false) const;
  std::vector<StateSnapshot> get_state_history(const RunConfig& config,
                                               const ListQuery& query = {}) const;
  // Applies `values` as if node `as_node` had written them (its edges fire); "" infers the
  // node. Creates a new checkpoint (a fork when config names an older one).
  CheckpointConfig update_state(const RunConfig& config, const Json& values,
                                const std::string& as_node = "") const;

  const std::string& name() const;
  const std::shared_ptr<Saver>& checkpointer() const;
  std::vector<std::string> node_names() const;

  struct Impl;
  explicit CompiledGraph(std::unique_ptr<Impl> impl);
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tollgate

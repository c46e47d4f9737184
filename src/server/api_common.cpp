#include <algorithm>

#include "server/api.h"
#include "server/ids.h"
#include "tollgate/error.h"

namespace tollgate::server {

std::optional<AssistantRecord> find_assistant(ApiContext& context, const std::string& id_or_graph) {
  if (context.runs.graph(id_or_graph) != nullptr) {
    if (auto system = context.store.get_assistant(system_assistant_id(id_or_graph))) return system;
  }
  return context.store.get_assistant(id_or_graph);
}

AssistantRecord require_assistant_for_run(ApiContext& context, const std::string& id_or_graph) {
  auto assistant = find_assistant(context, id_or_graph);
  if (!assistant) {
    throw Error::NotFound("No assistant found for \"" + id_or_graph +
                             "\". Make sure the assistant ID is for a valid assistant or a "
                             "valid graph ID.");
  }
  return *assistant;
}

void require_uuid(const std::string& value, const std::string& field) {
  if (!is_uuid(value)) throw Error::InvalidArgument(field + ": not a valid UUID: \"" + value + "\"");
}

namespace {

ThreadRecord require_read_thread(std::optional<ThreadRecord> thread, const std::string& thread_id,
                                 const Identity& who, ThreadUse use) {
  if (!thread) throw Error::NotFound("Thread with ID " + thread_id + " not found");
  require_thread_use(who, *thread, use);
  return std::move(*thread);
}

}  // namespace

ThreadRecord require_thread(ApiContext& context, const std::string& thread_id, const Identity& who,
                            ThreadUse use) {
  require_uuid(thread_id, "thread_id");
  return require_read_thread(context.store.get_thread(thread_id), thread_id, who, use);
}

ThreadRecord require_thread_head(ApiContext& context, const std::string& thread_id,
                                 const Identity& who, ThreadUse use) {
  require_uuid(thread_id, "thread_id");
  return require_read_thread(context.store.get_thread_head(thread_id), thread_id, who, use);
}

void set_run_actors(ApiContext& context, const Identity& requester, RunRequest& run) {
  run.set_actors(requester,
                 run.resumes() ? latest_run_starter(context.store, run.thread_id) : Identity{});
}

ThreadRecord new_thread_record(const std::string& thread_id, const Json& metadata,
                               const Clock& clock) {
  ThreadRecord t;
  t.thread_id = thread_id;
  t.created_at = now_millis(clock);
  t.updated_at = t.created_at;
  t.metadata = metadata.is_object() ? metadata : Json::object();
  return t;
}

namespace {

void require_node(const CompiledGraph* graph, const std::string& node, const std::string& field) {
  if (graph == nullptr || node == "__end__") return;
  const std::vector<std::string> nodes = graph->node_names();
  if (node != "__start__" && std::find(nodes.begin(), nodes.end(), node) != nodes.end()) return;
  std::string known;
  for (const std::string& name : nodes) {
    if (name != "__start__" && name != "__end__") known += (known.empty() ? "" : ", ") + name;
  }
  throw Error::InvalidArgument(field + ": unknown node \"" + node + "\" (the graph's nodes: " +
                               known + ")");
}

}  // namespace

void validate_command(const Json& command, const CompiledGraph* graph, const std::string& prefix) {
  const std::string name = prefix.empty() ? "command" : prefix.substr(0, prefix.size() - 1);
  if (!command.is_object()) throw Error::InvalidArgument(name + ": must be an object");
  try {
    Command::from_json(command);
  } catch (const Error& e) {
    throw Error::InvalidArgument(name + ": " + e.what());
  }
  auto go = command.find("goto");
  if (go == command.end() || go->is_null()) return;
  const Json targets = go->is_array() ? *go : Json::array({*go});
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const std::string field = prefix + "goto" + (go->is_array() ? "[" + std::to_string(i) + "]" : "");
    const Json& target = targets[i];
    if (target.is_string()) require_node(graph, target.get<std::string>(), field);
    if (target.is_object()) require_node(graph, target["node"].get<std::string>(), field + ".node");
  }
  auto resume = command.find("resume");
  if (resume != command.end() && !resume->is_null() && !targets.empty()) {
    throw Error::InvalidArgument(
        prefix + "goto: cannot be combined with " + prefix +
        "resume: a resumed step runs only the tasks that were paused, so that a decision is never "
        "applied without the rest of its step. Resume first, then send the goto in a Command of "
        "its own.");
  }
}

namespace {

// A `tasks` event that reports a task finished without error.
bool task_succeeded(const LogEntry& entry) {
  const Json data = Json::parse(entry.data, nullptr, false);
  return data.is_object() && data.contains("result") &&
         (!data.contains("error") || data["error"].is_null());
}

// Whether the run's log shows that the run got past the point where it can be refused: an
// event other than the run's metadata and the bookkeeping of a task that may still fail.
bool progressed(const EventLog& log) {
  bool closed = false;
  for (const LogEntryPtr& entry : log.read(1, 64, &closed)) {
    const std::string mode = entry->event.substr(0, entry->event.find('|'));
    if (mode == "tasks" && task_succeeded(*entry)) return true;
    if (mode != "tasks" && mode != "checkpoints" && mode != "debug") return true;
  }
  return closed;
}

}  // namespace

std::function<bool(HttpResponse&)> refusal_gate(const std::shared_ptr<EventLog>& log,
                                                HeadRewrite accepted, RefusalRewrite refused) {
  std::weak_ptr<EventLog> weak = log;
  return [weak, accepted = std::move(accepted), refused = std::move(refused)](HttpResponse& head) {
    auto l = weak.lock();
    if (l && !progressed(*l)) return false;
    // Read after the events: a refusal is recorded before its error event and the close.
    if (auto rejection = l ? l->rejection() : std::nullopt) {
      head = refused ? refused(rejection->first, rejection->second)
                     : HttpResponse::error(rejection->first, rejection->second);
      return true;
    }
    if (accepted) accepted(head);
    return true;
  };
}

Json require_object_body(const HttpRequest& request) {
  Json body = request.json_body();
  if (!body.is_object()) throw Error::InvalidArgument("Request body must be a JSON object");
  return body;
}

const Json* find_field(const Json& body, std::string_view path) {
  const Json* node = &body;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    auto it = node->find(key);
    if (it == node->end() || it->is_null()) return nullptr;
    if (dot == std::string_view::npos) return &*it;
    if (!it->is_object()) {
      throw Error::InvalidArgument(std::string(path.substr(0, dot)) + ": must be an object");
    }
    node = &*it;
    start = dot + 1;
  }
}

std::optional<std::string> optional_string(const Json& body, const std::string& field) {
  const Json* value = find_field(body, field);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) throw Error::InvalidArgument(field + ": must be a string");
  return value->get<std::string>();
}

std::string enum_field(const Json& body, const std::string& field,
                       const std::vector<std::string>& allowed, const std::string& fallback) {
  auto value = optional_string(body, field);
  if (!value) return fallback;
  for (const std::string& option : allowed) {
    if (*value == option) return *value;
  }
  std::string options;
  for (const std::string& option : allowed) options += (options.empty() ? "" : ", ") + option;
  throw Error::InvalidArgument(field + ": invalid value \"" + *value + "\"; expected one of " +
                               options);
}

Json optional_object(const Json& body, const std::string& field) {
  const Json* value = find_field(body, field);
  if (value == nullptr) return Json::object();
  if (!value->is_object()) throw Error::InvalidArgument(field + ": must be an object");
  return *value;
}

bool optional_bool(const Json& body, const std::string& field, bool fallback) {
  const Json* value = find_field(body, field);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) throw Error::InvalidArgument(field + ": must be a boolean");
  return value->get<bool>();
}

std::size_t optional_count(const Json& body, const std::string& field, std::size_t fallback) {
  const Json* value = find_field(body, field);
  if (value == nullptr) return fallback;
  if (!value->is_number_unsigned() && !(value->is_number_integer() && value->get<long long>() >= 0)) {
    throw Error::InvalidArgument(field + ": must be a non-negative integer");
  }
  return value->get<std::size_t>();
}

std::string string_member(const Json& object, const std::string& key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace tollgate::server

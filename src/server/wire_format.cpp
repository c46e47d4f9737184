#include "server/wire_format.h"

#include "server/ids.h"
#include "tollgate/messages.h"

namespace tollgate::server {
namespace {

Json checkpoint_json(const CheckpointConfig& config) {
  return Json{{"thread_id", config.thread_id},
              {"checkpoint_ns", config.checkpoint_ns},
              {"checkpoint_id", config.checkpoint_id},
              {"checkpoint_map", nullptr}};
}

}  // namespace

Json assistant_to_json(const AssistantRecord& a) {
  return Json{{"assistant_id", a.assistant_id},
              {"graph_id", a.graph_id},
              {"config", a.config},
              {"context", a.context},
              {"metadata", a.metadata},
              {"version", a.version},
              {"name", a.name},
              {"description", a.description ? Json(*a.description) : Json()},
              {"created_at", iso_timestamp(a.created_at)},
              {"updated_at", iso_timestamp(a.updated_at)}};
}

Json thread_to_json(const ThreadRecord& t) {
  Json out{{"thread_id", t.thread_id},
           {"created_at", iso_timestamp(t.created_at)},
           {"updated_at", iso_timestamp(t.updated_at)},
           {"metadata", t.metadata},
           {"status", t.status},
           {"config", t.config}};
  if (!t.values.is_null()) out["values"] = t.values;
  if (!t.interrupts.is_null()) out["interrupts"] = t.interrupts;
  if (!t.error.is_null()) out["error"] = t.error;
  return out;
}

Json run_to_json(const RunRecord& r) {
  return Json{{"run_id", r.run_id},
              {"thread_id", r.thread_id},
              {"assistant_id", r.assistant_id},
              {"metadata", r.metadata},
              {"status", r.status},
              {"kwargs", r.kwargs},
              {"multitask_strategy", r.multitask_strategy},
              {"created_at", iso_timestamp(r.created_at)},
              {"updated_at", iso_timestamp(r.updated_at)}};
}

Json interrupt_to_json(const Interrupt& interrupt) {
  return Json{{"id", interrupt.id}, {"value", interrupt.value}};
}

Json interrupts_to_json(const std::vector<Interrupt>& interrupts) {
  Json out = Json::array();
  for (const Interrupt& i : interrupts) out.push_back(interrupt_to_json(i));
  return out;
}

Json empty_state_json() {
  return Json{{"values", Json::object()},    {"next", Json::array()}, {"tasks", Json::array()},
              {"metadata", nullptr},         {"created_at", nullptr}, {"checkpoint", nullptr},
              {"parent_checkpoint", nullptr}};
}

Json state_to_json(const StateSnapshot& s) {
  if (s.config.checkpoint_id.empty()) return empty_state_json();
  Json tasks = Json::array();
  for (const TaskInfo& task : s.tasks) {
    Json checkpoint;
    if (task.state) {
      checkpoint =
          Json{{"thread_id", task.state->thread_id}, {"checkpoint_ns", task.state->checkpoint_ns}};
    }
    Json nested;
    if (task.subgraph_state) {
      nested = state_to_json(*task.subgraph_state);
      checkpoint = nullptr;
    }
    tasks.push_back(
        Json{{"id", task.id},
             {"name", task.name},
             {"error", task.error ? Json(*task.error) : Json()},
             {"interrupts", interrupts_to_json(task.interrupts)},
             {"path", task.path.is_null() ? Json::array({"__pregel_pull", task.name}) : task.path},
             {"checkpoint", checkpoint},
             {"state", nested},
             {"result", task.result}});
  }
  Json values = s.values.to_json();
  if (!values.is_object()) values = Json::object();
  return Json{{"values", values},
              {"next", s.next},
              {"tasks", tasks},
              {"metadata", s.metadata},
              {"created_at", s.created_at.empty() ? Json() : Json(s.created_at)},
              {"checkpoint", checkpoint_json(s.config)},
              {"parent_checkpoint", s.parent_config ? checkpoint_json(*s.parent_config) : Json()}};
}

bool waits_on_interrupt(const TaskInfo& task) {
  // A task that finished after its resume keeps its interrupt writes next to its result; it
  // waits for nothing (a process that died before the step's next checkpoint leaves it so).
  return !task.interrupts.empty() && task.result.is_null();
}

Json interrupts_by_task(const StateSnapshot& snapshot) {
  Json out = Json::object();
  bool any = false;
  for (const TaskInfo& task : snapshot.tasks) {
    if (waits_on_interrupt(task)) {
      out[task.id] = interrupts_to_json(task.interrupts);
      any = true;
    }
  }
  if (!any && !snapshot.next.empty()) {  // a static breakpoint: the waiting tasks, no values
    for (const TaskInfo& task : snapshot.tasks) out[task.id] = Json::array();
  }
  return out;
}

Json normalize_input(const Json& input) {
  if (!input.is_object() || !input.contains("messages")) return input;
  Json out = input;
  Json& messages = out["messages"];
  if (messages.is_array()) {
    for (Json& m : messages) m = normalize_message(m);
  } else if (messages.is_object()) {
    messages = Json::array({normalize_message(messages)});
  } else if (messages.is_string()) {
    messages = Json::array({normalize_message(Json{{"type", "human"}, {"content", messages}})});
  }
  return out;
}

std::string event_json(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string event_json_without(const Json& object, std::string_view skip) {
  if (!object.is_object()) return event_json(object);
  std::string out = "{";
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.key() == skip) continue;
    if (out.size() > 1) out += ',';
    append_json_string(out, it.key());
    out += ':';
    out += event_json(it.value());
  }
  out += '}';
  return out;
}

void append_json_string(std::string& out, std::string_view text) {
  // Printable ASCII without quotes or backslashes is written as it is; anything else (escapes,
  // UTF-8 to validate) goes through the serializer so that the bytes stay exactly its own.
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x80 || c == '"' || c == '\\') {
      out += event_json(Json(text));
      return;
    }
  }
  out += '"';
  out.append(text);
  out += '"';
}

bool json_contains(const Json& object, const Json& subset) {
  if (!subset.is_object() || subset.empty()) return true;
  if (!object.is_object()) return false;
  for (auto it = subset.begin(); it != subset.end(); ++it) {
    auto found = object.find(it.key());
    if (found == object.end() || *found != it.value()) return false;
  }
  return true;
}

}  // namespace tollgate::server

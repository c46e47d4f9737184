#include "server/wire_format.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>

#include "core/json_out.h"
#include "server/ids.h"
#include "tollgate/messages.h"

namespace tollgate::server {

using core::JsonOut;

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
           {"status", to_string(t.status)},
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
              {"status", to_string(r.status)},
              {"kwargs", r.kwargs},
              {"multitask_strategy", r.multitask_strategy},
              {"created_at", iso_timestamp(r.created_at)},
              {"updated_at", iso_timestamp(r.updated_at)}};
}

Json interrupt_to_json(const Interrupt& interrupt) {
  return json_object("id", interrupt.id, "value", interrupt.value);
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
  std::string out;
  JsonOut(out).value(value);
  return out;
}

void append_event_json(std::string& out, const Json& value) {
  JsonOut(out).value(value);
}

void append_array_json(std::string& out, const Json::array_t& items, std::string_view previous,
                       std::size_t keep, std::vector<std::size_t>& ends) {
  keep = std::min({keep, items.size(), ends.size()});
  if (keep > 0 && ends[keep - 1] > previous.size()) keep = 0;  // not that array's text
  const std::size_t start = out.size();
  ends.resize(keep);
  if (keep == 0) {
    out += '[';
    JsonOut json(out);
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i > 0) json.put(',');
      json.value(items[i]);
      ends.push_back(json.length() - start);
    }
    json.put(']');
    return;
  }
  // The new items are written apart first, so that the string is made as long as it has to
  // be at once: a long list's kept text is copied once, never again as the string grows.
  std::string added;
  {
    JsonOut json(added);
    for (std::size_t i = keep; i < items.size(); ++i) {
      json.put(',');
      json.value(items[i]);
      ends.push_back(ends[keep - 1] + json.length());
    }
  }
  // With room for the members a state writes after the list. Made exactly that long (reserve()
  // would double the string's room when asked for a little more, and the text may be kept).
  const std::size_t need = start + ends[keep - 1] + added.size() + 1 + 1024;
  if (out.capacity() < need) {
    std::string longer;
    longer.reserve(need);
    longer.append(out);
    out.swap(longer);
  }
  out.append(previous.data(), ends[keep - 1]);
  out += added;
  out += ']';
}

namespace {

// state_event_json, with the member `key` written as `*text` when `text` is given.
std::string state_json(const State& state, std::string_view key, const std::string_view* text,
                       const ValueTexts* known) {
  std::string out;
  // Room for the texts copied, so that a long conversation's is not copied again as it grows.
  std::size_t size = 256 + (text != nullptr ? text->size() : 0);
  if (known != nullptr) {
    for (const auto& [name, held] : *known) size += held.second.size();
  }
  out.reserve(size);
  out += '{';
  auto member = [&out](std::string_view name) {
    if (out.size() > 1) out += ',';
    append_json_string(out, name);
    out += ':';
  };
  bool placed = text == nullptr;
  for (const auto& [name, value] : state.values()) {
    if (text != nullptr && name == key) continue;
    if (!placed && std::string_view(name) > key) {
      member(key);
      out += *text;
      placed = true;
    }
    member(name);
    if (!value) {
      out += "null";
      continue;
    }
    if (known != nullptr) {
      auto it = known->find(name);
      if (it != known->end() && it->second.first == value) {
        out += it->second.second;
        continue;
      }
    }
    JsonOut(out).value(*value);
  }
  if (!placed) {
    member(key);
    out += *text;
  }
  out += '}';
  return out;
}

}  // namespace

std::string state_event_json(const State& state, const ValueTexts* known) {
  return state_json(state, {}, nullptr, known);
}

std::string state_event_json_with(const State& state, std::string_view key, std::string_view text,
                                  const ValueTexts* known) {
  return state_json(state, key, &text, known);
}

namespace {

// event_json of `object` without its member `key`, or, when `text` is given, with that member
// written as the JSON text `text`, in its place among the members (sorted by key).
std::string object_json(const Json& object, std::string_view key, const std::string_view* text,
                        std::size_t* text_at = nullptr) {
  if (!object.is_object()) return event_json(object);
  std::string out;
  JsonOut json(out);
  json.put('{');
  bool first = true;
  auto member = [&](std::string_view name) {
    if (!first) json.put(',');
    first = false;
    json.string(name);
    json.put(':');
  };
  bool placed = text == nullptr;
  for (const auto& [name, value] : object.get_ref<const Json::object_t&>()) {
    if (name == key) continue;
    if (!placed && std::string_view(name) > key) {
      member(key);
      if (text_at != nullptr) *text_at = json.length();
      json.put(*text);
      placed = true;
    }
    member(name);
    json.value(value);
  }
  if (!placed) {
    member(key);
    if (text_at != nullptr) *text_at = json.length();
    json.put(*text);
  }
  json.put('}');
  json.finish();
  return out;
}

}  // namespace

std::string run_error_json(const std::string& name, const std::string& message) {
  return event_json(Json{{"__error__", {{"error", name}, {"message", message}}}});
}

std::string event_json_without(const Json& object, std::string_view skip) {
  return object_json(object, skip, nullptr);
}

std::string event_json_with_text(const Json& object, std::string_view key, std::string_view value,
                                 std::size_t* value_at) {
  return object_json(object, key, &value, value_at);
}

void append_json_string(std::string& out, std::string_view text) {
  // Most names, ids and tokens need no escape: appended as they are, between quotes.
  if (JsonOut::plain(text)) {
    out += '"';
    out += text;
    out += '"';
    return;
  }
  JsonOut(out).string(text);
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

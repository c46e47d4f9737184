// StateSchema, State and the small value types of graph.h.
#include <cassert>
#include <utility>

#include "graph/graph_definition.h"
#include "graph/ids.h"
#include "tollgate/error.h"
#include "tollgate/graph.h"

namespace tollgate {

StateSchema& StateSchema::last_value(std::string key, std::optional<Json> default_value) {
  channels_[std::move(key)] = Channel{ChannelKind::kLastValue, nullptr, std::move(default_value)};
  return *this;
}

StateSchema& StateSchema::append(std::string key) {
  channels_[std::move(key)] = Channel{ChannelKind::kAppend, nullptr, std::nullopt};
  return *this;
}

StateSchema& StateSchema::add_messages(std::string key) {
  channels_[std::move(key)] = Channel{ChannelKind::kAddMessages, nullptr, std::nullopt};
  return *this;
}

StateSchema& StateSchema::reducer(std::string key, Reducer reducer, std::optional<Json> initial) {
  channels_[std::move(key)] = Channel{ChannelKind::kReducer, std::move(reducer), std::move(initial)};
  return *this;
}

StateSchema& StateSchema::make_private(std::string_view key) {
  auto it = channels_.find(key);
  if (it == channels_.end()) {
    throw Error::InvalidArgument("make_private: state key '" + std::string(key) +
                                 "' is not declared in the schema");
  }
  it->second.is_private = true;
  return *this;
}

// ----------------------------------------------------------------------------------- State

namespace {
const std::map<std::string, JsonPtr, std::less<>>& empty_values() {
  static const std::map<std::string, JsonPtr, std::less<>> kEmpty;
  return kEmpty;
}
}  // namespace

State::State(std::map<std::string, JsonPtr, std::less<>> values)
    : values_(std::make_shared<const std::map<std::string, JsonPtr, std::less<>>>(
          std::move(values))) {}

State::State(std::shared_ptr<const std::map<std::string, JsonPtr, std::less<>>> values)
    : values_(std::move(values)) {
  assert(values_ && "State needs a map");
}

State State::from_json(const Json& object) {
  if (!object.is_object()) {
    throw Error::InvalidArgument("State must be a JSON object, got " +
                                 std::string(object.type_name()));
  }
  std::map<std::string, JsonPtr, std::less<>> values;
  for (const auto& [key, value] : object.items()) values.emplace(key, make_json_ptr(value));
  return State(std::move(values));
}

const Json* State::find(std::string_view key) const {
  if (!values_) return nullptr;
  auto it = values_->find(key);
  if (it == values_->end() || !it->second) return nullptr;
  return it->second.get();
}

const Json& State::operator[](std::string_view key) const {
  const Json* value = find(key);
  return value ? *value : null_json();
}

JsonPtr State::value_ptr(std::string_view key) const {
  if (!values_) return nullptr;
  auto it = values_->find(key);
  return it == values_->end() ? nullptr : it->second;
}

bool State::empty() const { return !values_ || values_->empty(); }

Json State::to_json() const {
  Json out = Json::object();
  if (!values_) return out;
  for (const auto& [key, value] : *values_) out[key] = value ? *value : Json();
  return out;
}

const std::map<std::string, JsonPtr, std::less<>>& State::values() const {
  return values_ ? *values_ : empty_values();
}

// ---------------------------------------------------------------------------- control values

void to_json(Json& j, const Interrupt& interrupt) {
  j = json_object("id", interrupt.id, "value", interrupt.value);
}

namespace {

Send send_from_json(const Json& json) {
  if (!json.is_object() || !json.contains("node") || !json["node"].is_string()) {
    throw Error::InvalidArgument(
        "Command 'goto' entries must be node names or {\"node\": ..., \"arg\": ...} objects");
  }
  return Send{json["node"].get<std::string>(), json.value("arg", Json::object())};
}

}  // namespace

Command Command::from_json(const Json& json) {
  if (!json.is_object()) {
    throw Error::InvalidArgument("Command must be a JSON object, got " +
                                 std::string(json.type_name()));
  }
  Command command;
  for (const auto& [key, value] : json.items()) {
    if (key == "resume") {
      if (value.is_null()) continue;
      bool is_map = value.is_object() && !value.empty();
      if (is_map) {
        for (const auto& [id, answer] : value.items()) {
          if (!graph_internal::looks_like_interrupt_id(id)) {
            is_map = false;
            break;
          }
        }
      }
      if (is_map) {
        for (const auto& [id, answer] : value.items()) command.resume_map[id] = answer;
      } else {
        command.resume = value;
      }
    } else if (key == "update") {
      if (value.is_null()) continue;
      if (!value.is_object()) {
        throw Error::InvalidArgument("Command 'update' must be an object, got " +
                                     std::string(value.type_name()));
      }
      command.update = value;
    } else if (key == "goto") {
      const Json list = value.is_array() ? value : Json::array({value});
      for (const Json& target : list) {
        if (target.is_string()) {
          command.goto_nodes.push_back(target.get<std::string>());
        } else if (!target.is_null()) {
          command.goto_sends.push_back(send_from_json(target));
        }
      }
    } else if (key == "graph") {
      if (!value.is_null() && !value.is_string()) {
        throw Error::InvalidArgument("Command 'graph' must be a string");
      }
      if (value.is_string()) command.graph = value.get<std::string>();
    } else {
      throw Error::InvalidArgument("Unknown Command field '" + key +
                                   "' (expected resume, update, goto or graph)");
    }
  }
  return command;
}

NodeResult::NodeResult(std::vector<Send> sends) {
  Command command;
  command.goto_sends = std::move(sends);
  value_ = std::move(command);
}

const char* stream_mode_name(StreamMode mode) {
  switch (mode) {
    case StreamMode::kValues: return "values";
    case StreamMode::kUpdates: return "updates";
    case StreamMode::kCustom: return "custom";
    case StreamMode::kMessages: return "messages";
    case StreamMode::kDebug: return "debug";
    case StreamMode::kTasks: return "tasks";
    case StreamMode::kCheckpoints: return "checkpoints";
  }
  return "unknown";
}

Json RunResult::to_json() const {
  Json out = values.to_json();
  if (paused) out["__interrupt__"] = interrupts;
  return out;
}

namespace {
Json config_json(const CheckpointConfig& config) {
  Json j;
  tollgate::to_json(j, config);
  return j;
}
}  // namespace

Json StateSnapshot::to_json() const {
  Json tasks_json = Json::array();
  for (const TaskInfo& task : tasks) {
    Json t{{"id", task.id}, {"name", task.name}, {"path", task.path},
           {"interrupts", task.interrupts}};
    if (task.error) t["error"] = *task.error;
    if (task.subgraph_state) {
      t["state"] = task.subgraph_state->to_json();
    } else if (task.state) {
      t["state"] = Json{{"configurable",
                         {{"thread_id", task.state->thread_id},
                          {"checkpoint_ns", task.state->checkpoint_ns}}}};
    } else {
      t["state"] = nullptr;
    }
    if (!task.result.is_null()) t["result"] = task.result;
    tasks_json.push_back(std::move(t));
  }
  Json out{{"values", values.to_json()},
           {"next", next},
           {"tasks", std::move(tasks_json)},
           {"config", config_json(config)},
           {"metadata", metadata},
           {"created_at", created_at},
           {"parent_config", parent_config ? config_json(*parent_config) : Json()},
           {"interrupts", interrupts}};
  return out;
}

namespace graph_internal {
bool is_reserved_channel(std::string_view name) {
  return name.starts_with("__") || name.starts_with(kBranchPrefix) || name.starts_with(kJoinPrefix);
}
}  // namespace graph_internal

}  // namespace tollgate

#include "server/run_events.h"

#include <algorithm>

#include "server/ids.h"
#include "server/wire_format.h"

namespace tollgate::server {
namespace {

std::string join_ns(const std::vector<std::string>& ns) {
  std::string out;
  for (const std::string& segment : ns) {
    if (!out.empty()) out += '|';
    out += segment;
  }
  return out;
}

std::vector<std::string> split_ns(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t bar = text.find('|', start);
    if (bar == std::string::npos) bar = text.size();
    out.push_back(text.substr(start, bar - start));
    start = bar + 1;
  }
  return out;
}

const Json& empty_object() {
  static const Json object = Json::object();
  return object;
}

// The method of the v2 `messages` events, made once: one is sent per streamed token.
const std::string& messages_method() {
  static const std::string method = "messages";
  return method;
}

const Json& empty_array() {
  static const Json array = Json::array();
  return array;
}

bool has_interrupt_key(const Json& data) {
  return data.is_object() && data.contains("__interrupt__");
}

// Adds a streamed chunk to the message accumulated so far: text appended, tool call chunks
// merged by index (their argument fragments appended), other fields taken from the chunk.
void accumulate(Json& message, const Json& chunk) {
  for (auto it = chunk.begin(); it != chunk.end(); ++it) {
    if (it.key() == "content" && it->is_string() && message["content"].is_string()) {
      message["content"] = message["content"].get<std::string>() + it->get<std::string>();
    } else if (it.key() == "tool_call_chunks" && it->is_array()) {
      Json& calls = message["tool_call_chunks"];
      if (!calls.is_array()) calls = Json::array();
      for (const Json& part : *it) {
        auto same = std::find_if(calls.begin(), calls.end(), [&](const Json& call) {
          return call.value("index", -1) == part.value("index", -2);
        });
        if (same == calls.end()) {
          calls.push_back(part);
          continue;
        }
        const std::string args = part.value("args", std::string());
        if (!args.empty()) (*same)["args"] = same->value("args", std::string()) + args;
        for (const char* key : {"id", "name"}) {
          if (part.contains(key) && !part[key].is_null()) (*same)[key] = part[key];
        }
      }
    } else if (!it->is_null()) {
      message[it.key()] = *it;
    }
  }
}

// The graph's count of `key`'s unchanged items on `event` (StreamEvent::unchanged_items), if it
// gave one.
std::optional<std::size_t> unchanged_items(const StreamEvent& event, std::string_view key) {
  for (const auto& [name, count] : event.unchanged_items) {
    if (name == key) return count;
  }
  return std::nullopt;
}

}  // namespace

RunEvents::RunEvents(ServerStore& store, ThreadStreams& streams, std::shared_ptr<EventLog> log,
                     const RunRecord& record, const RunRequest& request, std::string graph_id)
    : store_(store),
      streams_(streams),
      log_(std::move(log)),
      record_(record),
      request_(request),
      graph_id_(std::move(graph_id)),
      modes_(request.stream_modes.begin(), request.stream_modes.end()),
      v2_enabled_(!request.temporary) {
  // A run continued after a restart carries on the numbering of the events already sent.
  if (const std::size_t sent = log_->size(); sent > 0) {
    bool closed = false;
    const std::vector<LogEntryPtr> last = log_->read(sent - 1, 1, &closed);
    if (!last.empty()) next_id_ = last.front()->seq + 1;
  }
}

std::vector<StreamMode> RunEvents::graph_modes() const {
  std::vector<StreamMode> out = {StreamMode::kValues, StreamMode::kUpdates};
  if (v2_enabled_ || legacy_wants("messages-tuple") || legacy_wants("messages")) {
    out.push_back(StreamMode::kMessages);
  }
  if (v2_enabled_ || legacy_wants("custom")) out.push_back(StreamMode::kCustom);
  if (v2_enabled_ || legacy_wants("tasks")) out.push_back(StreamMode::kTasks);
  if (v2_enabled_ || legacy_wants("checkpoints")) out.push_back(StreamMode::kCheckpoints);
  if (legacy_wants("debug")) out.push_back(StreamMode::kDebug);
  return out;
}

bool RunEvents::wants_subgraphs() const {
  return request_.stream_subgraphs || v2_enabled_;
}

void RunEvents::legacy(const std::string& name, const Json& data) {
  legacy_json(name, event_json(data));
}

void RunEvents::legacy_json(const std::string& name, std::string data_json, const StateRef* state) {
  legacy_entry(name, std::move(data_json), state);
}

LogEntryPtr RunEvents::legacy_entry(const std::string& name, std::string data_json,
                                    const StateRef* state) {
  LogEntry entry;
  entry.seq = next_id_++;
  entry.event = name;
  entry.data = std::move(data_json);
  if (state != nullptr)
    entry.stored = stored_with_state_ref(
        entry.data, state->at, std::min(state->size, entry.data.size() - state->at), *state);
  if (!request_.temporary) entry.id = std::to_string(entry.seq);
  auto shared = std::make_shared<const LogEntry>(std::move(entry));
  store_.append_run_event(record_.run_id, shared);
  log_->append(shared);
  return shared;
}

void RunEvents::v2(const std::string& method, const std::vector<std::string>& ns, const Json& data,
                   const std::string& node) {
  if (!v2_enabled_) return;
  streams_.emit(record_.thread_id, method, ns, data, node, record_.run_id);
}

void RunEvents::v2_json(const std::string& method, const std::vector<std::string>& ns,
                        std::string_view data_json, const std::string& node,
                        const StateRef* state) {
  if (!v2_enabled_) return;
  streams_.emit_json(record_.thread_id, method, ns, data_json, node, record_.run_id, state);
}

void RunEvents::started() {
  legacy("metadata",
         json_object("run_id", record_.run_id, "attempt", std::max(1, record_.attempts)));
  v2("lifecycle", {}, json_object("event", "running", "graph_name", graph_id_));
}

std::size_t RunEvents::CheckpointLists::bytes() const {
  std::size_t total = checkpoint_id.size();
  std::vector<const std::string*> buffers;  // the lists of one state share its text
  for (const auto& [key, list] : lists) {
    total += key.size() + list.ends.size() * sizeof(std::size_t);
    const std::string* buffer = list.text.buffer.get();
    if (buffer != nullptr && std::find(buffers.begin(), buffers.end(), buffer) == buffers.end()) {
      buffers.push_back(buffer);
      total += buffer->size();
    }
  }
  return total;
}

void RunEvents::carry_lists(CheckpointLists lists) {
  list_texts_ = std::move(lists.lists);
  list_texts_checkpoint_ = std::move(lists.checkpoint_id);
  list_texts_loop_ = 0;
  list_texts_index_ = 0;
}

ValueTexts RunEvents::list_texts_of(const State& state, const std::string& checkpoint_id) const {
  ValueTexts out;
  if (checkpoint_id.empty() || checkpoint_id != list_texts_checkpoint_) return out;
  for (const auto& [key, list] : list_texts_) {
    JsonPtr value = state.value_ptr(key);
    if (value && value->is_array()) {
      out.try_emplace(key, std::move(value), list.text.view());
    }
  }
  return out;
}

RunEvents::CheckpointLists RunEvents::take_lists() {
  CheckpointLists out;
  if (list_texts_checkpoint_.empty()) return out;
  out.checkpoint_id = std::move(list_texts_checkpoint_);
  out.lists = std::move(list_texts_);
  list_texts_checkpoint_.clear();
  list_texts_.clear();
  return out;
}

void RunEvents::write_state(std::string& out, const std::vector<std::string>& ns,
                            const State& state, std::vector<ValueSpan>* spans,
                            std::map<std::string, ListText, std::less<>>* lists,
                            const StreamEvent* shown_event, const StreamEvent* task_event) {
  const ShownState* shown = shown_ && shown_->ns == ns ? &*shown_ : nullptr;
  // The lists' texts of the loop's previous values event serve this one, or for the loop's
  // first, those of the checkpoint it loaded.
  const bool reuse = lists != nullptr && shown_event != nullptr &&
                     ((shown_event->loop == list_texts_loop_ &&
                       shown_event->values_index == list_texts_index_ + 1) ||
                      (shown_event->values_index == 1 && !shown_event->values_base.empty() &&
                       shown_event->values_base == list_texts_checkpoint_));
  // A task's state takes the kept lists: whole when it is their checkpoint's state, else as
  // far as its lists are unchanged since the loop loaded that checkpoint.
  const bool task_lists = task_event != nullptr && ns.empty() && !list_texts_checkpoint_.empty() &&
                          (task_event->checkpoint_id == list_texts_checkpoint_ ||
                           task_event->values_base == list_texts_checkpoint_);
  const std::size_t start = out.size();
  out += '{';
  for (const auto& [key, value] : state.values()) {
    if (out.size() > start + 1) out += ',';
    append_json_string(out, key);
    out += ':';
    if (!value) {
      out += "null";
      continue;
    }
    const std::size_t at = out.size();
    const auto written = [&, &value = value] {
      if (spans != nullptr) spans->push_back(ValueSpan{value, at, out.size() - at});
    };
    if (task_lists && value->is_array()) {
      const Json::array_t& items = value->get_ref<const Json::array_t&>();
      auto kept = list_texts_.find(key);
      const std::size_t unchanged = task_event->checkpoint_id == list_texts_checkpoint_
                                        ? items.size()
                                        : unchanged_items(*task_event, key).value_or(0);
      if (kept != list_texts_.end() && unchanged > 0 && unchanged <= items.size() &&
          unchanged <= kept->second.ends.size()) {
        std::vector<std::size_t> ends = kept->second.ends;  // the kept list's stay as they are
        append_array_json(out, items, kept->second.text.view(), unchanged, ends);
        written();
        continue;
      }
    }
    if (lists != nullptr && value->is_array()) {
      if (const std::optional<std::size_t> unchanged = unchanged_items(*shown_event, key)) {
        ListText list;
        auto previous = reuse ? list_texts_.find(key) : list_texts_.end();
        if (previous != list_texts_.end()) list.ends = std::move(previous->second.ends);
        append_array_json(out, value->get_ref<const Json::array_t&>(),
                          previous != list_texts_.end() ? previous->second.text.view() : "",
                          previous != list_texts_.end() ? *unchanged : 0, list.ends);
        list.text = SharedText(nullptr, at, out.size() - at);
        lists->emplace(key, std::move(list));
        written();
        continue;
      }
    }
    const ValueSpan* known = nullptr;
    if (shown != nullptr) {
      for (const ValueSpan& held : shown->values) {
        if (held.value == value) known = &held;
      }
    }
    if (known != nullptr) {
      out.append(*shown->text, known->at, known->size);
    } else {
      append_event_json(out, *value);
    }
    written();
  }
  out += '}';
  last_state_size_ = out.size() - start;
}

RunEvents::SharedText RunEvents::show_values(const StreamEvent& event, const StateRef* state,
                                             const std::string& legacy_name) {
  const bool root_loop = event.ns.empty() && event.loop != 0;
  std::vector<ValueSpan> spans;
  std::map<std::string, ListText, std::less<>> lists;
  const std::function<void(std::string&)> write = [&](std::string& out) {
    write_state(out, event.ns, *event.state, &spans, root_loop ? &lists : nullptr, &event, nullptr);
  };
  SharedText data;
  bool legacy_shown = legacy_name.empty();
  if (v2_enabled_) {
    // The state is the whole data: stored only (nobody reads the thread's stream), the event
    // is its envelope naming the checkpoint, and the state is written once, below.
    const std::function<void(std::string&)> write_stored = [](std::string&) {};
    ThreadStreams::Emitted emitted = streams_.emit_written(
        record_.thread_id, "values", event.ns, write, last_state_size_ + 256, "", record_.run_id,
        state, state != nullptr ? &write_stored : nullptr);
    if (!emitted.state_left_out) {
      const std::string* text = &emitted.entry->data;
      data = SharedText(std::shared_ptr<const std::string>(std::move(emitted.entry), text),
                        emitted.data_at, emitted.data_size);
    }
  }
  if (!data.buffer) {
    std::string out;
    out.reserve(last_state_size_ + 256);  // a state's text is about the size of the last one
    write(out);
    if (!legacy_shown) {
      // The legacy event keeps the text, and the lists are views of it: for as long as the run
      // is kept, so not with room to spare (a list written whole grows its string by doubling).
      if (out.capacity() > out.size() + out.size() / 4 + 4096) out.shrink_to_fit();
      LogEntryPtr entry = legacy_entry(legacy_name, std::move(out), state);
      const std::string* text = &entry->data;
      data =
          SharedText(std::shared_ptr<const std::string>(std::move(entry), text), 0, text->size());
      legacy_shown = true;
    } else {
      data = SharedText(std::move(out));
    }
  }
  if (!legacy_shown) legacy_json(legacy_name, std::string(data.view()), state);
  shown_ = ShownState{event.ns, data.buffer, std::move(spans)};
  if (root_loop) {
    for (auto& [key, list] : lists) list.text.buffer = data.buffer;
    list_texts_ = std::move(lists);
    list_texts_loop_ = event.loop;
    list_texts_index_ = event.values_index;
    list_texts_checkpoint_.clear();  // on_event names it when it knows
  }
  return data;
}

void RunEvents::write_task_start(std::string& out, const StreamEvent& event, std::size_t* input_at,
                                 std::size_t* input_size, bool with_state) {
  if (event.state == nullptr || !event.data.is_object()) {
    append_event_json(out, event.data);
    return;
  }
  // The task's input written in its place among the members, as its copy would be.
  const std::size_t start = out.size();
  std::size_t at = 0;
  const std::string frame = event_json_with_text(event.data, "input", "", &at);
  out.append(frame, 0, at);
  if (with_state) write_state(out, event.ns, *event.state, nullptr, nullptr, nullptr, &event);
  *input_at = at;
  *input_size = out.size() - start - at;
  out.append(frame, at);
}

void RunEvents::on_event(const StreamEvent& event) {
  graph_emitted_ = true;
  // The shown values serve the values event and the task starts that follow, and are let go
  // at any other event.
  if (event.state == nullptr) shown_.reset();
  // The root checkpoint the event before this one named, if it did: a `values` event right
  // after it shows that checkpoint's state.
  std::string named_checkpoint = std::move(checkpoint_named_);
  checkpoint_named_.clear();
  const bool root = event.ns.empty();
  const bool legacy_visible = root || request_.stream_subgraphs;
  const std::string suffix = root ? "" : "|" + join_ns(event.ns);
  switch (event.mode) {
    case StreamMode::kValues: {
      if (event.state != nullptr) {
        // The state by reference (RunConfig::state_by_reference): written out once, never
        // copied; it has no "__interrupt__".
        const bool legacy_values = legacy_wants("values") && legacy_visible;
        if (legacy_values || v2_enabled_) {
          // Stored naming the checkpoint in place of the state when that is on disk already.
          std::optional<StateRef> ref;
          if (root && refer_to_checkpoints_ && !named_checkpoint.empty()) {
            ref.emplace();
            ref->graph_id = graph_id_;
            ref->checkpoint_id = named_checkpoint;
          }
          const StateRef* state = ref ? &*ref : nullptr;
          show_values(event, state, legacy_values ? "values" + suffix : std::string());
          if (root && event.loop != 0) list_texts_checkpoint_ = std::move(named_checkpoint);
        }
        if (root && legacy_wants("messages")) {
          const auto& values = event.state->values();
          auto messages = values.find("messages");
          legacy_complete(messages != values.end() && messages->second ? *messages->second
                                                                       : null_json());
        }
        break;
      }
      // One serialisation for the legacy `values` mode and the v2 event when they read alike.
      const bool interrupted = has_interrupt_key(event.data);
      if (root && interrupted) root_interrupt_values_seen_ = true;
      std::string values_json;
      if (legacy_wants("values") && legacy_visible) {
        values_json = event_json(event.data);
        legacy_json("values" + suffix, interrupted ? std::move(values_json) : values_json);
      }
      if (root && legacy_wants("messages")) {
        legacy_complete(event.data.is_object() && event.data.contains("messages")
                            ? event.data["messages"]
                            : null_json());
      }
      if (v2_enabled_ && event.data.is_object() && (!interrupted || event.data.size() > 1)) {
        if (interrupted) {
          values_json = event_json_without(event.data, "__interrupt__");
        } else if (values_json.empty()) {
          values_json = event_json(event.data);
        }
        v2_json("values", event.ns, values_json);
      }
      break;
    }
    case StreamMode::kUpdates: {
      if (root && has_interrupt_key(event.data)) root_interrupt_update_seen_ = true;
      if (legacy_wants("updates") && legacy_visible) legacy("updates" + suffix, event.data);
      if (!event.data.is_object()) break;
      for (auto it = event.data.begin(); it != event.data.end(); ++it) {
        if (it.key() == "__interrupt__") {
          v2_interrupts(event.ns, it.value());
        } else {
          v2_finish_messages(event.ns, it.value());
          if (v2_enabled_) v2_json("updates", event.ns, event_json(it.value()), it.key());
        }
      }
      break;
    }
    case StreamMode::kMessages: {
      // The chunk and its metadata, in place (RunConfig::messages_by_reference) or in `data`.
      const bool pair = event.data.is_array() && event.data.size() == 2;
      const Json& chunk = event.message_chunk != nullptr ? *event.message_chunk
                          : pair                         ? event.data[0]
                                                         : event.data;
      const Json* metadata_given = event.message_chunk != nullptr ? event.message_metadata
                                   : pair                         ? &event.data[1]
                                                                  : nullptr;
      const Json& given = metadata_given != nullptr && metadata_given->is_object() ? *metadata_given
                                                                                   : empty_object();
      // The v2 namespace is the chunk's checkpoint namespace (the legacy metadata's).
      auto given_ns = given.find("langgraph_checkpoint_ns");
      const std::vector<std::string>& message_ns =
          given_ns == given.end() ? messages_ns(join_ns(event.ns))
          : given_ns->is_string() ? messages_ns(given_ns->get_ref<const std::string&>())
                                  : event.ns;
      const bool tuple_mode = legacy_visible && legacy_wants("messages-tuple");
      const bool messages_mode = legacy_visible && legacy_wants("messages");
      if (tuple_mode || messages_mode) {
        const LegacyMetadata& metadata = legacy_metadata(given, event.ns);
        if (tuple_mode) {
          // [chunk, metadata], the metadata's text written once for the task's chunks.
          std::string tuple = "[";
          append_event_json(tuple, chunk);
          tuple += ',';
          tuple += metadata.text;
          tuple += ']';
          legacy_json("messages" + suffix, std::move(tuple));
        }
        if (messages_mode) legacy_partial(suffix, chunk, metadata.json);
      }
      v2_message_chunk(message_ns, chunk);
      break;
    }
    case StreamMode::kCustom:
      if (legacy_wants("custom") && legacy_visible) legacy("custom" + suffix, event.data);
      v2("custom", event.ns, Json{{"payload", event.data}});
      break;
    case StreamMode::kTasks: {
      const bool legacy_tasks = legacy_wants("tasks") && legacy_visible;
      if (!legacy_tasks && !v2_enabled_) break;
      // A root task starting on the state of a checkpoint on disk is stored naming it; where
      // its input is in the data is known once the data is written.
      std::optional<StateRef> ref;
      if (root && event.state != nullptr && event.data.is_object() && refer_to_checkpoints_ &&
          !event.checkpoint_id.empty()) {
        ref = StateRef{graph_id_, event.checkpoint_id, StateView::kTaskInput, 0, 0};
      }
      const StateRef* state = ref ? &*ref : nullptr;
      const auto writer = [&](bool with_state) {
        return [&, with_state](std::string& out) {
          std::size_t input_at = 0;
          std::size_t input_size = 0;
          write_task_start(out, event, &input_at, &input_size, with_state);
          if (ref) {
            ref->at = input_at;
            ref->size = input_size;
          }
        };
      };
      const std::function<void(std::string&)> write = writer(true);
      if (v2_enabled_) {
        // When the thread's stream has no reader the event is only stored, and stored naming
        // its state's checkpoint: its input is then never written out (a long thread's state,
        // at every task of every step).
        const std::function<void(std::string&)> write_stored = writer(false);
        const ThreadStreams::Emitted emitted = streams_.emit_written(
            record_.thread_id, "tasks", event.ns, write, last_state_size_ + 256, "", record_.run_id,
            state, ref && !legacy_tasks ? &write_stored : nullptr);
        if (legacy_tasks) {
          legacy_json("tasks" + suffix,
                      emitted.entry->data.substr(emitted.data_at, emitted.data_size), state);
        }
      } else {
        std::string tasks_json;
        write(tasks_json);
        legacy_json("tasks" + suffix, std::move(tasks_json), state);
      }
      break;
    }
    case StreamMode::kCheckpoints: {
      if (legacy_wants("checkpoints") && legacy_visible) legacy("checkpoints" + suffix, event.data);
      const Json& d = event.data;
      auto member = [](const Json& object, const char* key) -> const Json* {
        if (!object.is_object()) return nullptr;
        auto it = object.find(key);
        return it == object.end() ? nullptr : &*it;
      };
      auto or_null = [](const Json* value) -> const Json& { return value ? *value : null_json(); };
      auto checkpoint_id_of = [&member](const Json* config) -> const Json* {
        if (config == nullptr || !config->is_object()) return nullptr;
        if (const Json* id = member(*config, "checkpoint_id")) return id;
        const Json* configurable = member(*config, "configurable");
        return configurable ? member(*configurable, "checkpoint_id") : nullptr;
      };
      const Json* id = member(d, "id");
      if (id == nullptr) id = checkpoint_id_of(member(d, "config"));
      if (root && id != nullptr && id->is_string()) checkpoint_named_ = id->get<std::string>();
      if (!v2_enabled_) break;
      // The v2 event names the checkpoint: its id, its parent's, its step and source.
      Json summary = Json::object();
      if (d.is_object()) {
        const Json* metadata = member(d, "metadata");
        const Json* parent_id = member(d, "parent_id");
        const Json* step = member(d, "step");
        const Json* source = member(d, "source");
        summary["id"] = or_null(id);
        summary["parent_id"] =
            or_null(parent_id ? parent_id : checkpoint_id_of(member(d, "parent_config")));
        summary["step"] = or_null(step ? step : metadata ? member(*metadata, "step") : nullptr);
        summary["source"] =
            or_null(source ? source : metadata ? member(*metadata, "source") : nullptr);
      }
      v2_json("checkpoints", event.ns, event_json(summary));
      break;
    }
    case StreamMode::kDebug:
      if (legacy_wants("debug") && legacy_visible) legacy("debug" + suffix, event.data);
      break;
  }
}

const RunEvents::LegacyMetadata& RunEvents::legacy_metadata(const Json& given,
                                                            const std::vector<std::string>& ns) {
  if (legacy_metadata_ && legacy_metadata_->given == given && legacy_metadata_->ns == ns) {
    return *legacy_metadata_;
  }
  LegacyMetadata made{given, ns, given, ""};
  Json& metadata = made.json;
  if (!metadata.contains("langgraph_checkpoint_ns"))
    metadata["langgraph_checkpoint_ns"] = join_ns(ns);
  if (!metadata.contains("checkpoint_ns"))
    metadata["checkpoint_ns"] = metadata["langgraph_checkpoint_ns"];
  if (!metadata.contains("tags")) metadata["tags"] = Json::array();
  metadata["thread_id"] = record_.thread_id;
  metadata["run_id"] = record_.run_id;
  metadata["graph_id"] = graph_id_;
  metadata["assistant_id"] = record_.assistant_id;
  made.text = event_json(metadata);
  legacy_metadata_ = std::move(made);
  return *legacy_metadata_;
}

const std::vector<std::string>& RunEvents::messages_ns(const std::string& checkpoint_ns) {
  if (checkpoint_ns != messages_ns_of_) {
    messages_ns_ = split_ns(checkpoint_ns);
    messages_ns_of_ = checkpoint_ns;
  }
  return messages_ns_;
}

void RunEvents::legacy_partial(const std::string& suffix, const Json& chunk, const Json& metadata) {
  if (!chunk.is_object() || !chunk.contains("id") || !chunk["id"].is_string()) return;
  const std::string id = chunk["id"].get<std::string>();
  auto [it, fresh] = partial_messages_.try_emplace(id, chunk);
  if (fresh) {
    legacy("messages/metadata" + suffix, Json{{id, {{"metadata", metadata}}}});
  } else {
    accumulate(it->second, chunk);
  }
  legacy("messages/partial" + suffix, Json::array({it->second}));
}

void RunEvents::legacy_complete(const Json& messages) {
  if (!completed_seeded_) {
    // Messages the thread had before this run are not news.
    completed_seeded_ = true;
    auto thread = store_.get_thread(record_.thread_id);
    if (thread && thread->values.is_object() && thread->values.contains("messages") &&
        thread->values["messages"].is_array()) {
      for (const Json& m : thread->values["messages"]) {
        if (m.is_object() && m.contains("id") && m["id"].is_string())
          completed_messages_.insert(m["id"].get<std::string>());
      }
    }
  }
  if (!messages.is_array()) return;
  Json fresh = Json::array();
  for (const Json& m : messages) {
    if (!m.is_object() || !m.contains("id") || !m["id"].is_string()) continue;
    const std::string id = m["id"].get<std::string>();
    if (!completed_messages_.insert(id).second) continue;
    partial_messages_.erase(id);
    fresh.push_back(m);
  }
  if (!fresh.empty()) legacy("messages/complete", fresh);
}

void RunEvents::v2_interrupts(const std::vector<std::string>& ns, const Json& interrupts) {
  if (!interrupts.is_array()) return;
  for (const Json& interrupt : interrupts) {
    std::string id = interrupt.value("id", std::string());
    if (!v2_interrupts_sent_.insert(id).second) continue;
    v2("input.requested", ns,
       json_object("interrupt_id", id, "payload", interrupt.value("value", Json())));
  }
}

void RunEvents::v2_message_chunk(const std::vector<std::string>& ns, const Json& chunk) {
  if (!v2_enabled_ || !chunk.is_object()) return;
  auto id_member = chunk.find("id");
  if (id_member == chunk.end() || !id_member->is_string()) return;
  const std::string& id = id_member->get_ref<const std::string&>();
  auto [it, inserted] = open_messages_.try_emplace(id);
  OpenMessage& message = it->second;
  if (inserted) {
    message.ns = ns;
    std::string type = chunk.value("type", std::string("ai"));
    if (type.size() > 12 && type.compare(type.size() - 12, 12, "MessageChunk") == 0) type = "ai";
    // Written by hand, as the members are sorted when dumped: one per streamed message.
    std::string start = "{\"event\":\"message-start\",\"id\":";
    append_json_string(start, id);
    start += ",\"role\":";
    append_json_string(start, type);
    start += ",\"run_id\":";
    append_json_string(start, record_.run_id);
    start += '}';
    v2_json(messages_method(), ns, start);
  }
  auto content = chunk.find("content");
  if (content != chunk.end() && content->is_string() &&
      !content->get_ref<const std::string&>().empty()) {
    const std::string& text = content->get_ref<const std::string&>();
    if (!message.text_started) {
      message.text_started = true;
      v2_json(messages_method(), ns,
              R"({"content":{"text":"","type":"text"},"event":"content-block-start","index":0})");
    }
    message.text += text;
    // One per token: written by hand into the event's text, as the members are sorted when
    // dumped.
    streams_.emit_written(
        record_.thread_id, messages_method(), ns,
        [&text](std::string& out) {
          out += R"({"delta":{"text":)";
          append_json_string(out, text);
          out += R"(,"type":"text-delta"},"event":"content-block-delta","index":0})";
        },
        text.size() + 80, "", record_.run_id);
  }
  auto chunks = chunk.find("tool_call_chunks");
  for (const Json& part : chunks != chunk.end() && chunks->is_array() ? *chunks : empty_array()) {
    int index = part.value("index", 0) + 1;  // text owns block 0
    auto [call, fresh] =
        message.tool_calls.try_emplace(index, json_object("id", part.value("id", Json()), "name",
                                                          part.value("name", Json()), "args", ""));
    if (fresh) {
      v2(messages_method(), ns,
         json_object("event", "content-block-start", "index", index, "content",
                     json_object("type", "tool_call_chunk", "id", call->second["id"], "name",
                                 call->second["name"], "args", "", "index", index)));
    }
    std::string args = part.value("args", std::string());
    if (!args.empty()) {
      call->second["args"].get_ref<std::string&>() += args;
      v2(messages_method(), ns,
         json_object("event", "content-block-delta", "index", index, "delta",
                     json_object("type", "tool-call-delta", "args", std::move(args))));
    }
  }
  // A whole message (not a chunk) carries its final tool calls: finish it at once.
  const bool complete = chunks == chunk.end() || chunks->empty();
  const auto calls = complete ? chunk.find("tool_calls") : chunk.end();
  if (calls != chunk.end() && !calls->empty()) {
    int index = 1;
    for (const Json& call : *calls) {
      if (!message.tool_calls.count(index)) {
        message.tool_calls[index] =
            json_object("id", call.value("id", Json()), "name", call.value("name", Json()), "args",
                        call.value("args", Json::object()));
        v2(messages_method(), ns,
           json_object(
               "event", "content-block-start", "index", index, "content",
               json_object("type", "tool_call_chunk", "id", call.value("id", Json()), "name",
                           call.value("name", Json()), "args", "", "index", index)));
      }
      ++index;
    }
  }
}

void RunEvents::v2_finish_messages(const std::vector<std::string>& ns, const Json& node_output) {
  // The node finished: every message it streamed is complete. Its final form (if the
  // node's output holds it) gives the tool calls' parsed arguments.
  std::map<std::string, const Json*, std::less<>> finals;  // in node_output
  if (node_output.is_object() && node_output.contains("messages")) {
    const Json& messages = node_output["messages"];
    auto add = [&finals](const Json& m) {
      if (!m.is_object()) return;
      const auto id = m.find("id");
      if (id != m.end() && id->is_string()) finals[id->get<std::string>()] = &m;
    };
    if (messages.is_array()) {
      for (const Json& m : messages) add(m);
    } else {
      add(messages);
    }
  }
  for (auto it = open_messages_.begin(); it != open_messages_.end();) {
    OpenMessage& message = it->second;
    const bool same_scope = ns.empty() || message.ns.size() >= ns.size();
    if (!same_scope) {
      ++it;
      continue;
    }
    // The message is done with here: its parts are moved into the events.
    const auto found = finals.find(it->first);
    const Json* final_message = found != finals.end() ? found->second : nullptr;
    if (message.text_started) {
      std::string text = std::move(message.text);
      if (final_message != nullptr) {
        const auto content = final_message->find("content");
        if (content != final_message->end() && content->is_string()) {
          text = content->get<std::string>();
        }
      }
      v2("messages", message.ns,
         json_object("event", "content-block-finish", "index", 0, "content",
                     json_object("type", "text", "text", std::move(text))));
    }
    const Json* final_calls = nullptr;
    if (final_message != nullptr) {
      const auto calls = final_message->find("tool_calls");
      if (calls != final_message->end() && calls->is_array()) final_calls = &*calls;
    }
    std::size_t position = 0;
    for (auto& [index, call] : message.tool_calls) {
      Json args;
      if (final_calls != nullptr && position < final_calls->size()) {
        args = (*final_calls)[position].value("args", Json::object());
      } else {
        args = std::move(call["args"]);
        if (args.is_string()) {
          args = Json::parse(args.get<std::string>(), nullptr, false);
          if (args.is_discarded()) args = Json::object();
        }
      }
      ++position;
      v2("messages", message.ns,
         json_object("event", "content-block-finish", "index", index, "content",
                     json_object("type", "tool_call", "id", std::move(call["id"]), "name",
                                 std::move(call["name"]), "args", std::move(args))));
    }
    v2("messages", message.ns, json_object("event", "message-finish", "reason", "stop"));
    it = open_messages_.erase(it);
  }
}

void RunEvents::finished(const RunResult& result) {
  v2_finish_messages({}, Json());
  const bool paused = result.paused || !result.interrupts.empty();
  if (paused) {
    Json interrupts = interrupts_to_json(result.interrupts);
    if (!root_interrupt_update_seen_ && legacy_wants("updates")) {
      legacy("updates", Json{{"__interrupt__", interrupts}});
    }
    if (!root_interrupt_values_seen_ && legacy_wants("values")) {
      legacy("values", Json{{"__interrupt__", interrupts}});
    }
    v2_interrupts({}, interrupts);
  }
  v2("lifecycle", {},
     json_object("event", paused ? "interrupted" : "completed", "graph_name", graph_id_));
}

void RunEvents::cancelled() {
  v2_finish_messages({}, Json());
  v2("lifecycle", {},
     Json{{"event", "failed"}, {"graph_name", graph_id_}, {"error", "Run cancelled"}});
}

void RunEvents::failed(const std::string& error, const std::string& message) {
  v2_finish_messages({}, Json());
  legacy("error", Json{{"error", error}, {"message", message}});
  v2("lifecycle", {}, Json{{"event", "failed"}, {"graph_name", graph_id_}, {"error", message}});
}

RunEvents::CheckpointLists CarriedLists::take(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  auto it = lists_.find(thread_id);
  if (it == lists_.end()) return {};
  RunEvents::CheckpointLists out = std::move(it->second);
  forget_locked(thread_id);
  return out;
}

void CarriedLists::keep(const std::string& thread_id, RunEvents::CheckpointLists lists) {
  std::lock_guard lock(mutex_);
  forget_locked(thread_id);
  const std::size_t bytes = lists.bytes();
  if (lists.checkpoint_id.empty() || bytes > bytes_kept_ || threads_ == 0) return;
  while (!order_.empty() && (order_.size() >= threads_ || bytes_ + bytes > bytes_kept_)) {
    forget_locked(order_.front());
  }
  bytes_ += bytes;
  lists_.emplace(thread_id, std::move(lists));
  order_.push_back(thread_id);
}

std::size_t CarriedLists::size() {
  std::lock_guard lock(mutex_);
  return lists_.size();
}

void CarriedLists::forget_locked(const std::string& thread_id) {
  auto it = lists_.find(thread_id);
  if (it == lists_.end()) return;
  bytes_ -= it->second.bytes();
  lists_.erase(it);
  auto at = std::find(order_.begin(), order_.end(), thread_id);
  if (at != order_.end()) order_.erase(at);
}

}  // namespace tollgate::server

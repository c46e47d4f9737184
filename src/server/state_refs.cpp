#include "server/state_refs.h"

#include <algorithm>
#include <charconv>

#include "tollgate/error.h"

namespace tollgate::server {

std::string stored_with_state_ref(std::string_view data, std::size_t at, std::size_t size,
                                  const StateRef& ref) {
  const std::string position = std::to_string(at);
  std::string out;
  out.reserve(data.size() - size + ref.checkpoint_id.size() + ref.graph_id.size() +
              position.size() + 4);
  out += ref.view == StateView::kTaskInput ? '\x02' : '\x01';
  out += ref.checkpoint_id;
  out += '\x01';
  out += ref.graph_id;
  out += '\x01';
  out += position;
  out += '\x01';
  out.append(data.substr(0, at));
  out.append(data.substr(at + size));
  return out;
}

namespace {

struct ParsedRef {
  StateView view = StateView::kValues;
  std::string checkpoint_id;
  std::string graph_id;
  std::size_t at = 0;
  std::string_view rest;
};

std::optional<ParsedRef> parse_state_ref(std::string_view stored) {
  if (!has_state_ref(stored)) return std::nullopt;
  const StateView view = stored[0] == '\x02' ? StateView::kTaskInput : StateView::kValues;
  stored.remove_prefix(1);
  std::string_view parts[3];
  for (std::string_view& part : parts) {
    const std::size_t end = stored.find('\x01');
    if (end == std::string_view::npos) return std::nullopt;
    part = stored.substr(0, end);
    stored.remove_prefix(end + 1);
  }
  ParsedRef ref;
  ref.view = view;
  ref.checkpoint_id = parts[0];
  ref.graph_id = parts[1];
  const auto result = std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), ref.at);
  if (result.ec != std::errc() || result.ptr != parts[2].data() + parts[2].size() ||
      parts[2].empty() || ref.at > stored.size() || ref.checkpoint_id.empty()) {
    return std::nullopt;
  }
  ref.rest = stored;
  return ref;
}

}  // namespace

std::size_t resolve_state_refs(std::vector<LogEntry>& events, const std::string& thread_id,
                               const StateTexts& texts) {
  std::size_t left_out = 0;
  // The last state read: a step's legacy and v2 events name the same one.
  std::string last_checkpoint;
  std::string last_graph;
  StateView last_view = StateView::kValues;
  std::optional<std::string> last_text;
  auto kept = events.begin();
  for (auto it = events.begin(); it != events.end(); ++it) {
    if (has_state_ref(it->data)) {
      const std::optional<ParsedRef> ref = parse_state_ref(it->data);
      if (!ref) {
        throw Error::Internal("server store: a stored event of thread " + thread_id +
                              " names its state's checkpoint in a malformed way");
      }
      if (ref->checkpoint_id != last_checkpoint || ref->graph_id != last_graph ||
          ref->view != last_view) {
        last_checkpoint = ref->checkpoint_id;
        last_graph = ref->graph_id;
        last_view = ref->view;
        last_text =
            texts ? texts(thread_id, ref->graph_id, ref->checkpoint_id, ref->view) : std::nullopt;
      }
      if (!last_text) {
        ++left_out;
        continue;
      }
      std::string data;
      data.reserve(ref->rest.size() + last_text->size());
      data.append(ref->rest.substr(0, ref->at));
      data.append(*last_text);
      data.append(ref->rest.substr(ref->at));
      it->data = std::move(data);
    }
    if (kept != it) *kept = std::move(*it);
    ++kept;
  }
  events.erase(kept, events.end());
  return left_out;
}

}  // namespace tollgate::server

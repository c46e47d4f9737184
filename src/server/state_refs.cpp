#include "server/state_refs.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "tollgate/error.h"

namespace tollgate::server {

std::string stored_with_state_ref(std::string_view data, std::size_t at, std::size_t size,
                                  const StateRef& ref) {
  std::string names;
  names.reserve(ref.checkpoint_id.size() + ref.graph_id.size() + 3);
  names += ref.view == StateView::kTaskInput ? '\x02' : '\x01';
  names += ref.checkpoint_id;
  names += '\x01';
  names += ref.graph_id;
  names += '\x01';
  std::string out;
  out.reserve(data.size() - size + names.size() + 24);
  append_state_ref_head(out, names, at);
  out.append(data.substr(0, at));
  out.append(data.substr(at + size));
  return out;
}

std::optional<StoredStateRef> split_state_ref(std::string_view stored) {
  if (!has_state_ref(stored)) return std::nullopt;
  std::string_view parts[3];
  std::size_t from = 1;
  for (std::string_view& part : parts) {
    const std::size_t end = stored.find('\x01', from);
    if (end == std::string_view::npos) return std::nullopt;
    part = stored.substr(from, end - from);
    from = end + 1;
  }
  StoredStateRef ref;
  ref.names = stored.substr(0, 1 + parts[0].size() + 1 + parts[1].size() + 1);
  ref.rest = stored.substr(from);
  const auto result = std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), ref.at);
  if (result.ec != std::errc() || result.ptr != parts[2].data() + parts[2].size() ||
      parts[2].empty() || ref.at > ref.rest.size() || parts[0].empty()) {
    return std::nullopt;
  }
  return ref;
}

void append_state_ref_head(std::string& out, std::string_view names, std::size_t at) {
  std::array<char, 24> digits{};
  const auto result = std::to_chars(digits.data(), digits.data() + digits.size(), at);
  out.append(names);
  out.append(digits.data(), static_cast<std::size_t>(result.ptr - digits.data()));
  out += '\x01';
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
  const std::optional<StoredStateRef> split = split_state_ref(stored);
  if (!split) return std::nullopt;
  ParsedRef ref;
  ref.view = split->names[0] == '\x02' ? StateView::kTaskInput : StateView::kValues;
  std::string_view names = split->names.substr(1);
  const std::size_t end = names.find('\x01');
  ref.checkpoint_id = names.substr(0, end);
  ref.graph_id = names.substr(end + 1, names.size() - end - 2);
  ref.at = split->at;
  ref.rest = split->rest;
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

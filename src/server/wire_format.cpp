#include "server/wire_format.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>

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

namespace {

// The length of the well-formed UTF-8 sequence at `at` (Unicode's table 3-7: no overlong forms,
// no surrogates, nothing past U+10FFFF), or 0 when it is not one.
std::size_t utf8_sequence(std::string_view text, std::size_t at) {
  auto byte = [&text](std::size_t i) {
    return i < text.size() ? static_cast<unsigned char>(text[i]) : 0U;
  };
  auto continuation = [&byte](std::size_t i, unsigned low = 0x80, unsigned high = 0xBF) {
    return byte(i) >= low && byte(i) <= high;
  };
  const unsigned lead = byte(at);
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(at + 1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const unsigned low = lead == 0xE0 ? 0xA0 : 0x80;
    const unsigned high = lead == 0xED ? 0x9F : 0xBF;
    return continuation(at + 1, low, high) && continuation(at + 2) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const unsigned low = lead == 0xF0 ? 0x90 : 0x80;
    const unsigned high = lead == 0xF4 ? 0x8F : 0xBF;
    return continuation(at + 1, low, high) && continuation(at + 2) && continuation(at + 3) ? 4
                                                                                          : 0;
  }
  return 0;
}

// Writes JSON text at the end of a string. The string's size runs ahead of the text as room
// to write in (a check and a store per byte, where std::string's own appends are calls);
// finish() cuts it back to the text.
class JsonOut {
 public:
  explicit JsonOut(std::string& out) : out_(out), start_(out.size()), length_(out.size()) {}
  JsonOut(const JsonOut&) = delete;
  JsonOut& operator=(const JsonOut&) = delete;
  ~JsonOut() { finish(); }

  void finish() { out_.resize(length_); }
  std::size_t length() const { return length_; }  // of the string's text so far
  void cut(std::size_t length) { length_ = length; }

  [[gnu::always_inline]] void put(char c) {
    room(1);
    out_[length_++] = c;
  }
  [[gnu::always_inline]] void put(const char* text, std::size_t size) {
    room(size);
    std::memcpy(out_.data() + length_, text, size);
    length_ += size;
  }
  void put(std::string_view text) { put(text.data(), text.size()); }

  // Appends `value` as Json::dump(-1, ' ', false, replace) writes it, byte for byte: the same
  // escapes, members in the object's order, integers in decimal; floats, binary values and
  // text that is not well-formed UTF-8 (replaced by the serializer) are left to the serializer.
  void value(const Json& value) {
    switch (value.type()) {
      case Json::value_t::null:
        put("null", 4);
        return;
      case Json::value_t::boolean:
        if (value.get<bool>()) {
          put("true", 4);
        } else {
          put("false", 5);
        }
        return;
      case Json::value_t::number_integer:
        number(value.get<std::int64_t>());
        return;
      case Json::value_t::number_unsigned:
        number(value.get<std::uint64_t>());
        return;
      case Json::value_t::string:
        string(value.get_ref<const std::string&>());
        return;
      case Json::value_t::array: {
        put('[');
        bool first = true;
        for (const Json& item : value.get_ref<const Json::array_t&>()) {
          if (!first) put(',');
          first = false;
          this->value(item);
        }
        put(']');
        return;
      }
      case Json::value_t::object: {
        put('{');
        bool first = true;
        for (const auto& [key, member] : value.get_ref<const Json::object_t&>()) {
          if (!first) put(',');
          first = false;
          string(key);
          put(':');
          this->value(member);
        }
        put('}');
        return;
      }
      case Json::value_t::number_float:
      case Json::value_t::binary:
      case Json::value_t::discarded:
        break;
    }
    put(value.dump(-1, ' ', false, Json::error_handler_t::replace));
  }

  // Whether `text` is written as it is between quotes: every byte is printable ASCII other
  // than '"' and '\\'.
  static bool plain(std::string_view text) {
    std::size_t i = 0;
    for (; i + 8 <= text.size(); i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, text.data() + i, 8);
      if (!plain_word(word)) return false;
    }
    if (i == text.size()) return true;  // (an empty view's data() may be null)
    std::uint64_t word = 0x2020202020202020ULL;
    std::memcpy(&word, text.data() + i, text.size() - i);
    return plain_word(word);
  }

  // `text` as a JSON string, as value(Json(text)) writes it.
  void string(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    const std::size_t start = length_;
    put('"');
    std::size_t copied = 0;  // text before this index is written
    std::size_t i = 0;
    while (i < text.size()) {
      // Eight bytes at a time (the last few padded with spaces): most text has nothing to
      // escape.
      std::uint64_t word = 0x2020202020202020ULL;
      if (text.size() - i >= 8) {
        std::memcpy(&word, text.data() + i, 8);
      } else {
        std::memcpy(&word, text.data() + i, text.size() - i);
      }
      if (plain_word(word)) {
        i += 8;
        continue;
      }
      const std::size_t stop = std::min(i + 8, text.size());
      for (; i < stop; ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte >= 0x80) {
          const std::size_t length = utf8_sequence(text, i);
          if (length == 0) {
            // The serializer's replacement of malformed bytes is its own: let it write it.
            cut(start);
            put(Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace));
            return;
          }
          i += length - 1;  // may run past `stop`: the next word starts after the sequence
          continue;
        }
        if (byte >= 0x20 && byte != '"' && byte != '\\') continue;
        put(text.data() + copied, i - copied);
        copied = i + 1;
        // The serializer's two-letter escapes, then \u00XX for the other control bytes.
        static constexpr std::string_view kEscaped = "\b\t\n\f\r\"\\";
        static constexpr std::string_view kLetters = "btnfr\"\\";
        if (const std::size_t at = kEscaped.find(static_cast<char>(byte));
            at != std::string_view::npos) {
          const char escape[] = {'\\', kLetters[at]};
          put(escape, sizeof escape);
        } else {
          const char escape[] = {'\\', 'u', '0', '0', kHex[byte >> 4], kHex[byte & 0xF]};
          put(escape, sizeof escape);
        }
      }
    }
    put(text.data() + copied, text.size() - copied);
    put('"');
  }

 private:
  // Whether none of the 8 bytes of `word` needs a second look in a JSON string: each is
  // printable ASCII other than '"' and '\\'. (The classic zero-byte tests, exact for "any
  // byte" when no byte has its high bit set, which the first term rules out.)
  static bool plain_word(std::uint64_t word) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
    auto has_zero = [](std::uint64_t x) { return (x - kOnes) & ~x & kHighs; };
    const std::uint64_t below_space = (word - kOnes * 0x20) & ~word & kHighs;
    return ((word & kHighs) | below_space | has_zero(word ^ (kOnes * '"')) |
            has_zero(word ^ (kOnes * '\\'))) == 0;
  }

  template <typename Integer>
  void number(Integer n) {
    char digits[24];
    const auto [end, error] = std::to_chars(digits, digits + sizeof digits, n);
    put(digits, static_cast<std::size_t>(end - digits));
  }

  // Room for `size` more bytes, and as much again as this writer wrote (so a long text grows
  // the string a logarithmic number of times, and a short one appended to a long string
  // zero-fills little).
  [[gnu::always_inline]] void room(std::size_t size) {
    if (out_.size() - length_ < size) grow(size);
  }
  [[gnu::noinline]] void grow(std::size_t size) {
    out_.resize(length_ + std::max(size + 64, length_ - start_));
  }

  std::string& out_;
  std::size_t start_;   // where this writer's text begins
  std::size_t length_;  // where it ends so far
};

}  // namespace

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

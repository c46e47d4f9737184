#include "server/event_batch.h"

#include <array>
#include <charconv>

#include "server/wire_format.h"
#include "tollgate/error.h"
#include "tollgate/json.h"

namespace tollgate::server {
namespace {

constexpr std::size_t kFields = 5;  // event, data, id, channel, namespace

void append_number(std::string& out, std::uint64_t value) {
  std::array<char, 24> digits{};
  const auto result = std::to_chars(digits.data(), digits.data() + digits.size(), value);
  out.append(digits.data(), result.ptr);
}

// Reads "<number>" followed by `end` from the front of `text`; false if it is not there.
bool read_number(std::string_view& text, char end, std::uint64_t& value) {
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc() || result.ptr == text.data() ||
      result.ptr == text.data() + text.size() || *result.ptr != end) {
    return false;
  }
  text.remove_prefix(static_cast<std::size_t>(result.ptr - text.data()) + 1);
  return true;
}

}  // namespace

void append_event_frame(std::string& out, const LogEntry& entry) {
  std::string ns;
  if (!entry.ns.empty()) {
    ns += '[';
    for (const std::string& segment : entry.ns) {
      if (ns.size() > 1) ns += ',';
      append_json_string(ns, segment);
    }
    ns += ']';
  }
  const std::string_view data = entry.stored.empty() ? entry.data : entry.stored;
  const std::array<std::string_view, kFields> fields = {entry.event, data, entry.id, entry.channel,
                                                        ns};
  // Sequence numbers start at 1; a negative one would not survive the unsigned frame.
  append_number(out, static_cast<std::uint64_t>(entry.seq < 0 ? 0 : entry.seq));
  for (std::string_view field : fields) {
    out += ' ';
    append_number(out, field.size());
  }
  out += '\n';
  for (std::string_view field : fields) out.append(field);
}

void read_event_batch(std::string_view batch, std::int64_t after_seq, const std::string& what,
                      std::vector<LogEntry>& out) {
  auto malformed = [&what] {
    return Error::Internal("server store: the stored events of " + what + " are malformed");
  };
  while (!batch.empty()) {
    std::uint64_t seq = 0;
    std::array<std::uint64_t, kFields> sizes{};
    if (!read_number(batch, ' ', seq)) throw malformed();
    for (std::size_t i = 0; i < kFields; ++i) {
      if (!read_number(batch, i + 1 < kFields ? ' ' : '\n', sizes[i])) throw malformed();
    }
    std::array<std::string_view, kFields> fields;
    for (std::size_t i = 0; i < kFields; ++i) {
      if (sizes[i] > batch.size()) throw malformed();
      fields[i] = batch.substr(0, sizes[i]);
      batch.remove_prefix(sizes[i]);
    }
    if (static_cast<std::int64_t>(seq) <= after_seq) continue;
    LogEntry& entry = out.emplace_back();
    entry.seq = static_cast<std::int64_t>(seq);
    entry.event = fields[0];
    entry.data = fields[1];
    entry.id = fields[2];
    entry.channel = fields[3];
    if (!fields[4].empty()) {
      const Json ns = Json::parse(fields[4], nullptr, /*allow_exceptions=*/false);
      if (!ns.is_array()) throw malformed();
      for (const Json& segment : ns) {
        if (!segment.is_string()) throw malformed();
        entry.ns.push_back(segment.get<std::string>());
      }
    }
  }
}

}  // namespace tollgate::server

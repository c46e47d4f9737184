#include "server/event_batch.h"

#include <array>
#include <charconv>
#include <optional>

#include "server/event_envelope.h"
#include "server/state_refs.h"
#include "server/wire_format.h"
#include "tollgate/error.h"
#include "tollgate/json.h"

namespace tollgate::server {
namespace {

constexpr std::size_t kFields = 5;  // event, data, id, channel, namespace

void append_number(std::string& out, std::uint64_t value) {
  std::array<char, 24> digits{};
  const auto result = std::to_chars(digits.data(), digits.data() + digits.size(), value);
  out.append(digits.data(), static_cast<std::size_t>(result.ptr - digits.data()));
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

constexpr std::string_view kEnvelopesLine = "e\n";

// The envelope's head of `entry` and its tail, in buffers of the calling thread (no allocation
// once they have grown).
std::string_view envelope_head(const LogEntry& entry) {
  thread_local std::string head;
  head.clear();
  append_envelope_head(head, entry.id, entry.event);
  return head;
}

std::string_view envelope_tail(std::int64_t seq) {
  thread_local std::string tail;
  tail.clear();
  append_envelope_tail(tail, seq);
  return tail;
}

// An event's data (or its stored form) without its envelope's head and tail: the reference
// to its state's checkpoint, if any, its position moved back by the head, then the middle.
struct WithoutEnvelope {
  std::string_view names;  // of the reference; empty when there is none
  std::array<char, 24> at{};
  std::size_t at_size = 0;
  std::string_view middle;

  std::size_t size() const {
    return names.empty() ? middle.size() : names.size() + at_size + 1 + middle.size();
  }
  void append_to(std::string& out) const {
    if (!names.empty()) {
      out.append(names);
      out.append(at.data(), at_size);
      out += '\x01';
    }
    out.append(middle);
  }
};

// `data` of `entry` without its envelope's head and tail; std::nullopt when it has none.
std::optional<WithoutEnvelope> without_envelope(const LogEntry& entry, std::string_view data) {
  const std::size_t head = entry.envelope_head;
  const std::size_t tail = entry.envelope_tail;
  if (head == 0 || tail == 0 || entry.seq < 0) return std::nullopt;
  std::optional<StoredStateRef> ref;
  if (has_state_ref(data)) {
    ref = split_state_ref(data);
    if (!ref) return std::nullopt;
  }
  const std::string_view envelope = ref ? ref->rest : data;
  if (envelope.size() < head + tail) return std::nullopt;
  WithoutEnvelope out;
  out.middle = envelope.substr(head, envelope.size() - head - tail);
  if (ref) {
    if (ref->at < head || ref->at > envelope.size() - tail) return std::nullopt;
    out.names = ref->names;
    const auto result = std::to_chars(out.at.data(), out.at.data() + out.at.size(), ref->at - head);
    out.at_size = static_cast<std::size_t>(result.ptr - out.at.data());
  }
  return out;
}

// Writes into `entry` the data `kept` stood for: its envelope around it (without_envelope).
// False when `kept` names a checkpoint in a malformed way.
bool put_with_envelope(LogEntry& entry, std::string_view kept) {
  const std::string_view head = envelope_head(entry);
  const std::string_view tail = envelope_tail(entry.seq);
  std::string& data = entry.data;
  data.clear();
  data.reserve(kept.size() + head.size() + tail.size() + 8);
  if (const std::optional<StoredStateRef> ref = split_state_ref(kept)) {
    append_state_ref_head(data, ref->names, ref->at + head.size());
    kept = ref->rest;
  } else if (has_state_ref(kept)) {
    return false;
  }
  data += head;
  data += kept;
  data += tail;
  entry.envelope_head = static_cast<std::uint32_t>(head.size());
  entry.envelope_tail = static_cast<std::uint32_t>(tail.size());
  return true;
}

}  // namespace

void begin_event_batch(std::string& out, BatchFormat format) {
  if (format == BatchFormat::kEnvelopes) out += kEnvelopesLine;
}

void append_event_frame(std::string& out, const LogEntry& entry, BatchFormat format) {
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
  std::optional<WithoutEnvelope> kept;
  if (format == BatchFormat::kEnvelopes) kept = without_envelope(entry, data);
  const std::array<std::size_t, kFields> sizes = {entry.event.size(),
                                                  kept ? kept->size() : data.size(),
                                                  entry.id.size(), entry.channel.size(), ns.size()};
  // Sequence numbers start at 1; a negative one would not survive the unsigned frame.
  append_number(out, static_cast<std::uint64_t>(entry.seq < 0 ? 0 : entry.seq));
  for (std::size_t size : sizes) {
    out += ' ';
    append_number(out, size);
  }
  if (format == BatchFormat::kEnvelopes) out += kept ? " 1" : " 0";
  out += '\n';
  out += entry.event;
  if (kept) {
    kept->append_to(out);
  } else {
    out += data;
  }
  out += entry.id;
  out += entry.channel;
  out += ns;
}

void read_event_batch(std::string_view batch, std::int64_t after_seq, const std::string& what,
                      std::vector<LogEntry>& out) {
  auto malformed = [&what] {
    return Error::Internal("server store: the stored events of " + what + " are malformed");
  };
  const bool envelopes = batch.starts_with(kEnvelopesLine);
  if (envelopes) batch.remove_prefix(kEnvelopesLine.size());
  while (!batch.empty()) {
    std::uint64_t seq = 0;
    std::array<std::uint64_t, kFields> sizes{};
    std::uint64_t enveloped = 0;
    if (!read_number(batch, ' ', seq)) throw malformed();
    for (std::size_t i = 0; i < kFields; ++i) {
      const char end = i + 1 < kFields || envelopes ? ' ' : '\n';
      if (!read_number(batch, end, sizes[i])) throw malformed();
    }
    if (envelopes && (!read_number(batch, '\n', enveloped) || enveloped > 1)) throw malformed();
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
    entry.id = fields[2];
    entry.channel = fields[3];
    if (enveloped == 1) {
      if (!put_with_envelope(entry, fields[1])) throw malformed();
    } else {
      entry.data = fields[1];
    }
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

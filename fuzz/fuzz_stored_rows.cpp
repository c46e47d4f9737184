// What the database hands back is input too (a damaged file, a row of another build): a
// checkpoint header (formats 1, 2 and 3), a stored value, a row of several pending writes and a
// thread's event batch, of any bytes. Each either reads or fails with an Error; a header that
// reads is written again in format 3 and must read back the same; a value reads as nlohmann's
// MessagePack reader reads it.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

#include "checkpoint/header_codec.h"
#include "checkpoint/saver_rows.h"
#include "checkpoint/value_store.h"
#include "fuzz_input.h"
#include "server/event_batch.h"
#include "server/state_refs.h"
#include "tollgate/error.h"

namespace {

void header(const std::uint8_t* data, std::size_t size) {
  using namespace tollgate::checkpoint_internal;
  tollgate::Checkpoint read;
  ValueRefs refs;
  try {
    decode_header(data, size, read, refs);
  } catch (const tollgate::Error&) {
    return;
  }
  const std::vector<std::uint8_t> written = encode_header(read, refs);
  tollgate::Checkpoint again;
  ValueRefs again_refs;
  decode_header(written.data(), written.size(), again, again_refs);  // an Error here is a bug
  if (!(again == read) || !(again_refs == refs)) {
    std::abort();  // a header that reads but does not survive being written again
  }
}

// Equal, and of the same type at every level (== holds between a signed and an unsigned 5).
bool same_types(const tollgate::Json& a, const tollgate::Json& b) {
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (!a.is_structured()) return a == b;
  for (auto x = a.begin(), y = b.begin(); x != a.end(); ++x, ++y) {
    if ((a.is_object() && x.key() != y.key()) || !same_types(*x, *y)) return false;
  }
  return true;
}

void value(const std::uint8_t* data, std::size_t size) {
  // nlohmann's reader recurses once per level: a long input could nest deeper than its stack.
  if (size > 4096) return;
  std::optional<tollgate::Json> expected;
  try {
    expected = tollgate::Json::from_msgpack(data, data + size);
  } catch (const tollgate::Json::exception&) {
  }
  try {
    const tollgate::Json decoded = tollgate::checkpoint_internal::decode_value(data, size);
    if (!expected || !same_types(decoded, *expected)) std::abort();
  } catch (const tollgate::Error&) {
    if (expected) std::abort();
  }
}

// A row of `writes` holding several writes (saver_rows.h), of 2 to 5 by the first byte.
void writes(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > 4096) return;  // nlohmann-free, but kept as short as value()'s
  using tollgate::checkpoint_internal::StoredWrite;
  std::vector<StoredWrite> rows;
  rows.push_back(
      StoredWrite{"task", "", std::vector<std::uint8_t>(data + 1, data + size), 2 + data[0] % 4});
  tollgate::CheckpointTuple tuple;
  try {
    tollgate::checkpoint_internal::decode_pending_writes(std::move(rows), tuple);
  } catch (const tollgate::Error&) {
    return;
  }
  if (tuple.pending_writes.size() != static_cast<std::size_t>(2 + data[0] % 4)) std::abort();
}

void batch(const std::uint8_t* data, std::size_t size) {
  std::vector<tollgate::server::LogEntry> events;
  try {
    tollgate::server::read_event_batch(tollgate::fuzz::as_string(data, size), 0, "thread t",
                                       events);
  } catch (const tollgate::Error&) {
    return;
  }
  // Written again in either format (a thread's: the envelopes it read without their heads and
  // tails), the events read back as they were read.
  for (const auto format : {tollgate::server::BatchFormat::kPlain,
                            tollgate::server::BatchFormat::kEnvelopes}) {
    std::string written;
    tollgate::server::begin_event_batch(written, format);
    for (const tollgate::server::LogEntry& entry : events) {
      tollgate::server::append_event_frame(written, entry, format);
    }
    std::vector<tollgate::server::LogEntry> again;
    tollgate::server::read_event_batch(written, 0, "thread t", again);
    if (again.size() != events.size()) std::abort();
    for (std::size_t i = 0; i < events.size(); ++i) {
      const auto& a = again[i];
      const auto& b = events[i];
      if (a.seq != b.seq || a.event != b.event || a.data != b.data || a.id != b.id ||
          a.channel != b.channel || a.ns != b.ns) {
        std::abort();
      }
    }
  }
  // The events that name a checkpoint in place of their state (state_refs.h) read back with
  // one, or the batch is an Error; none keeps its stored form.
  const tollgate::server::StateTexts texts = [](const std::string&, const std::string&,
                                                const std::string& checkpoint_id,
                                                tollgate::server::StateView) {
    return checkpoint_id.size() % 2 == 0 ? std::optional<std::string>("{\"a\":1}") : std::nullopt;
  };
  try {
    tollgate::server::resolve_state_refs(events, "t", texts);
  } catch (const tollgate::Error&) {
    return;
  }
  for (const auto& entry : events) {
    if (tollgate::server::has_state_ref(entry.data)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  header(data, size);
  value(data, size);
  writes(data, size);
  batch(data, size);
  return 0;
}

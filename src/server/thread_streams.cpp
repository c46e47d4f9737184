#include "server/thread_streams.h"

#include <algorithm>

#include "server/event_envelope.h"
#include "server/ids.h"
#include "server/wire_format.h"
#include "tollgate/json.h"

namespace tollgate::server {

ThreadStreams::Stream& ThreadStreams::stream_locked(const std::string& thread_id) {
  auto it = streams_.find(thread_id);
  if (it != streams_.end()) return it->second;
  if (streams_.size() >= sweep_at_) drop_idle_locked();
  // Without the events stored so far: a run appending to the thread needs only the seq they
  // end at. A reader gets them with log().
  Stream stream;
  stream.log = std::make_shared<EventLog>();
  stream.last_seq = store_.last_thread_event_seq(thread_id);
  stream.stored_through = stream.last_seq;
  return streams_.emplace(thread_id, std::move(stream)).first->second;
}

void ThreadStreams::drop_idle_locked() {
  // Idle: nobody but this map holds the log (no open /stream/events reader). The next sweep
  // waits for kIdleLogsKept more logs than survive this one, so sweeps cost amortized O(1)
  // per new log however many logs are being read.
  for (auto it = streams_.begin(); it != streams_.end();) {
    if (it->second.log.use_count() == 1 && !it->second.held) {
      it = streams_.erase(it);
    } else {
      ++it;
    }
  }
  sweep_at_ = streams_.size() + kIdleLogsKept;
}

std::shared_ptr<EventLog> ThreadStreams::log(const std::string& thread_id) {
  std::vector<LogEntry> stored;  // the events the log lacks, read so far: those through `read`
  std::int64_t read = 0;
  for (;;) {
    std::int64_t through = 0;
    {
      std::lock_guard lock(mutex_);
      Stream& stream = stream_locked(thread_id);
      if (stream.stored_through == 0) return stream.log;
      through = stream.stored_through;
    }
    if (through < read) {  // the thread's events begin again (it was deleted and made anew)
      stored.clear();
      read = 0;
    }
    if (through > read) {
      // The events the log lacks, read without the lock: writing a long thread's states back
      // from its checkpoints takes a while, and every run's events wait for the lock. A second
      // round reads only what was stored meanwhile.
      for (LogEntry& entry : store_.thread_events(thread_id, read)) {
        if (entry.seq <= through) stored.push_back(std::move(entry));
      }
      read = through;
    }
    std::lock_guard lock(mutex_);
    Stream& stream = stream_locked(thread_id);
    if (stream.stored_through == 0) return stream.log;  // another reader completed it
    // More events were stored only (nobody read the log), or the log was made again (a run's
    // end let it go) after more events: read those too.
    if (stream.stored_through != through) continue;
    // Nobody reads the log yet (this is its first reader): a new one with the stored events
    // first, then those appended since, takes its place.
    auto log = std::make_shared<EventLog>();
    for (LogEntry& entry : stored) log->append(std::move(entry));
    bool closed = false;
    for (LogEntryPtr& entry : stream.log->read(0, stream.log->size(), &closed)) {
      log->append(std::move(entry));
    }
    stream.log = std::move(log);
    stream.stored_through = 0;
    return stream.log;
  }
}

namespace {

std::string channel_of(const std::string& method) {
  if (method == "input.requested" || method == "input.answered") return "input";
  return method;
}

// The event's envelope (event_envelope.h) around its data, which `write` appends; the sizes of
// its head and tail go to `entry`, whose stored form leaves them out.
std::string envelope_json(const std::string& event_id, std::int64_t seq, const std::string& method,
                          const std::vector<std::string>& ns,
                          const std::function<void(std::string&)>& write,
                          std::size_t data_size_hint, const std::string& node, std::size_t* data_at,
                          std::size_t* data_size, LogEntry& entry) {
  std::string out;
  // The data and the names, escaped, with the fixed text and the room a name's writer takes.
  std::size_t size = data_size_hint + 2 * (event_id.size() + method.size() + node.size()) + 384;
  for (const std::string& segment : ns) size += 2 * segment.size() + 4;
  out.reserve(size);
  append_envelope_head(out, event_id, method);
  *data_at = out.size();
  entry.envelope_head = static_cast<std::uint32_t>(out.size());
  write(out);
  *data_size = out.size() - *data_at;
  out += ",\"namespace\":[";
  for (std::size_t i = 0; i < ns.size(); ++i) {
    if (i > 0) out += ',';
    append_json_string(out, ns[i]);
  }
  out += ']';
  if (!node.empty()) {
    out += ",\"node\":";
    append_json_string(out, node);
  }
  out += ",\"timestamp\":";
  out += std::to_string(now_millis());
  out += '}';
  const std::size_t tail_at = out.size();
  append_envelope_tail(out, seq);
  entry.envelope_tail = static_cast<std::uint32_t>(out.size() - tail_at);
  return out;
}

}  // namespace

std::int64_t ThreadStreams::emit(const std::string& thread_id, const std::string& method,
                                 const std::vector<std::string>& ns, const Json& data,
                                 const std::string& node, const std::string& run_id) {
  std::string channel = channel_of(method);
  if (method == "custom" && data.is_object() && data.contains("name") && data["name"].is_string()) {
    channel = "custom:" + data["name"].get<std::string>();
  }
  const std::string data_json = event_json(data);
  return append(
             thread_id, method, std::move(channel), ns, [&](std::string& out) { out += data_json; },
             data_json.size(), node, run_id)
      .entry->seq;
}

std::int64_t ThreadStreams::emit_json(const std::string& thread_id, const std::string& method,
                                      const std::vector<std::string>& ns,
                                      std::string_view data_json, const std::string& node,
                                      const std::string& run_id, const StateRef* state) {
  return append(
             thread_id, method, channel_of(method), ns, [&](std::string& out) { out += data_json; },
             data_json.size(), node, run_id, state)
      .entry->seq;
}

ThreadStreams::Emitted ThreadStreams::emit_written(
    const std::string& thread_id, const std::string& method, const std::vector<std::string>& ns,
    const std::function<void(std::string&)>& write, std::size_t data_size_hint,
    const std::string& node, const std::string& run_id, const StateRef* state,
    const std::function<void(std::string&)>* write_stored) {
  return append(thread_id, method, channel_of(method), ns, write, data_size_hint, node, run_id,
                state, write_stored);
}

ThreadStreams::Emitted ThreadStreams::append(
    const std::string& thread_id, const std::string& method, std::string channel,
    const std::vector<std::string>& ns, const std::function<void(std::string&)>& write,
    std::size_t data_size_hint, const std::string& node, const std::string& run_id,
    const StateRef* state, const std::function<void(std::string&)>* write_stored) {
  std::lock_guard lock(mutex_);
  Stream& stream = stream_locked(thread_id);
  // Nobody reads the log (only this map holds it), it holds no event (every earlier one is in
  // the store only) and none is held back: a reader that comes later reads this event from the
  // store with the earlier ones (log()), so it is not kept here.
  const bool store_only = stream.log.use_count() == 1 && !stream.held && stream.held_back.empty() &&
                          stream.stored_through == stream.last_seq && stream.log->size() == 0;
  const bool state_left_out = store_only && state != nullptr && write_stored != nullptr;
  const std::int64_t seq = ++stream.last_seq;
  LogEntry entry;
  entry.seq = seq;
  entry.event = method;
  entry.ns = ns;
  entry.channel = std::move(channel);
  entry.id = (method == "lifecycle" && ns.empty() && !run_id.empty())
                 ? "synth:" + run_id + ":" + std::to_string(seq)
                 : std::to_string(seq);
  Emitted emitted;
  entry.data = envelope_json(entry.id, seq, method, ns, state_left_out ? *write_stored : write,
                             data_size_hint, node, &emitted.data_at, &emitted.data_size, entry);
  if (state != nullptr) {
    const std::size_t at = std::min(state->at, emitted.data_size);
    const std::size_t size = state_left_out ? 0 : std::min(state->size, emitted.data_size - at);
    entry.stored = stored_with_state_ref(entry.data, emitted.data_at + at, size, *state);
    if (state_left_out) {
      // The stored form is all there is: read back (from the store's queue too), its state is
      // written in from the checkpoint.
      entry.data = std::move(entry.stored);
      entry.stored.clear();
      emitted.data_at = 0;
      emitted.data_size = 0;
      emitted.state_left_out = true;
    }
  }
  emitted.entry = std::make_shared<const LogEntry>(std::move(entry));
  store_.append_thread_event(thread_id, emitted.entry);
  if (store_only) {
    stream.stored_through = seq;
  } else if (stream.held) {
    stream.held_back.push_back(emitted.entry);
  } else {
    stream.log->append(emitted.entry);
  }
  return emitted;
}

std::int64_t ThreadStreams::current_seq(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  return stream_locked(thread_id).last_seq;
}

void ThreadStreams::forget(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  streams_.erase(thread_id);
}

void ThreadStreams::hold(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  stream_locked(thread_id).held = true;
  // Held back from the store's writes too: other replicas read the stored events.
  store_.hold_thread_events(thread_id);
}

void ThreadStreams::release(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  store_.release_thread_events(thread_id);
  auto it = streams_.find(thread_id);
  if (it == streams_.end()) return;
  it->second.held = false;
  for (LogEntryPtr& entry : it->second.held_back) it->second.log->append(std::move(entry));
  it->second.held_back.clear();
  // A run's end: a log nobody reads goes, so that a thread's events are not kept in memory
  // from run to run (a long thread's are hundreds of megabytes); the next run reads its seq.
  if (it->second.log.use_count() == 1) streams_.erase(it);
}

void ThreadStreams::catch_up(const std::string& thread_id) {
  std::int64_t after = 0;
  {
    std::lock_guard lock(mutex_);
    auto it = streams_.find(thread_id);
    if (it == streams_.end()) return;  // read from the store when it is next used
    after = it->second.last_seq;
  }
  // Read without the lock (a query must not hold up every run's events); what arrived
  // meanwhile is skipped by seq below.
  std::int64_t last_stored = after;
  std::vector<LogEntry> entries = store_.thread_events(thread_id, after, &last_stored);
  std::lock_guard lock(mutex_);
  auto it = streams_.find(thread_id);
  if (it == streams_.end()) return;
  for (LogEntry& entry : entries) {
    if (entry.seq <= it->second.last_seq) continue;
    it->second.last_seq = entry.seq;
    it->second.log->append(std::move(entry));
  }
  it->second.last_seq = std::max(it->second.last_seq, last_stored);
}

void ThreadStreams::catch_up_read() {
  std::vector<std::string> read;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [thread_id, stream] : streams_) {
      if (stream.log.use_count() > 1) read.push_back(thread_id);
    }
  }
  for (const std::string& thread_id : read) catch_up(thread_id);
}

std::size_t ThreadStreams::logs_in_memory() {
  std::lock_guard lock(mutex_);
  return streams_.size();
}

bool StreamFilter::matches(const LogEntry& entry) const {
  if (since >= 0 && entry.seq <= since) return false;
  bool channel_ok = false;
  for (const std::string& channel : channels) {
    if (channel == entry.channel ||
        (channel == "custom" && entry.channel.rfind("custom:", 0) == 0)) {
      channel_ok = true;
      break;
    }
  }
  if (!channel_ok) return false;
  if (!has_namespaces) return depth < 0 || static_cast<int>(entry.ns.size()) <= depth;
  for (const auto& prefix : namespaces) {
    if (prefix.size() > entry.ns.size()) continue;
    bool is_prefix = true;
    for (std::size_t i = 0; i < prefix.size() && is_prefix; ++i) {
      // A segment "node" matches "node:<task id>".
      const std::string& segment = entry.ns[i];
      is_prefix = segment == prefix[i] || segment.rfind(prefix[i] + ":", 0) == 0;
    }
    if (!is_prefix) continue;
    if (depth >= 0 && static_cast<int>(entry.ns.size() - prefix.size()) > depth) continue;
    return true;
  }
  return false;
}

}  // namespace tollgate::server

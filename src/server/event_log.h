// EventLog: the append-only list of stream events of one run (legacy SSE) or of one thread
// (v2 protocol). Producers append and never wait; each reader keeps its own cursor and is
// woken when events arrive, so a slow client never slows a run down.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tollgate::server {

struct LogEntry {
  std::string event;  // SSE event name ("values", "updates|child:...", "lifecycle", ...)
  std::string data;   // one line of JSON
  // What the store keeps in place of `data` when not empty: `data` with its state cut out and
  // the state's checkpoint named (state_refs.h).
  std::string stored;
  std::string id;     // SSE id ("" = no id line)
  std::int64_t seq = 0;
  // v2 filtering: the event's channel and namespace.
  std::string channel;
  std::vector<std::string> ns;
  // A thread stream event's (ThreadStreams): the sizes of its envelope's head and tail
  // (event_envelope.h) at the ends of `data`, and of `stored`'s data after its reference, which
  // the store leaves out (event_batch.h). 0 for other events.
  std::uint32_t envelope_head = 0;
  std::uint32_t envelope_tail = 0;
};
using LogEntryPtr = std::shared_ptr<const LogEntry>;

// "event: <name>\ndata: <data>\nid: <id>\n\n" (no id line when the id is empty).
std::string format_sse(const LogEntry& entry);

// Thread-safety: all methods may be called from any thread; one mutex guards the entries,
// the closed flag, the outcome and the subscribers.
class EventLog {
 public:
  // Appends and wakes the subscribers. Ignored once closed.
  void append(LogEntry entry);
  void append(LogEntryPtr entry);
  // No more events; readers finish once they have read everything.
  void close();
  bool closed() const;
  std::size_t size() const;
  // The bytes of the entries' data (what the log holds, give or take its bookkeeping).
  std::size_t data_bytes() const;
  // Entries from index `from` on, at most `max`; `closed` tells whether the log was closed
  // when read (so an empty result with closed == true means the reader is done).
  std::vector<LogEntryPtr> read(std::size_t from, std::size_t max, bool* closed) const;

  // A run refused before it did anything (e.g. a resume with nothing to resume) records
  // the HTTP status and message a waiting request answers with instead of a stream.
  void set_rejection(int status, std::string message);
  std::optional<std::pair<int, std::string>> rejection() const;

  // `wake` is called (under the log's lock: it must only post) at every append and at the
  // close, or only at the close when `on_close_only` (a reader waiting for the end, which
  // reads no entry: one wake-up per run instead of one per event).
  int subscribe(std::function<void()> wake, bool on_close_only = false);
  void unsubscribe(int token);

 private:
  struct Subscriber {
    std::function<void()> wake;
    bool on_close_only = false;
  };
  void wake_all(std::unique_lock<std::mutex>& lock, bool closing);

  mutable std::mutex mutex_;
  std::vector<LogEntryPtr> entries_;
  std::size_t data_bytes_ = 0;
  bool closed_ = false;
  std::optional<std::pair<int, std::string>> rejection_;
  int next_token_ = 1;
  std::map<int, Subscriber> subscribers_;
};

}  // namespace tollgate::server

// ThreadStreams: the v2 protocol's per-thread event stream (AGENT_SERVER_API.md §8.3). Every
// event of every run of a thread gets the next thread-wide `seq`, is stored, and is appended
// to the thread's EventLog that open /stream/events connections read (replay, then live).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/event_log.h"
#include "server/store.h"

namespace tollgate::server {

// Thread-safety: all methods may be called from any thread; one mutex guards the map of
// logs and the sequence counters (so events of a thread are numbered and stored in order).
class ThreadStreams {
 public:
  explicit ThreadStreams(ServerStore& store) : store_(store) {}

  // The thread's log (loaded from the store on first use). Never closed.
  std::shared_ptr<EventLog> log(const std::string& thread_id);
  // Appends an event with method `method` and returns its seq. A root lifecycle event of a
  // run gets the event id "synth:<run_id>:<seq>", every other one String(seq).
  std::int64_t emit(const std::string& thread_id, const std::string& method,
                    const std::vector<std::string>& ns, const Json& data,
                    const std::string& node = "", const std::string& run_id = "");
  // The seq of the thread's latest event (0 if none).
  std::int64_t current_seq(const std::string& thread_id);
  void forget(const std::string& thread_id);

 private:
  struct Stream {
    std::shared_ptr<EventLog> log;
    std::int64_t last_seq = 0;
  };
  Stream& stream_locked(const std::string& thread_id);

  ServerStore& store_;
  std::mutex mutex_;
  std::map<std::string, Stream> streams_;
};

// Does an event pass a /stream/events subscription filter?
struct StreamFilter {
  std::vector<std::string> channels;
  bool has_namespaces = false;
  std::vector<std::vector<std::string>> namespaces;
  int depth = -1;  // -1: any depth
  std::int64_t since = -1;
  bool matches(const LogEntry& entry) const;
};

}  // namespace tollgate::server

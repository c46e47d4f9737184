// ThreadStreams: the v2 protocol's per-thread event stream (AGENT_SERVER_API.md §8.3). Every
// event of every run of a thread gets the next thread-wide `seq`, is stored, and is appended
// to the thread's EventLog that open /stream/events connections read (replay, then live).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "server/event_log.h"
#include "server/state_refs.h"
#include "server/store.h"

namespace tollgate::server {

// Memory: a log stays in RAM while someone reads it (an open /stream/events connection holds
// it). A log nobody reads goes at its run's end (release()), or once kIdleLogsKept of them
// pile up, so thousands of paused threads and a thread of thousands of turns cost no RAM here.
// A run appending to a thread reads only where its seq ends; the stored events are read when
// a reader asks for the log.
//
// Thread-safety: all methods may be called from any thread; one mutex guards the map of
// logs and the sequence counters (so events of a thread are numbered and stored in order).
class ThreadStreams {
 public:
  explicit ThreadStreams(ServerStore& store) : store_(store) {}

  // The thread's log, for a reader: every event of the thread (the stored ones read on first
  // use), then the new ones. Never closed.
  std::shared_ptr<EventLog> log(const std::string& thread_id);
  // Appends an event with method `method` and returns its seq. A root lifecycle event of a
  // run gets the event id "synth:<run_id>:<seq>", every other one String(seq).
  std::int64_t emit(const std::string& thread_id, const std::string& method,
                    const std::vector<std::string>& ns, const Json& data,
                    const std::string& node = "", const std::string& run_id = "");
  // emit() of data already written as JSON text (event_json, wire_format.h), so that one
  // serialisation serves the store and every reader. The channel is the method's (a named
  // custom event needs emit(), which reads the name from the data).
  // `state`, when given, names the checkpoint whose state `data_json` is: the store keeps the
  // event with the state cut out (state_refs.h).
  std::int64_t emit_json(const std::string& thread_id, const std::string& method,
                         const std::vector<std::string>& ns, std::string_view data_json,
                         const std::string& node = "", const std::string& run_id = "",
                         const StateRef* state = nullptr);
  // emit_json of the data `write` appends to the string it is given: the event's text, so a
  // large data (a state) is written where it is kept, not copied into it. `state`, when given,
  // may be completed by `write` (its size). Returns the event and where its data is in it.
  struct Emitted {
    LogEntryPtr entry;
    std::size_t data_at = 0;
    std::size_t data_size = 0;
    bool state_left_out = false;  // written by `write_stored`: the entry is the stored form
  };
  // `data_size_hint`: about how long the data will be (room reserved first).
  // `write_stored`, given with `state`, appends the data with the state left out (at
  // state->at, which it sets): it is used instead of `write` when the event is only stored (no
  // reader has the thread's log: see append()), and the entry is then the stored form, as
  // read from the store (its `data` names the checkpoint; Emitted::data_at/size are 0).
  Emitted emit_written(const std::string& thread_id, const std::string& method,
                       const std::vector<std::string>& ns,
                       const std::function<void(std::string&)>& write, std::size_t data_size_hint,
                       const std::string& node = "", const std::string& run_id = "",
                       const StateRef* state = nullptr,
                       const std::function<void(std::string&)>* write_stored = nullptr);
  // The seq of the thread's latest event (0 if none).
  std::int64_t current_seq(const std::string& thread_id);
  void forget(const std::string& thread_id);
  // Holds the thread's new events back from its readers (they are stored as usual) until
  // release(): a run's last events reach the readers only once the run's end is stored, so a
  // client that answers the pause they announce finds the thread paused.
  void hold(const std::string& thread_id);
  void release(const std::string& thread_id);
  // Several replicas (cluster.h): appends to the thread's log, when it is in memory, the events
  // another replica stored since, and continues the thread's seq after them. Called before a
  // run of the thread executes here, and when another replica says it stored events.
  void catch_up(const std::string& thread_id);
  // catch_up for every log someone reads (an open /stream/events connection).
  void catch_up_read();
  // How many thread logs are in memory (for tests and diagnostics).
  std::size_t logs_in_memory();

  // Logs nobody reads that may pile up before they are dropped.
  static constexpr std::size_t kIdleLogsKept = 512;

 private:
  struct Stream {
    std::shared_ptr<EventLog> log;
    std::int64_t last_seq = 0;
    // The seq of the last event stored before the log was made, which the log lacks until
    // log() reads them (0: it has every event).
    std::int64_t stored_through = 0;
    bool held = false;
    std::vector<LogEntryPtr> held_back;  // emitted while held, in order
  };
  Stream& stream_locked(const std::string& thread_id);
  // Appends to the thread's log, or, when nobody reads the log and it holds nothing the store
  // lacks, only to the store (the log then lacks it as it lacks the events stored before it was
  // made: Stream::stored_through), so that a thread nobody watches keeps no event in memory.
  Emitted append(const std::string& thread_id, const std::string& method, std::string channel,
                 const std::vector<std::string>& ns, const std::function<void(std::string&)>& write,
                 std::size_t data_size_hint, const std::string& node, const std::string& run_id,
                 const StateRef* state = nullptr,
                 const std::function<void(std::string&)>* write_stored = nullptr);
  void drop_idle_locked();

  ServerStore& store_;
  std::mutex mutex_;
  std::map<std::string, Stream> streams_;
  std::size_t sweep_at_ = kIdleLogsKept;  // drop idle logs when streams_ reaches this size
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

// ServerStore: where the server keeps assistants, threads, runs and stream events. SqlStore
// (sql_store.h) keeps them in SQLite or PostgreSQL, the same C++ over sql::Connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/event_log.h"
#include "server/record_status.h"
#include "server/state_refs.h"
#include "server/webhook_queue.h"
#include "tollgate/graph.h"
#include "tollgate/json.h"

namespace tollgate::server {

struct AssistantRecord {
  std::string assistant_id;
  std::string graph_id;
  std::string name;
  std::optional<std::string> description;
  Json config = Json::object();
  Json context = Json::object();
  Json metadata = Json::object();
  int version = 1;
  std::int64_t created_at = 0;  // milliseconds since the epoch
  std::int64_t updated_at = 0;
};

struct ThreadRecord {
  std::string thread_id;
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
  Json metadata = Json::object();
  // Busy is derived on every read: a thread is busy while one of its runs is pending or running;
  // otherwise it is what its last run (or state update) left.
  ThreadStatus status = ThreadStatus::kIdle;
  Json config = Json::object();
  Json values;      // null until the first run finished
  Json interrupts;  // task id -> [Interrupt]; null until the first run finished
  Json error;       // message of the last failed run, or null
};

struct RunRecord {
  std::string run_id;
  std::string thread_id;
  std::string assistant_id;
  Json metadata = Json::object();
  RunStatus status = RunStatus::kPending;
  Json kwargs = Json::object();
  std::string multitask_strategy = "reject";
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
  // How many times a process took the run up: a worker started it, or start-up recovery found it
  // cut off by the death of the previous process.
  int attempts = 0;
  // The replica that executes the run, or will: the one it was submitted to, or the one that
  // took it over when that one died ("" on a server that runs alone; docs/deploy.md).
  std::string owner;
  // Not started before this time (milliseconds since the epoch; the request's after_seconds).
  std::int64_t not_before = 0;
};

// Whether a run is pending or running (its thread reads busy).
inline bool run_is_active(const RunRecord& run) {
  return run.status == RunStatus::kPending || run.status == RunStatus::kRunning;
}

// What a run (or a state update) leaves its thread with, read from the thread's latest
// checkpoint. Stored with the run's own end in one transaction.
struct ThreadOutcome {
  // Idle, interrupted or error (busy is never stored).
  ThreadStatus status = ThreadStatus::kIdle;
  Json values;                  // the latest values; null: keep the stored values and interrupts
  // The latest values as the graph holds them, when they were read from it: stands for
  // `values` (left null), written out without a copy.
  std::optional<State> state;
  // The text of `state` (state_event_json's bytes) when the run has it written already; else
  // the store writes it.
  std::optional<std::string> state_text;
  Json interrupts;              // task id -> [Interrupt]
  Json error;                   // message of the failure, or null
  std::int64_t updated_at = 0;
  std::string checkpoint_id;    // the checkpoint values and interrupts were read from ("": none)

  // Whether it carries values (and interrupts) for the thread.
  bool has_values() const { return state.has_value() || !values.is_null(); }
  // The value of the values' key `key`, or null.
  const Json& value_of(std::string_view key) const;
};

// Which threads a search sees: the rule of thread_access.h in a form a store can evaluate.
struct ThreadVisibility {
  bool all = true;       // an admin (or the local user of a server without auth)
  std::string owner;     // else the threads whose metadata "owner" is this id ("": none)
  bool reviewer = false; // and, for a reviewer, the threads waiting for a review
};

// The threads a search or count selects (POST /threads/search and /threads/count).
struct ThreadFilter {
  std::optional<ThreadStatus> status;  // the status as read (busy derived from the runs)
  Json metadata = Json::object();     // each top-level key equal in the thread's metadata
  Json values = Json::object();       // each top-level key equal in the thread's values
  std::vector<std::string> ids;       // empty: any thread
  ThreadVisibility visible;
};

// The order and page of a search: sort_by is thread_id, status, created_at or updated_at;
// ties are broken by created_at (newest first), then thread_id.
struct ThreadPage {
  std::string sort_by = "created_at";
  bool ascending = false;
  std::size_t limit = 10;
  std::size_t offset = 0;
};

// Thread-safety: every method may be called from any thread. Each call is atomic.
// Storage failures throw Error(kUnavailable).
class ServerStore {
 public:
  virtual ~ServerStore() = default;

  virtual void put_assistant(const AssistantRecord& assistant) = 0;  // insert or replace
  virtual std::optional<AssistantRecord> get_assistant(const std::string& assistant_id) = 0;
  virtual std::vector<AssistantRecord> list_assistants() = 0;
  virtual void delete_assistant(const std::string& assistant_id) = 0;

  // Inserts a thread; false (and nothing written) if the id exists.
  virtual bool create_thread(const ThreadRecord& thread) = 0;
  virtual std::optional<ThreadRecord> get_thread(const std::string& thread_id) = 0;
  // The thread without its state: `values` is left null, every other field read. For access
  // checks and a run's start, which must not cost more on a long thread than on a new one.
  virtual std::optional<ThreadRecord> get_thread_head(const std::string& thread_id) = 0;
  // Replaces every column of the thread (copies, tests). Writers that own only some columns use
  // merge_thread_metadata and the run operations below, which never interleave.
  virtual void update_thread(const ThreadRecord& thread) = 0;
  // Merges `metadata` into the thread's metadata (top-level keys, as dict.update) and sets
  // updated_at, leaving every other column alone; the thread after it, nullopt if it is gone.
  virtual std::optional<ThreadRecord> merge_thread_metadata(const std::string& thread_id,
                                                            const Json& metadata,
                                                            std::int64_t updated_at) = 0;
  // Stores the outcome in the thread's status, values, interrupts and error; false (nothing
  // written) if the thread is gone.
  // With `notices` (may be null) in its transaction, as end_run writes them.
  virtual bool set_thread_outcome(const std::string& thread_id, const ThreadOutcome& outcome,
                                  std::vector<QueuedNotification>* notices = nullptr) = 0;
  virtual std::vector<ThreadRecord> list_threads() = 0;
  // One page of the threads `filter` selects, in the page's order; filtered, sorted and paged
  // by the store (indexes), never by reading every thread.
  virtual std::vector<ThreadRecord> search_threads(const ThreadFilter& filter,
                                                   const ThreadPage& page) = 0;
  virtual std::size_t count_threads(const ThreadFilter& filter) = 0;
  // Ids of the threads whose stored status is `status` (recovery: busy left by older versions).
  virtual std::vector<std::string> thread_ids_with_stored_status(ThreadStatus status) = 0;
  // Removes the thread with its runs and stream events.
  virtual void delete_thread(const std::string& thread_id) = 0;

  // Retention (retention.h). A thread's TTL: it is deleted `ttl_ms` after its last update
  // (the Agent Server's strategy "delete"); nullopt: kept. False if the thread is gone.
  virtual bool set_thread_ttl(const std::string& thread_id, std::optional<std::int64_t> ttl_ms) = 0;
  // Ids of the threads whose TTL ran out by `now`, leaving out those a run is pending or
  // running on and those waiting for a review (stored status interrupted); at most `limit`.
  virtual std::vector<std::string> expired_threads(std::int64_t now, std::size_t limit) = 0;
  // Ids of the threads updated at or after `since` that no run is pending or running on.
  virtual std::vector<std::string> idle_threads_updated_since(std::int64_t since) = 0;
  // Deletes the stream events stored before `before`: those of runs that ended (not pending or
  // running) before it, and the thread events of threads no run is active on, except each
  // thread's newest (its sequence continues from them: a SqlStore keeps the events its last
  // write stored for the thread). Returns how many rows (a run's event, a batch of a thread's
  // events) were deleted.
  virtual std::size_t prune_events(std::int64_t before) = 0;

  virtual void put_run(const RunRecord& run) = 0;  // insert or replace
  // Inserts a new run and merges `thread_metadata` into its thread's metadata, in one
  // transaction with `notices` (as end_run writes them; may be null); false (nothing written)
  // if the thread is gone.
  virtual bool insert_run(const RunRecord& run, const Json& thread_metadata,
                          std::vector<QueuedNotification>* notices = nullptr) = 0;
  // Sets the run's status and counts an attempt; the attempts counted so far, nullopt if the
  // run is gone.
  virtual std::optional<int> begin_attempt(const std::string& run_id, RunStatus status,
                                           std::int64_t updated_at) = 0;
  // A run's end, in one transaction: its final record (or, when !keep_run, its deletion with its
  // events), unless `thread` is null its thread's outcome, and unless `notices` is null the
  // notifications that tell of it (each marked fresh when new), written to the webhook queue's
  // tables of the same database (write_webhook_event, sql_webhook_queue.h): a notification is
  // stored exactly when the fact it tells is. False (nothing written) if the run's thread is
  // gone.
  virtual bool end_run(const RunRecord& run, bool keep_run, const ThreadOutcome* thread,
                       std::vector<QueuedNotification>* notices = nullptr) = 0;
  virtual std::optional<RunRecord> get_run(const std::string& run_id) = 0;
  virtual std::vector<RunRecord> list_runs(const std::string& thread_id) = 0;  // newest first
  // At most `limit` of them, newest first, after skipping `offset`.
  virtual std::vector<RunRecord> list_runs_page(const std::string& thread_id, std::size_t limit,
                                                std::size_t offset) = 0;
  // The same page of runs, each as the object its kwargs name "started_by" (null where it is
  // not an object). This default reads the runs whole; a store may read just that member.
  virtual std::vector<Json> run_starters_page(const std::string& thread_id, std::size_t limit,
                                              std::size_t offset);
  // The runs of status `status`, pending or running (the runs a restart recovers), oldest first.
  virtual std::vector<RunRecord> list_runs_with_status(RunStatus status) = 0;
  virtual void delete_run(const std::string& run_id) = 0;  // with its events

  // Stream events of a run (legacy SSE, replayed by join with Last-Event-ID) and of a
  // thread (v2 protocol), in append order. Appending never fails: an event that cannot be
  // written yet is kept for a later write, and reads include it.
  // The entry is shared with the event logs that serve it (never copied).
  virtual void append_run_event(const std::string& run_id, LogEntryPtr entry) = 0;
  void append_run_event(const std::string& run_id, const LogEntry& entry) {
    append_run_event(run_id, std::make_shared<const LogEntry>(entry));
  }
  // The run's events with seq > after_seq (every event by default).
  virtual std::vector<LogEntry> run_events(const std::string& run_id,
                                           std::int64_t after_seq = -1) = 0;
  virtual void append_thread_event(const std::string& thread_id, LogEntryPtr entry) = 0;
  void append_thread_event(const std::string& thread_id, const LogEntry& entry) {
    append_thread_event(thread_id, std::make_shared<const LogEntry>(entry));
  }
  // Keeps the thread's events appended from now on from being written until
  // release_thread_events, or the end of a run of the thread (end_run writes them with it):
  // another replica reads a run's last events only once its end is stored. No-ops by default.
  virtual void hold_thread_events(const std::string& thread_id) { (void)thread_id; }
  virtual void release_thread_events(const std::string& thread_id) { (void)thread_id; }
  // `last_seq`, when given, gets the seq of the last event stored after `after_seq`, one
  // left out included (state_refs.h), or `after_seq` if there is none: the thread's next
  // event follows it.
  virtual std::vector<LogEntry> thread_events(const std::string& thread_id,
                                              std::int64_t after_seq = -1,
                                              std::int64_t* last_seq = nullptr) = 0;
  // The seq of the thread's last event, stored or queued (0 if none): what a new event follows,
  // read without reading the events.
  virtual std::int64_t last_thread_event_seq(const std::string& thread_id) = 0;
  // How reads write back the states of events stored naming their checkpoint
  // (LogEntry::stored, state_refs.h). Set once, before the store is shared.
  virtual void set_state_texts(StateTexts texts) { (void)texts; }
};

inline std::vector<Json> ServerStore::run_starters_page(const std::string& thread_id,
                                                        std::size_t limit, std::size_t offset) {
  std::vector<Json> out;
  for (const RunRecord& run : list_runs_page(thread_id, limit, offset)) {
    auto it = run.kwargs.find("started_by");
    out.push_back(it != run.kwargs.end() && it->is_object() ? *it : Json());
  }
  return out;
}

}  // namespace tollgate::server

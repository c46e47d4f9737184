// SqlStore: ServerStore in a SQL database through sql::Connection, in tables prefixed
// "server_" so that the checkpointer can share the database: a SQLite file (WAL; SqliteStore)
// or a PostgreSQL database (open_storage in storage.h). The same C++ runs on both; the few
// clauses that differ are picked by the connection's dialect. The schema carries a version
// (row "server_store" of table tollgate_schema, see sql/migrations.h); opening an older
// database applies the missing migrations in one transaction.
//
// Stream events are written in groups: append_run_event/append_thread_event queue the row,
// and the queue is committed in the same transaction as the store's next other write (a run
// ends with end_run, so a finished or paused run's events are durable with its status), at
// kMaxPendingEvents rows, by flush_events, and on destruction. A run emits dozens of events; one
// transaction each made them most of a HITL cycle's cost. What a crash can lose is the events
// of runs still in flight, which restart recovery ends anyway. run_events/thread_events never
// write: they serve the queued events after the stored rows (so a read does not store other
// runs' events in small pieces), as they do while writes fail (a full disk) and the queue is
// kept for the next write. The queue has a mutex of its own: a run appending its events never
// waits for the connection, which other runs and requests may hold for a commit meanwhile.
//
// Assistants are read through a small cache (every run looks its assistant up several
// times) when this store is the only writer of the database's assistants; when other
// processes write them too (server replicas on one PostgreSQL database), every read asks the
// database, so a replica never serves an assistant another one changed or deleted.
#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/replica_store.h"
#include "server/state_refs.h"
#include "server/store.h"
#include "sql/connection_lock.h"

namespace tollgate::sql {
class Connection;
class Statement;
class StatementCache;
}  // namespace tollgate::sql

namespace tollgate::server {

namespace sql_rows {
struct StateParts;
}  // namespace sql_rows

inline constexpr int kServerSchemaVersion = 14;

// Who writes the database's assistants: this store alone (so it may cache them), or also other
// processes.
enum class AssistantWriters { kThisStoreOnly, kSeveralProcesses };

// Thread-safety: one connection, serialised by a mutex (guards the connection, the prepared
// statements, the queued events and the assistants cache).
// The notification channels a store tells other replicas on (PostgreSQL; cluster.h): each
// is sent in the transaction of what it tells, so it arrives once that is committed. Empty:
// not told.
struct StoreChannels {
  std::string runs;     // a run ended (payload: its thread id): runs waiting for it may start
  std::string events;   // stream events were stored ("r:<run id>", "t:<thread id>")
  std::string cancels;  // a cancel was asked ("interrupt:<run id>", "rollback:<run id>")
  std::string feed;     // review stream events were appended
};

class SqlStore : public ServerStore, public ReplicaStore {
 public:
  // Creates or migrates the tables on `connection`. Throws Error(kUnavailable) when the
  // database cannot be reached and Error(kConflict) when its schema is newer than
  // kServerSchemaVersion.
  explicit SqlStore(std::unique_ptr<sql::Connection> connection,
                    AssistantWriters writers = AssistantWriters::kThisStoreOnly);
  // The same on a connection other parts may share (connection_lock.h).
  explicit SqlStore(sql::SharedConnection connection,
                    AssistantWriters writers = AssistantWriters::kThisStoreOnly);
  ~SqlStore() override;

  int schema_version();

  void put_assistant(const AssistantRecord& assistant) override;
  std::optional<AssistantRecord> get_assistant(const std::string& assistant_id) override;
  std::vector<AssistantRecord> list_assistants() override;
  void delete_assistant(const std::string& assistant_id) override;

  bool create_thread(const ThreadRecord& thread) override;
  std::optional<ThreadRecord> get_thread(const std::string& thread_id) override;
  std::optional<ThreadRecord> get_thread_head(const std::string& thread_id) override;
  void update_thread(const ThreadRecord& thread) override;
  std::optional<ThreadRecord> merge_thread_metadata(const std::string& thread_id,
                                                    const Json& metadata,
                                                    std::int64_t updated_at) override;
  bool set_thread_outcome(const std::string& thread_id, const ThreadOutcome& outcome,
                          std::vector<QueuedNotification>* notices = nullptr) override;
  std::vector<ThreadRecord> list_threads() override;
  std::vector<ThreadRecord> search_threads(const ThreadFilter& filter,
                                           const ThreadPage& page) override;
  std::size_t count_threads(const ThreadFilter& filter) override;
  std::vector<std::string> thread_ids_with_stored_status(ThreadStatus status) override;
  void delete_thread(const std::string& thread_id) override;

  // sql_store_retention.cpp
  bool set_thread_ttl(const std::string& thread_id, std::optional<std::int64_t> ttl_ms) override;
  std::vector<std::string> expired_threads(std::int64_t now, std::size_t limit) override;
  std::vector<std::string> idle_threads_updated_since(std::int64_t since) override;
  std::size_t prune_events(std::int64_t before) override;

  void put_run(const RunRecord& run) override;
  bool insert_run(const RunRecord& run, const Json& thread_metadata,
                  std::vector<QueuedNotification>* notices = nullptr) override;
  std::optional<int> begin_attempt(const std::string& run_id, RunStatus status,
                                   std::int64_t updated_at) override;
  bool end_run(const RunRecord& run, bool keep_run, const ThreadOutcome* thread,
               std::vector<QueuedNotification>* notices = nullptr) override;
  std::optional<RunRecord> get_run(const std::string& run_id) override;
  std::vector<RunRecord> list_runs(const std::string& thread_id) override;
  std::vector<RunRecord> list_runs_page(const std::string& thread_id, std::size_t limit,
                                        std::size_t offset) override;
  std::vector<Json> run_starters_page(const std::string& thread_id, std::size_t limit,
                                      std::size_t offset) override;
  std::vector<RunRecord> list_runs_with_status(RunStatus status) override;
  void delete_run(const std::string& run_id) override;

  // sql_store_replicas.cpp (replica_store.h)
  void register_replica(const std::string& replica_id, const Json& info) override;
  bool heartbeat(const std::string& replica_id) override;
  void deregister_replica(const std::string& replica_id) override;
  ClaimOutcome claim_run(const std::string& run_id, const std::string& thread_id,
                         const std::string& replica_id, std::int64_t now,
                         ClaimedRun& claimed) override;
  std::vector<RunRecord> adopt_orphaned_runs(const std::string& replica_id,
                                             std::int64_t timeout_ms) override;
  std::vector<RunRecord> owned_runs(const std::string& replica_id) override;
  Insert insert_run_unless_busy(const RunRecord& run, const Json& thread_metadata,
                                std::vector<QueuedNotification>* notices) override;
  std::vector<RunRecord> active_runs(const std::string& thread_id) override;
  std::optional<RunRecord> request_cancel(const std::string& run_id, bool rollback) override;
  std::vector<CancelRequest> cancel_requests(const std::string& replica_id) override;
  void set_rollback_point(const std::string& thread_id, const std::string& checkpoint_id) override;
  bool delete_idle_thread(const std::string& thread_id) override;
  bool with_idle_thread(const std::string& thread_id, const std::function<void()>& body) override;
  void flush_events() override;
  void append_feed(const std::vector<std::string>& events, std::int64_t at) override;
  void set_feed_texts(std::function<std::string(const NotificationEvent&)> text) override;
  std::vector<std::pair<std::int64_t, std::string>> feed_after(std::int64_t after,
                                                               std::size_t limit) override;
  std::int64_t last_feed_seq() override;
  std::vector<std::pair<std::int64_t, std::string>> take_own_feed() override;
  void prune_feed(std::int64_t before) override;
  // Tells other replicas on these channels from now on (PostgreSQL only).
  void set_channels(StoreChannels channels);
  // The server process of the session this store last sent notifications from (0 before
  // any): a notification whose sender_pid is this one was told by this store itself.
  int notifying_pid() const { return notifying_pid_.load(); }

  using ServerStore::append_run_event;
  using ServerStore::append_thread_event;
  void append_run_event(const std::string& run_id, LogEntryPtr entry) override;
  std::vector<LogEntry> run_events(const std::string& run_id,
                                   std::int64_t after_seq = -1) override;
  void append_thread_event(const std::string& thread_id, LogEntryPtr entry) override;
  void hold_thread_events(const std::string& thread_id) override;
  void release_thread_events(const std::string& thread_id) override;
  std::vector<LogEntry> thread_events(const std::string& thread_id, std::int64_t after_seq = -1,
                                      std::int64_t* last_seq = nullptr) override;
  std::int64_t last_thread_event_seq(const std::string& thread_id) override;
  // Without it, events stored naming their checkpoint are left out of reads.
  void set_state_texts(StateTexts texts) override { state_texts_ = std::move(texts); }

 private:
  struct PendingEvent {
    bool of_thread;        // a thread's, else a run's (both batched: event_batch.h)
    std::string owner_id;  // thread id or run id
    LogEntryPtr entry;
    std::int64_t appended_at;  // milliseconds since the epoch (thread events keep it)
    bool held = false;         // a held thread's (hold_thread_events): not written yet
    // The entry's frame in its batch (append_event_frame), written as it is queued: the write
    // that stores it, under the connection's lock, copies it.
    std::string frame{};
  };
  static constexpr std::size_t kMaxPendingEvents = 256;
  static constexpr std::size_t kMaxCachedAssistants = 1024;

  std::optional<AssistantRecord> read_assistant_locked(const std::string& assistant_id);
  std::optional<ThreadRecord> read_thread_locked(const std::string& thread_id);
  // The thread's `columns` (kThreadReadColumns or kThreadHeadColumns), read under the lock and
  // parsed after it.
  std::optional<ThreadRecord> read_thread_row(const std::string& thread_id,
                                              const std::string& columns);
  std::optional<RunRecord> read_run_locked(const std::string& run_id);
  // A run row's JSON columns as stored: written out before the connection is taken.
  struct RunTexts {
    std::string metadata, kwargs;
    explicit RunTexts(const RunRecord& run);
  };
  // Writes the run's row and the thread's active_runs.
  void put_run_locked(const RunRecord& run);
  // Writes the run's row (an upsert), its JSON columns `texts`, and nothing else.
  void write_run_row_locked(const RunRecord& run, const RunTexts& texts);
  // Inserts `run` into its thread: the thread's metadata merged with `thread_metadata`, its
  // updated_at (the run's created_at) and its active_runs are written by one UPDATE of its row.
  // False when the thread is gone (nothing is written).
  bool add_run_locked(const RunRecord& run, const RunTexts& texts, const Json& thread_metadata);
  void delete_run_locked(const std::string& run_id);
  // Locks the thread's row until the transaction ends (PostgreSQL; SQLite's write transaction
  // already excludes every other writer). False when the thread is gone.
  bool lock_thread_locked(const std::string& thread_id);
  // The thread's active_runs as stored, and as its runs count now (pending or running); nullopt
  // when the thread is gone. Read after the thread's row is locked (see lock_thread_locked).
  struct ActiveRuns {
    std::int64_t stored = 0;
    std::int64_t counted = 0;
  };
  std::optional<ActiveRuns> active_runs_locked(const std::string& thread_id);
  // What a write of a thread's row does to its active_runs: leaves it, sets it to `value`, or
  // sets it to the count of its runs pending or running, in the same statement (after the row
  // was locked, as active_runs_locked reads it).
  struct ActiveRunsWrite {
    enum class Kind { kLeave, kSet, kCount };
    Kind kind = Kind::kLeave;
    std::int64_t value = 0;
  };
  // An UPDATE of one thread's row (WHERE thread_id = ?) that sets `set` and then does to its
  // active_runs what each ActiveRunsWrite kind says, indexed by kind.
  static std::array<std::string, 3> thread_updates(std::string_view set);
  // Writes the thread's active_runs (its runs pending or running), in the transaction of each
  // write of its runs: the thread's busy status is never out of step with them.
  void count_active_runs_locked(const std::string& thread_id);
  // Whether no run of the thread is pending or running, read with the thread's row locked.
  bool idle_thread_locked(const std::string& thread_id);
  // The pending and running runs that meet `condition` (SQL with one parameter, bound to
  // `value`), oldest first.
  std::vector<RunRecord> active_runs_where_locked(const char* condition, const std::string& value);
  // Whether `run`'s stored owner is still its owner (or the run is not stored); the caller has
  // locked its thread's row: an end written by a replica that was taken for dead is dropped.
  bool owned_locked(const RunRecord& run);
  void delete_thread_locked(const std::string& thread_id);
  // pg_notify(channel, payload) in the current transaction (nothing on SQLite or without a
  // channel): kept until write_locked commits, with notices_statement_locked.
  void notify_locked(const std::string& channel, const std::string& payload);
  // The kept notices in one statement, bound, for write_locked to send with its COMMIT (null:
  // none); the kept ones are cleared.
  sql::Statement* notices_statement_locked();
  // Writes each notice with the current write transaction (write_webhook_event), and the fresh
  // ones into the feed when set_feed_texts was called; null: none.
  void write_notices_locked(std::vector<QueuedNotification>* notices);
  // append_feed's rows, in the current write transaction (kept in fed_).
  void append_feed_locked(const std::vector<std::string>& events, std::int64_t at);
  // Moves fed_, now committed, to own_feed_.
  void keep_own_feed_locked();
  std::optional<std::string> thread_of_run_locked(const std::string& run_id);
  // The thread's stored and queued events with seq > after_seq, as stored.
  void read_thread_events(const std::string& thread_id, std::int64_t after_seq,
                          std::vector<LogEntry>& out);
  // An outcome's JSON columns as text, written before the lock is taken: the values are the
  // thread's whole state, which on a long thread takes long to write.
  struct OutcomeText {
    std::optional<std::string> values, interrupts, error;  // nullopt: NULL
    // The outcome's state_text, in place of `values` (not copied: the outcome outlives this).
    const std::string* state_text = nullptr;
  };
  static OutcomeText outcome_text(const ThreadOutcome& outcome);
  // The parts of a thread's state after its first (split_state), written into
  // server_thread_state_parts: a part the table holds already as it is is not written again;
  // parts past the last are deleted, unless `fresh` (the table holds none past the last: the
  // thread's row was just inserted, or its stored count, read with the row locked, is not
  // higher). The first part and the count go into the thread's row.
  void write_state_parts_locked(const std::string& thread_id, const sql_rows::StateParts& parts,
                                bool fresh = false);
  // False when the thread is gone. The same UPDATE writes active_runs as `active_runs` says.
  // `stored_parts`: the row's state_parts, when read with the row locked in this transaction.
  bool set_thread_outcome_locked(const std::string& thread_id, const ThreadOutcome& outcome,
                                 const OutcomeText& text, ActiveRunsWrite active_runs,
                                 std::optional<std::int64_t> stored_parts = std::nullopt);
  // A thread's stored metadata merged with new keys: found false when the thread is gone; text
  // the merged object's JSON, nullopt when the merge changes nothing. Locks the thread's row
  // (PostgreSQL).
  struct MergedMetadata {
    bool found = false;
    std::optional<std::string> text;
  };
  MergedMetadata merged_thread_metadata_locked(const std::string& thread_id, const Json& metadata);
  // The run's row, and its thread's row updated with `merged` (read by
  // merged_thread_metadata_locked, which locked it) and the count of its active runs:
  // `counted_before` the run's insert under that lock, plus the run, or counted after it.
  void add_run_row_locked(const RunRecord& run, const RunTexts& texts, const MergedMetadata& merged,
                          std::optional<ActiveRuns> counted_before = std::nullopt);
  // One UPDATE of the thread's row: its updated_at, its metadata when the merge changed it, its
  // active_runs as `active_runs` says.
  void update_thread_row_locked(const std::string& thread_id, const MergedMetadata& merged,
                                std::int64_t updated_at, ActiveRunsWrite active_runs);
  bool merge_thread_metadata_locked(const std::string& thread_id, const Json& metadata,
                                    std::int64_t updated_at);
  // The statement for `sql`, prepared once and kept for the connection's life.
  sql::Statement& prepared_locked(const std::string& sql);
  // Runs `body` in one write transaction together with the queued events.
  void write_locked(const std::function<void()>& body);
  // Takes the queued events that are not held out of the queue, in their order.
  std::vector<PendingEvent> take_events();
  // Puts events taken by take_events back in front of the queue (their write failed).
  void put_back_events(std::vector<PendingEvent> events);
  // Writes `events` (taken from the queue) in the current transaction.
  void write_events_locked(const std::vector<PendingEvent>& events);
  // Queues an event; flushes the queue (taking the connection) at each kMaxPendingEvents.
  void queue_event(PendingEvent event);
  // Stores the events of one thread or run (queued in this order) as one batch row.
  void insert_event_batch_locked(const std::vector<const PendingEvent*>& batch);
  void flush_events_locked();
  // Flushes the queue; false (the queue kept) when the write fails.
  bool try_flush_events_locked();
  // Appends the queued events of one run or thread that are not held to `out` (rows read under
  // the same hold of mutex_), then orders `out` by seq, the later of two with one seq kept.
  void append_queued_locked(bool of_thread, const std::string& owner_id, std::int64_t after_seq,
                            std::vector<LogEntry>& out) const;

  sql::ConnectionLock mutex_;
  std::shared_ptr<sql::Connection> connection_;
  // Destroyed before the connection (declared after it).
  std::unique_ptr<sql::StatementCache> statements_;
  StoreChannels channels_;
  // (channel, payload) told in the current write transaction, each once (guarded by mutex_).
  std::vector<std::pair<std::string, std::string>> notices_;
  std::atomic<int> notifying_pid_{0};
  // Taken after mutex_ when both are (never the other way round).
  mutable std::mutex queue_mutex_;
  std::vector<PendingEvent> pending_events_;         // guarded by queue_mutex_
  std::set<std::string, std::less<>> held_threads_;  // guarded by queue_mutex_
  const bool cache_assistants_;
  // Assistant id -> the record, or nullopt for an id known to be absent (empty unless
  // cache_assistants_).
  std::map<std::string, std::optional<AssistantRecord>, std::less<>> assistants_;
  StateTexts state_texts_;  // set before the store is shared, then only read
  // set_feed_texts's (guarded by mutex_).
  std::function<std::string(const NotificationEvent&)> feed_texts_;
  // The feed rows appended in the current write transaction (guarded by mutex_), then, once it
  // committed, among take_own_feed's (guarded by own_feed_mutex_, taken after mutex_).
  std::vector<std::pair<std::int64_t, std::string>> fed_;
  std::mutex own_feed_mutex_;
  std::deque<std::pair<std::int64_t, std::string>> own_feed_;
};

// The store in the SQLite file `path` (created if needed). Throws Error(kUnavailable) when the
// file cannot be opened and Error(kConflict) when its schema is newer than
// kServerSchemaVersion.
class SqliteStore : public SqlStore {
 public:
  // On this process's connection to the file, which other parts share (connection_lock.h).
  explicit SqliteStore(const std::string& path);
};

}  // namespace tollgate::server

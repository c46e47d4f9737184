#include "server/sql_store.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <variant>
#include <vector>

#include "server/event_batch.h"
#include "server/log.h"
#include "server/sql_store_rows.h"
#include "server/sql_webhook_queue.h"
#include "server/wire_format.h"
#include "sql/migrations.h"
#include "sql/sqlite_connection.h"
#include "sql/statement_cache.h"
#include "tollgate/clock.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

// Each entry moves the schema one version up. Never edit a released migration: add one.
constexpr std::array<sql::Migration, kServerSchemaVersion> kMigrations = {{
    // 1: the initial tables.
    {R"sql(
CREATE TABLE server_assistants (
  assistant_id TEXT PRIMARY KEY, graph_id TEXT NOT NULL, name TEXT NOT NULL, description TEXT,
  config TEXT NOT NULL, context TEXT NOT NULL, metadata TEXT NOT NULL, version INTEGER NOT NULL,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE server_threads (
  thread_id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  metadata TEXT NOT NULL, status TEXT NOT NULL, config TEXT NOT NULL, state_values TEXT,
  interrupts TEXT, error TEXT);
CREATE TABLE server_runs (
  run_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, assistant_id TEXT NOT NULL,
  metadata TEXT NOT NULL, status TEXT NOT NULL, kwargs TEXT NOT NULL,
  multitask_strategy TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE INDEX server_runs_by_thread ON server_runs(thread_id, created_at);
CREATE INDEX server_runs_by_status ON server_runs(status);
CREATE TABLE server_run_events (
  run_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL, data TEXT NOT NULL,
  event_id TEXT NOT NULL, PRIMARY KEY (run_id, seq));
CREATE TABLE server_thread_events (
  thread_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL, data TEXT NOT NULL,
  event_id TEXT NOT NULL, channel TEXT NOT NULL, namespace TEXT NOT NULL,
  PRIMARY KEY (thread_id, seq));
)sql",
     // PostgreSQL: JSON as text (written by nlohmann, read as jsonb where a search looks
     // inside); ids and statuses sort bytewise (COLLATE "C") as SQLite sorts them.
     R"sql(
CREATE TABLE server_assistants (
  assistant_id TEXT COLLATE "C" PRIMARY KEY, graph_id TEXT NOT NULL, name TEXT NOT NULL,
  description TEXT, config TEXT NOT NULL, context TEXT NOT NULL, metadata TEXT NOT NULL,
  version BIGINT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL);
CREATE TABLE server_threads (
  thread_id TEXT COLLATE "C" PRIMARY KEY, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL,
  metadata TEXT NOT NULL, status TEXT COLLATE "C" NOT NULL, config TEXT NOT NULL,
  state_values TEXT, interrupts TEXT, error TEXT);
CREATE TABLE server_runs (
  run_id TEXT COLLATE "C" PRIMARY KEY, thread_id TEXT COLLATE "C" NOT NULL,
  assistant_id TEXT NOT NULL, metadata TEXT NOT NULL, status TEXT COLLATE "C" NOT NULL,
  kwargs TEXT NOT NULL, multitask_strategy TEXT NOT NULL, created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL);
CREATE INDEX server_runs_by_thread ON server_runs(thread_id, created_at);
CREATE INDEX server_runs_by_status ON server_runs(status);
CREATE TABLE server_run_events (
  run_id TEXT COLLATE "C" NOT NULL, seq BIGINT NOT NULL, event TEXT NOT NULL, data TEXT NOT NULL,
  event_id TEXT NOT NULL, PRIMARY KEY (run_id, seq));
CREATE TABLE server_thread_events (
  thread_id TEXT COLLATE "C" NOT NULL, seq BIGINT NOT NULL, event TEXT NOT NULL,
  data TEXT NOT NULL, event_id TEXT NOT NULL, channel TEXT NOT NULL, namespace TEXT NOT NULL,
  PRIMARY KEY (thread_id, seq));
)sql"},
    // 2: runs count the attempts a process made at them (start-up recovery stops at a limit).
    {R"sql(
ALTER TABLE server_runs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
)sql",
     R"sql(
ALTER TABLE server_runs ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;
)sql"},
    // 3: thread searches filter, sort and page by index (the inbox: status by updated_at;
    // a user's own threads: owner), and a thread's busy status is read from its active runs;
    // retention finds expired threads and old events by index.
    {R"sql(
CREATE INDEX server_threads_by_created ON server_threads(created_at, thread_id);
CREATE INDEX server_threads_by_updated ON server_threads(updated_at, thread_id);
CREATE INDEX server_threads_by_status ON server_threads(status, updated_at);
CREATE INDEX server_threads_by_owner ON server_threads(json_extract(metadata, '$.owner'), updated_at);
CREATE INDEX server_runs_by_thread_status ON server_runs(thread_id, status);
-- Retention: thread TTLs, and when each thread event was stored (older rows: 0, the oldest).
ALTER TABLE server_threads ADD COLUMN ttl_ms INTEGER;
CREATE INDEX server_threads_by_ttl ON server_threads(updated_at) WHERE ttl_ms IS NOT NULL;
ALTER TABLE server_thread_events ADD COLUMN appended_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX server_thread_events_by_time ON server_thread_events(appended_at);
CREATE INDEX server_runs_by_update ON server_runs(updated_at);
)sql",
     R"sql(
CREATE INDEX server_threads_by_created ON server_threads(created_at, thread_id);
CREATE INDEX server_threads_by_updated ON server_threads(updated_at, thread_id);
CREATE INDEX server_threads_by_status ON server_threads(status, updated_at);
CREATE INDEX server_threads_by_owner ON server_threads(((metadata::jsonb ->> 'owner')), updated_at);
CREATE INDEX server_runs_by_thread_status ON server_runs(thread_id, status);
ALTER TABLE server_threads ADD COLUMN ttl_ms BIGINT;
CREATE INDEX server_threads_by_ttl ON server_threads(updated_at) WHERE ttl_ms IS NOT NULL;
ALTER TABLE server_thread_events ADD COLUMN appended_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX server_thread_events_by_time ON server_thread_events(appended_at);
CREATE INDEX server_runs_by_update ON server_runs(updated_at);
)sql"},
    // 4: what the console's searches filter on is a column of the thread, kept true in the
    // transaction of each write that changes it, so that each search is an index range: the
    // number of its pending or running runs (written with every run write), whether interrupts
    // are still listed (written with the interrupts), and from them the status as read and
    // whether a reviewer sees the thread.
    {R"sql(
ALTER TABLE server_threads ADD COLUMN active_runs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE server_threads ADD COLUMN pending_interrupts INTEGER NOT NULL DEFAULT 0;
UPDATE server_threads SET active_runs = (SELECT count(*) FROM server_runs r
  WHERE r.thread_id = server_threads.thread_id AND r.status IN ('pending', 'running'));
UPDATE server_threads SET pending_interrupts = EXISTS (SELECT 1 FROM json_each(
  CASE WHEN json_type(interrupts) = 'object' THEN interrupts END)
  WHERE type = 'array' AND json_array_length(value) > 0);
ALTER TABLE server_threads ADD COLUMN read_status TEXT
  GENERATED ALWAYS AS (CASE WHEN active_runs > 0 THEN 'busy' ELSE status END) VIRTUAL;
ALTER TABLE server_threads ADD COLUMN awaiting_review INTEGER
  GENERATED ALWAYS AS (read_status = 'interrupted' OR pending_interrupts <> 0) VIRTUAL;
DROP INDEX server_threads_by_status;
CREATE INDEX server_threads_by_read_status ON server_threads(read_status, updated_at);
CREATE INDEX server_threads_awaiting_review ON server_threads(awaiting_review, updated_at);
)sql",
     // PostgreSQL: the derived columns are stored, and a generated column cannot read another,
     // so awaiting_review spells out read_status = 'interrupted'.
     R"sql(
ALTER TABLE server_threads ADD COLUMN active_runs BIGINT NOT NULL DEFAULT 0;
ALTER TABLE server_threads ADD COLUMN pending_interrupts BIGINT NOT NULL DEFAULT 0;
UPDATE server_threads SET active_runs = (SELECT count(*) FROM server_runs r
  WHERE r.thread_id = server_threads.thread_id AND r.status IN ('pending', 'running'));
UPDATE server_threads SET pending_interrupts = CASE WHEN EXISTS (SELECT 1 FROM jsonb_each(
  CASE WHEN jsonb_typeof(interrupts::jsonb) = 'object' THEN interrupts::jsonb END) e
  WHERE CASE WHEN jsonb_typeof(e.value) = 'array' THEN jsonb_array_length(e.value) > 0
  ELSE FALSE END) THEN 1 ELSE 0 END;
ALTER TABLE server_threads ADD COLUMN read_status TEXT COLLATE "C"
  GENERATED ALWAYS AS (CASE WHEN active_runs > 0 THEN 'busy' ELSE status END) STORED;
ALTER TABLE server_threads ADD COLUMN awaiting_review BIGINT
  GENERATED ALWAYS AS (CASE WHEN (active_runs <= 0 AND status = 'interrupted')
  OR pending_interrupts <> 0 THEN 1 ELSE 0 END) STORED;
DROP INDEX server_threads_by_status;
CREATE INDEX server_threads_by_read_status ON server_threads(read_status, updated_at);
CREATE INDEX server_threads_awaiting_review ON server_threads(awaiting_review, updated_at);
)sql"},
    // 5: several replicas on one database (docs/deploy.md). Each run names the replica that
    // executes it (or will: its owner, '' on a server alone) and when it may start; a cancel
    // asked on another replica waits in cancel_request until the owner acts on it. A thread
    // keeps the checkpoint its next run starts from after a rollback. Replicas say they are
    // alive in server_replicas (times by the database's clock); the review stream's events
    // pass through server_feed, numbered in the order they were committed.
    {R"sql(
ALTER TABLE server_runs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE server_runs ADD COLUMN not_before INTEGER NOT NULL DEFAULT 0;
ALTER TABLE server_runs ADD COLUMN cancel_request TEXT NOT NULL DEFAULT '';
ALTER TABLE server_threads ADD COLUMN rollback_to TEXT NOT NULL DEFAULT '';
CREATE INDEX server_runs_by_owner ON server_runs(owner, status);
CREATE TABLE server_replicas (
  replica_id TEXT PRIMARY KEY, started_at INTEGER NOT NULL, heartbeat_at INTEGER NOT NULL,
  info TEXT NOT NULL);
CREATE TABLE server_feed (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, event TEXT NOT NULL, created_at INTEGER NOT NULL);
)sql",
     R"sql(
ALTER TABLE server_runs ADD COLUMN owner TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE server_runs ADD COLUMN not_before BIGINT NOT NULL DEFAULT 0;
ALTER TABLE server_runs ADD COLUMN cancel_request TEXT NOT NULL DEFAULT '';
ALTER TABLE server_threads ADD COLUMN rollback_to TEXT NOT NULL DEFAULT '';
CREATE INDEX server_runs_by_owner ON server_runs(owner, status);
CREATE TABLE server_replicas (
  replica_id TEXT COLLATE "C" PRIMARY KEY, started_at BIGINT NOT NULL,
  heartbeat_at BIGINT NOT NULL, info TEXT NOT NULL);
CREATE TABLE server_feed (
  seq BIGINT PRIMARY KEY, event TEXT NOT NULL, created_at BIGINT NOT NULL);
)sql"},
    // 6: a thread's stream events are stored a batch a write (event_batch.h): one row for the
    // events of one thread that one write stores, keyed by the last of their sequence numbers.
    // Events stored before stay in server_thread_events, read and pruned as before. Retention
    // finds the runs that ended by an index of those only: a run's start no longer moves it.
    {R"sql(
CREATE TABLE server_thread_event_batches (
  thread_id TEXT NOT NULL, last_seq INTEGER NOT NULL, appended_at INTEGER NOT NULL,
  events TEXT NOT NULL, PRIMARY KEY (thread_id, last_seq));
CREATE INDEX server_thread_event_batches_by_time ON server_thread_event_batches(appended_at);
DROP INDEX server_runs_by_update;
CREATE INDEX server_runs_ended_by_update ON server_runs(updated_at)
  WHERE status NOT IN ('pending', 'running');
)sql",
     R"sql(
CREATE TABLE server_thread_event_batches (
  thread_id TEXT COLLATE "C" NOT NULL, last_seq BIGINT NOT NULL, appended_at BIGINT NOT NULL,
  events TEXT NOT NULL, PRIMARY KEY (thread_id, last_seq));
CREATE INDEX server_thread_event_batches_by_time ON server_thread_event_batches(appended_at);
DROP INDEX server_runs_by_update;
CREATE INDEX server_runs_ended_by_update ON server_runs(updated_at)
  WHERE status NOT IN ('pending', 'running');
)sql"},
    // 7: a root `values` event is stored naming its checkpoint in place of its state
    // (state_refs.h). No table changes; the version keeps earlier builds, which would send the
    // stored form as it is, out of a database this one wrote.
    {"SELECT 1;", "SELECT 1;"},
    // 8: a root task's start is stored naming the checkpoint whose state it starts on, in a
    // form of its own (state_refs.h, 0x02). No table changes; as for 7.
    {"SELECT 1;", "SELECT 1;"},
    // 9: the indexes on a run's replica and on a thread's owner hold the rows that have one: on
    // a server alone (owner '') and without auth (no owner) each write of a run's status or a
    // thread's updated_at no longer writes them too. Their readers name a replica or an owner
    // (a comparison implies IS NOT NULL).
    {R"sql(
DROP INDEX server_runs_by_owner;
CREATE INDEX server_runs_by_owner ON server_runs(owner, status) WHERE owner <> '';
DROP INDEX server_threads_by_owner;
CREATE INDEX server_threads_by_owner ON server_threads(json_extract(metadata, '$.owner'), updated_at)
  WHERE json_extract(metadata, '$.owner') IS NOT NULL;
)sql",
     R"sql(
DROP INDEX server_runs_by_owner;
CREATE INDEX server_runs_by_owner ON server_runs(owner, status) WHERE owner <> '';
DROP INDEX server_threads_by_owner;
CREATE INDEX server_threads_by_owner ON server_threads(((metadata::jsonb ->> 'owner')), updated_at)
  WHERE (metadata::jsonb ->> 'owner') IS NOT NULL;
)sql"},
    // 10: the index on a run's status holds the active runs (what a restart recovers and other
    // replicas adopt), the one on a thread awaiting review the threads that await one: a run's
    // end deletes its entry instead of moving it among every ended run, and a thread's other
    // writes no longer write the second. Their readers name the same condition.
    {R"sql(
DROP INDEX server_runs_by_status;
CREATE INDEX server_runs_by_status ON server_runs(status) WHERE status IN ('pending', 'running');
DROP INDEX server_threads_awaiting_review;
CREATE INDEX server_threads_awaiting_review ON server_threads(awaiting_review, updated_at)
  WHERE awaiting_review = 1;
)sql",
     R"sql(
DROP INDEX server_runs_by_status;
CREATE INDEX server_runs_by_status ON server_runs(status) WHERE status IN ('pending', 'running');
DROP INDEX server_threads_awaiting_review;
CREATE INDEX server_threads_awaiting_review ON server_threads(awaiting_review, updated_at)
  WHERE awaiting_review = 1;
)sql"},
    // 11: one index holds the active runs, by thread: a run's start, its taking up and its end
    // each wrote an entry in two (its status's, and its thread's and status's, which also kept
    // every ended run). The readers of a thread's active runs name the same condition.
    {R"sql(
DROP INDEX server_runs_by_status;
DROP INDEX server_runs_by_thread_status;
CREATE INDEX server_runs_active ON server_runs(thread_id, status)
  WHERE status IN ('pending', 'running');
)sql",
     R"sql(
DROP INDEX server_runs_by_status;
DROP INDEX server_runs_by_thread_status;
CREATE INDEX server_runs_active ON server_runs(thread_id, status)
  WHERE status IN ('pending', 'running');
)sql"},
    // 12: a thread's state is kept in parts (sql_rows::split_state): the first in its row
    // (state_values), the rest in server_thread_state_parts, state_parts counting them all. A
    // long thread's state (hundreds of KB) was rewritten whole at each run's pause and end, and
    // with it each write of the row (its status, its runs count); now a part whose text did not
    // change is not written again, and the row stays short. Rows written before hold their whole
    // state in state_values: one part.
    {R"sql(
ALTER TABLE server_threads ADD COLUMN state_parts INTEGER NOT NULL DEFAULT 1;
CREATE TABLE server_thread_state_parts (
  thread_id TEXT NOT NULL, part INTEGER NOT NULL, chunk TEXT NOT NULL,
  PRIMARY KEY (thread_id, part));
)sql",
     R"sql(
ALTER TABLE server_threads ADD COLUMN state_parts BIGINT NOT NULL DEFAULT 1;
CREATE TABLE server_thread_state_parts (
  thread_id TEXT COLLATE "C" NOT NULL, part BIGINT NOT NULL, chunk TEXT NOT NULL,
  PRIMARY KEY (thread_id, part));
)sql"},
    // 13: a run's stream events are stored a batch a write too (event_batch.h), as a thread's
    // since 6: one row for the events of one run that one write stores, keyed by the last of
    // their sequence numbers, instead of a row (and an index entry) each. Events stored before
    // stay in server_run_events, read before the batches and deleted with them.
    {R"sql(
CREATE TABLE server_run_event_batches (
  run_id TEXT NOT NULL, last_seq INTEGER NOT NULL, events TEXT NOT NULL,
  PRIMARY KEY (run_id, last_seq));
)sql",
     R"sql(
CREATE TABLE server_run_event_batches (
  run_id TEXT COLLATE "C" NOT NULL, last_seq BIGINT NOT NULL, events TEXT NOT NULL,
  PRIMARY KEY (run_id, last_seq));
)sql"},
    // 14: a thread's stream events are stored without their envelopes' head and tail
    // (event_batch.h, BatchFormat::kEnvelopes). No table changes; the version keeps earlier
    // builds, which cannot read such a batch, out of a database this one wrote.
    {"SELECT 1;", "SELECT 1;"},
}};

// Files made before tollgate_schema kept the version in table server_schema.
int adopt_legacy_version(sql::Connection& connection) {
  return sql::take_legacy_version_table(connection, "server_schema");
}

constexpr sql::Schema kSchema{"server_store", kMigrations, adopt_legacy_version};

}  // namespace

using namespace sql_rows;

sql_rows::StateParts sql_rows::split_state(std::string_view text) {
  // The end of a part that would end at `at`: moved back to a character's first byte.
  auto end_before = [&](std::size_t begin, std::size_t at) {
    std::size_t end = at;
    while (end > begin + 1 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    return end;
  };
  StateParts parts;
  std::size_t end = text.size() <= kFirstStatePart ? text.size() : end_before(0, kFirstStatePart);
  parts.first = text.substr(0, end);
  for (std::size_t begin = end; begin < text.size(); begin = end) {
    end = text.size() - begin <= kStatePart ? text.size() : end_before(begin, begin + kStatePart);
    parts.rest.push_back(text.substr(begin, end - begin));
  }
  return parts;
}

std::optional<std::string> sql_rows::json_text(const Json& value) {
  if (value.is_null()) return std::nullopt;
  return event_json(value);
}

const std::string& sql_rows::thread_read_columns(sql::Dialect dialect) {
  auto columns = [](sql::Dialect d) {
    return "thread_id, created_at, updated_at, metadata, read_status, config, " +
           thread_state_sql(d) + ", interrupts, error";
  };
  static const std::string kSqlite = columns(sql::Dialect::kSqlite);
  static const std::string kPostgres = columns(sql::Dialect::kPostgres);
  return dialect == sql::Dialect::kPostgres ? kPostgres : kSqlite;
}

std::string sql_rows::upsert_sql(const char* table, const char* columns, const char* key,
                               std::size_t rows) {
  std::string placeholders, updates;
  std::string_view rest(columns);
  const std::string_view keys(key);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view column = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!column.empty() && column.front() == ' ') column.remove_prefix(1);
    placeholders += placeholders.empty() ? "?" : ",?";
    bool is_key = false;
    for (std::string_view k = keys; !k.empty();) {
      const std::size_t c = k.find(',');
      std::string_view one = k.substr(0, c);
      k = c == std::string_view::npos ? std::string_view() : k.substr(c + 1);
      while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
      is_key = is_key || one == column;
    }
    if (is_key) continue;
    updates += (updates.empty() ? "" : ", ") + std::string(column) + " = excluded." +
               std::string(column);
  }
  std::string values;
  for (std::size_t row = 0; row < rows; ++row) {
    values += (row == 0 ? "(" : ",(") + placeholders + ")";
  }
  return std::string("INSERT INTO ") + table + " (" + columns + ") VALUES " + values +
         " ON CONFLICT (" + key + ") DO UPDATE SET " + updates;
}

SqlStore::SqlStore(std::unique_ptr<sql::Connection> connection, AssistantWriters writers)
    : SqlStore(sql::SharedConnection::alone(std::move(connection)), writers) {}

SqlStore::SqlStore(sql::SharedConnection connection, AssistantWriters writers)
    : mutex_(std::move(connection.lock)),
      connection_(std::move(connection.connection)),
      statements_(std::make_unique<sql::StatementCache>(*connection_)),
      cache_assistants_(writers == AssistantWriters::kThisStoreOnly) {
  std::lock_guard lock(mutex_);
  sql::migrate(*connection_, kSchema);
}

SqliteStore::SqliteStore(const std::string& path)
    : SqlStore(sql::shared_sqlite_file(path, sql::SqliteSync::kNormal,
                                       std::chrono::milliseconds(10000))) {}

SqlStore::~SqlStore() {
  std::lock_guard lock(mutex_);
  try {
    flush_events_locked();
  } catch (const Error&) {
    // Closing anyway: events of runs still in flight are lost like the runs themselves.
  }
}

sql::Statement& SqlStore::prepared_locked(const std::string& text) {
  return statements_->get(text);
}

void SqlStore::write_locked(const std::function<void()>& body) {
  sql::Transaction transaction(*connection_, sql::TransactionKind::kWrite);
  std::vector<PendingEvent> events = take_events();
  try {
    write_events_locked(events);
    body();
    if (sql::Statement* notify = notices_statement_locked()) {
      transaction.commit_after(*notify);  // resets it, also when it fails
    } else {
      transaction.commit();
    }
  } catch (...) {
    notices_.clear();
    fed_.clear();
    put_back_events(std::move(events));
    throw;
  }
  if (!fed_.empty()) keep_own_feed_locked();
}

std::vector<SqlStore::PendingEvent> SqlStore::take_events() {
  std::lock_guard lock(queue_mutex_);
  std::vector<PendingEvent> taken;
  if (std::none_of(pending_events_.begin(), pending_events_.end(),
                   [](const PendingEvent& pending) { return pending.held; })) {
    taken.swap(pending_events_);
    return taken;
  }
  std::vector<PendingEvent> held;
  for (PendingEvent& pending : pending_events_) {
    (pending.held ? held : taken).push_back(std::move(pending));
  }
  pending_events_.swap(held);
  return taken;
}

void SqlStore::put_back_events(std::vector<PendingEvent> events) {
  if (events.empty()) return;
  std::lock_guard lock(queue_mutex_);
  // Older than everything queued since they were taken: in front, so each run's and thread's
  // events stay in order.
  events.insert(events.end(), std::make_move_iterator(pending_events_.begin()),
                std::make_move_iterator(pending_events_.end()));
  pending_events_.swap(events);
}

void SqlStore::write_events_locked(const std::vector<PendingEvent>& events) {
  std::set<std::string> told;  // one notice per run and thread with new events, sent at commit
  // Each thread's and run's events in the order queued, a batch row each (few a write).
  std::vector<std::vector<const PendingEvent*>> batches;
  for (const PendingEvent& pending : events) {
    if (!channels_.events.empty()) {
      std::string payload = (pending.of_thread ? "t:" : "r:") + pending.owner_id;
      if (told.insert(payload).second) notify_locked(channels_.events, payload);
    }
    auto batch = std::find_if(batches.begin(), batches.end(), [&](const auto& b) {
      return b.front()->of_thread == pending.of_thread && b.front()->owner_id == pending.owner_id;
    });
    if (batch == batches.end()) batch = batches.emplace(batches.end());
    batch->push_back(&pending);
  }
  for (const auto& batch : batches) insert_event_batch_locked(batch);
}

namespace {

// A thread's events are batched with their envelopes left out, a run's as they are.
BatchFormat batch_format(bool of_thread) {
  return of_thread ? BatchFormat::kEnvelopes : BatchFormat::kPlain;
}

}  // namespace

void SqlStore::insert_event_batch_locked(const std::vector<const PendingEvent*>& batch) {
  std::string text;
  std::size_t size = 8;  // the format's line
  for (const PendingEvent* pending : batch) size += pending->frame.size();
  text.reserve(size);
  begin_event_batch(text, batch_format(batch.front()->of_thread));
  std::int64_t last_seq = 0;
  std::int64_t appended_at = 0;
  for (const PendingEvent* pending : batch) {
    text += pending->frame;
    last_seq = std::max(last_seq, pending->entry->seq);
    appended_at = std::max(appended_at, pending->appended_at);
  }
  // Written again after a commit that may not have happened (PostgreSQL), the batch replaces
  // itself, or overlaps an earlier one that the reads read past.
  if (!batch.front()->of_thread) {
    static const std::string kPutRun =
        upsert_sql("server_run_event_batches", "run_id, last_seq, events", "run_id, last_seq");
    Statement(prepared_locked(kPutRun))
        .bind(1, batch.front()->owner_id)
        .bind(2, last_seq)
        .bind_unowned(3, text)
        .run();
    return;
  }
  static const std::string kPut =
      upsert_sql("server_thread_event_batches", "thread_id, last_seq, appended_at, events",
                 "thread_id, last_seq");
  Statement(prepared_locked(kPut))
      .bind(1, batch.front()->owner_id)
      .bind(2, last_seq)
      .bind(3, appended_at)
      .bind_unowned(4, text)
      .run();
}

void SqlStore::hold_thread_events(const std::string& thread_id) {
  std::lock_guard lock(queue_mutex_);
  held_threads_.insert(thread_id);
}

void SqlStore::release_thread_events(const std::string& thread_id) {
  std::lock_guard lock(queue_mutex_);
  if (held_threads_.erase(thread_id) == 0) return;
  for (PendingEvent& pending : pending_events_) {
    if (pending.of_thread && pending.owner_id == thread_id) pending.held = false;
  }
}

void SqlStore::flush_events_locked() {
  bool any = false;
  {
    std::lock_guard lock(queue_mutex_);
    any = std::any_of(pending_events_.begin(), pending_events_.end(),
                      [](const PendingEvent& pending) { return !pending.held; });
  }
  if (any) write_locked([] {});
}

int SqlStore::schema_version() {
  std::lock_guard lock(mutex_);
  return sql::schema_version(*connection_, kSchema.component);
}

void SqlStore::put_assistant(const AssistantRecord& a) {
  std::lock_guard lock(mutex_);
  assistants_.erase(a.assistant_id);
  write_locked([&] {
    static const std::string kPut =
        upsert_sql("server_assistants", kAssistantColumns, "assistant_id");
    Statement s(prepared_locked(kPut));
    s.bind(1, a.assistant_id).bind(2, a.graph_id).bind(3, a.name).bind_optional(4, a.description);
    s.bind(5, a.config.dump()).bind(6, a.context.dump()).bind(7, a.metadata.dump());
    s.bind(8, std::int64_t{a.version}).bind(9, a.created_at).bind(10, a.updated_at).run();
  });
}

std::optional<AssistantRecord> SqlStore::get_assistant(const std::string& assistant_id) {
  std::lock_guard lock(mutex_);
  if (!cache_assistants_) return read_assistant_locked(assistant_id);
  auto cached = assistants_.find(assistant_id);
  if (cached != assistants_.end()) return cached->second;
  if (assistants_.size() >= kMaxCachedAssistants) assistants_.clear();
  std::optional<AssistantRecord> found = read_assistant_locked(assistant_id);
  assistants_.emplace(assistant_id, found);
  return found;
}

std::optional<AssistantRecord> SqlStore::read_assistant_locked(const std::string& assistant_id) {
  Statement s(prepared_locked(
      sql("SELECT ", kAssistantColumns, " FROM server_assistants WHERE assistant_id = ?")));
  s.bind(1, assistant_id);
  if (!s.step()) return std::nullopt;
  return read_assistant(s);
}

std::vector<AssistantRecord> SqlStore::list_assistants() {
  std::lock_guard lock(mutex_);
  Statement s(prepared_locked(
      sql("SELECT ", kAssistantColumns, " FROM server_assistants ORDER BY created_at DESC")));
  std::vector<AssistantRecord> out;
  while (s.step()) out.push_back(read_assistant(s));
  return out;
}

void SqlStore::delete_assistant(const std::string& assistant_id) {
  std::lock_guard lock(mutex_);
  assistants_.erase(assistant_id);
  write_locked([&] {
    Statement(prepared_locked("DELETE FROM server_assistants WHERE assistant_id = ?"))
        .bind(1, assistant_id)
        .run();
  });
}

bool SqlStore::create_thread(const ThreadRecord& t) {
  std::lock_guard lock(mutex_);
  bool created = false;
  write_locked([&] {
    Statement s(prepared_locked(sql("INSERT INTO server_threads (", kThreadColumns,
                                    ", pending_interrupts, state_parts) VALUES "
                                    "(?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING")));
    const std::optional<std::string> values = json_text(t.values);
    const StateParts parts = state_parts_of(values);
    s.bind(1, t.thread_id).bind(2, t.created_at).bind(3, t.updated_at).bind(4, t.metadata.dump());
    s.bind(5, to_string(t.status)).bind(6, t.config.dump());
    s.bind_first_part(7, parts).bind_json(8, t.interrupts);
    s.bind_json(9, t.error).bind(10, std::int64_t{has_pending_interrupts(t.interrupts)});
    s.bind(11, parts.count());
    created = s.run() == 1;
    // A new row has no parts yet: a thread's are deleted with it.
    if (created) write_state_parts_locked(t.thread_id, parts, /*fresh=*/true);
  });
  return created;
}

std::optional<ThreadRecord> SqlStore::get_thread(const std::string& thread_id) {
  return read_thread_row(thread_id, thread_read_columns(connection_->dialect()));
}

std::optional<ThreadRecord> SqlStore::get_thread_head(const std::string& thread_id) {
  return read_thread_row(thread_id, kThreadHeadColumns);
}

std::optional<ThreadRecord> SqlStore::read_thread_row(const std::string& thread_id,
                                                      const std::string& columns) {
  std::optional<ThreadRowTexts> row;
  {
    std::lock_guard lock(mutex_);
    Statement s(prepared_locked(
        sql("SELECT ", columns.c_str(), " FROM server_threads WHERE thread_id = ?")));
    s.bind(1, thread_id);
    if (!s.step()) return std::nullopt;
    row = thread_row_texts(s);
  }
  // Parsed once the connection is given back: a long thread's values are hundreds of KB.
  return read_thread(*row);
}

std::optional<ThreadRecord> SqlStore::read_thread_locked(const std::string& thread_id) {
  Statement s(prepared_locked(sql("SELECT ", thread_read_columns(connection_->dialect()).c_str(),
                                  " FROM server_threads WHERE thread_id = ?")));
  s.bind(1, thread_id);
  if (!s.step()) return std::nullopt;
  return read_thread(s);
}

void SqlStore::update_thread(const ThreadRecord& t) {
  std::lock_guard lock(mutex_);
  write_locked([&] {
    Statement s(
        prepared_locked("UPDATE server_threads SET updated_at = ?, metadata = ?, "
                        "status = ?, config = ?, state_values = ?, interrupts = ?, "
                        "error = ?, pending_interrupts = ?, state_parts = ? WHERE thread_id = ?"));
    const std::optional<std::string> values = json_text(t.values);
    const StateParts parts = state_parts_of(values);
    s.bind(1, t.updated_at)
        .bind(2, t.metadata.dump())
        .bind(3, to_string(t.status))
        .bind(4, t.config.dump());
    s.bind_first_part(5, parts).bind_json(6, t.interrupts).bind_json(7, t.error);
    s.bind(8, std::int64_t{has_pending_interrupts(t.interrupts)}).bind(9, parts.count());
    if (s.bind(10, t.thread_id).run() == 1) write_state_parts_locked(t.thread_id, parts);
  });
}

std::optional<ThreadRecord> SqlStore::merge_thread_metadata(const std::string& thread_id,
                                                               const Json& metadata,
                                                               std::int64_t updated_at) {
  std::lock_guard lock(mutex_);
  bool found = false;
  write_locked([&] { found = merge_thread_metadata_locked(thread_id, metadata, updated_at); });
  if (!found) return std::nullopt;
  return read_thread_locked(thread_id);
}

SqlStore::MergedMetadata SqlStore::merged_thread_metadata_locked(const std::string& thread_id,
                                                                 const Json& metadata) {
  MergedMetadata out;
  Json merged;
  {
    // The row is locked from here on (PostgreSQL): its UPDATE writes what this read merges.
    Statement s(prepared_locked(connection_->dialect() == sql::Dialect::kPostgres
                                    ? "SELECT metadata FROM server_threads WHERE thread_id = ? "
                                      "FOR UPDATE"
                                    : "SELECT metadata FROM server_threads WHERE thread_id = ?"));
    s.bind(1, thread_id);
    if (!s.step()) return out;
    out.found = true;
    merged = s.json(0);
  }
  bool changed = !merged.is_object();  // stored otherwise: written again as an object
  if (changed) merged = Json::object();
  if (metadata.is_object()) {
    for (const auto& [key, value] : metadata.items()) {
      auto old = merged.find(key);
      if (old != merged.end() && *old == value) continue;
      merged[key] = value;
      changed = true;
    }
  }
  if (changed) out.text = merged.dump();
  return out;
}

std::array<std::string, 3> SqlStore::thread_updates(std::string_view set) {
  // The count of the runs pending or running is taken as active_runs_locked takes it.
  static const std::string kCount =
      std::string(
          ", active_runs = (SELECT count(*) FROM server_runs WHERE server_runs.thread_id "
          "= server_threads.thread_id AND status = 'pending' AND ") +
      kActive +
      ") + (SELECT count(*) FROM server_runs WHERE server_runs.thread_id = "
      "server_threads.thread_id AND status = 'running' AND " +
      kActive + ")";
  const std::string head = "UPDATE server_threads SET " + std::string(set);
  const std::string where = " WHERE thread_id = ?";
  return {head + where, head + ", active_runs = ?" + where, head + kCount + where};
}

void SqlStore::update_thread_row_locked(const std::string& thread_id, const MergedMetadata& merged,
                                        std::int64_t updated_at, ActiveRunsWrite active_runs) {
  using Kind = ActiveRunsWrite::Kind;
  // A thread's next run, as a rule, leaves its metadata (and the index on its owner) as they are.
  static const std::array<std::array<std::string, 3>, 2> kTexts = {
      thread_updates("updated_at = ?"), thread_updates("metadata = ?, updated_at = ?")};
  Statement s(
      prepared_locked(kTexts[merged.text ? 1 : 0][static_cast<std::size_t>(active_runs.kind)]));
  int index = 1;
  if (merged.text) s.bind(index++, *merged.text);
  s.bind(index++, updated_at);
  if (active_runs.kind == Kind::kSet) s.bind(index++, active_runs.value);
  s.bind(index, thread_id).run();
}

bool SqlStore::merge_thread_metadata_locked(const std::string& thread_id, const Json& metadata,
                                            std::int64_t updated_at) {
  const MergedMetadata merged = merged_thread_metadata_locked(thread_id, metadata);
  if (!merged.found) return false;
  update_thread_row_locked(thread_id, merged, updated_at, {});
  return true;
}

bool SqlStore::add_run_locked(const RunRecord& run, const RunTexts& texts,
                              const Json& thread_metadata) {
  const MergedMetadata merged = merged_thread_metadata_locked(run.thread_id, thread_metadata);
  if (!merged.found) return false;
  add_run_row_locked(run, texts, merged);
  return true;
}

void SqlStore::add_run_row_locked(const RunRecord& run, const RunTexts& texts,
                                  const MergedMetadata& merged,
                                  std::optional<ActiveRuns> counted_before) {
  write_run_row_locked(run, texts);
  // The thread's row was locked by the read above: the count includes every replica's runs,
  // and none but this one was added since a count taken under the lock. Without one, the
  // UPDATE counts them.
  ActiveRunsWrite active{ActiveRunsWrite::Kind::kCount};
  if (counted_before) {
    const std::int64_t counted = counted_before->counted + (run.status == RunStatus::kPending ||
                                                            run.status == RunStatus::kRunning);
    if (counted != counted_before->stored)
      active = {ActiveRunsWrite::Kind::kSet, counted};
    else
      active = {};
  }
  update_thread_row_locked(run.thread_id, merged, run.created_at, active);
}

bool SqlStore::set_thread_outcome(const std::string& thread_id, const ThreadOutcome& outcome,
                                  std::vector<QueuedNotification>* notices) {
  const OutcomeText text = outcome_text(outcome);
  std::lock_guard lock(mutex_);
  bool found = false;
  write_locked([&] {
    found = set_thread_outcome_locked(thread_id, outcome, text, ActiveRunsWrite{});
    if (found) write_notices_locked(notices);
  });
  return found;
}

SqlStore::OutcomeText SqlStore::outcome_text(const ThreadOutcome& outcome) {
  if (outcome.state_text) {
    return {std::nullopt, json_text(outcome.interrupts), json_text(outcome.error),
            &*outcome.state_text};
  }
  std::optional<std::string> values =
      outcome.state ? state_event_json(*outcome.state) : json_text(outcome.values);
  return {std::move(values), json_text(outcome.interrupts), json_text(outcome.error)};
}

bool SqlStore::set_thread_outcome_locked(const std::string& thread_id, const ThreadOutcome& outcome,
                                         const OutcomeText& text, ActiveRunsWrite active_runs,
                                         std::optional<std::int64_t> stored_parts) {
  using Kind = ActiveRunsWrite::Kind;
  static const std::array<std::array<std::string, 3>, 2> kTexts = {
      thread_updates("status = ?, error = ?, updated_at = ?"),
      thread_updates("status = ?, error = ?, updated_at = ?, state_values = ?, interrupts = ?, "
                     "pending_interrupts = ?, state_parts = ?")};
  const bool values = outcome.has_values();
  Statement s(prepared_locked(kTexts[values ? 1 : 0][static_cast<std::size_t>(active_runs.kind)]));
  s.bind(1, to_string(outcome.status)).bind_optional(2, text.error).bind(3, outcome.updated_at);
  int index = 4;
  StateParts parts;
  if (values) {
    // The values (long on a long thread) outlive the statement: their parts are not copied.
    const std::string* state =
        text.state_text != nullptr ? text.state_text : (text.values ? &*text.values : nullptr);
    parts = state != nullptr ? split_state(*state) : StateParts{};
    s.bind_first_part(4, parts).bind_optional(5, text.interrupts);
    s.bind(6, std::int64_t{has_pending_interrupts(outcome.interrupts)}).bind(7, parts.count());
    index = 8;
  }
  if (active_runs.kind == Kind::kSet) s.bind(index++, active_runs.value);
  if (s.bind(index, thread_id).run() != 1) return false;
  // No part past the new last to delete when the stored state had no more parts.
  if (values) {
    write_state_parts_locked(thread_id, parts, stored_parts && *stored_parts <= parts.count());
  }
  return true;
}

void SqlStore::write_state_parts_locked(const std::string& thread_id, const StateParts& parts,
                                        bool fresh) {
  // An unchanged part: the conflict's update is skipped (no page of the table is written).
  static const std::string kPut =
      "INSERT INTO server_thread_state_parts (thread_id, part, chunk) VALUES (?, ?, ?) "
      "ON CONFLICT (thread_id, part) DO UPDATE SET chunk = excluded.chunk "
      "WHERE server_thread_state_parts.chunk <> excluded.chunk";
  for (std::size_t i = 0; i < parts.rest.size(); ++i) {
    Statement(prepared_locked(kPut))
        .bind(1, thread_id)
        .bind(2, static_cast<std::int64_t>(i + 1))
        .bind_unowned(3, parts.rest[i])
        .run();
  }
  if (fresh) return;
  Statement(
      prepared_locked("DELETE FROM server_thread_state_parts WHERE thread_id = ? AND part >= ?"))
      .bind(1, thread_id)
      .bind(2, parts.count())
      .run();
}

std::vector<std::string> SqlStore::thread_ids_with_stored_status(ThreadStatus status) {
  std::lock_guard lock(mutex_);
  Statement s(prepared_locked("SELECT thread_id FROM server_threads WHERE status = ?"));
  s.bind(1, to_string(status));
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::vector<ThreadRecord> SqlStore::list_threads() {
  std::lock_guard lock(mutex_);
  Statement s(prepared_locked(sql("SELECT ", thread_read_columns(connection_->dialect()).c_str(),
                                  " FROM server_threads ORDER BY created_at DESC")));
  std::vector<ThreadRecord> out;
  while (s.step()) out.push_back(read_thread(s));
  return out;
}

namespace {

void bind_values(sql::Statement& statement, const std::vector<SqlValue>& args) {
  int index = 1;
  for (const SqlValue& value : args) {
    std::visit([&](const auto& v) { statement.bind(index++, v); }, value);
  }
}

}  // namespace

std::vector<ThreadRecord> SqlStore::search_threads(const ThreadFilter& filter,
                                                      const ThreadPage& page) {
  ThreadSearchSql search = thread_search_sql(
      filter, page, thread_read_columns(connection_->dialect()), connection_->dialect());
  // Not kept prepared: the text varies with the filter's keys and ids.
  std::lock_guard lock(mutex_);
  auto prepared = sql::prepare_once(*connection_, search.text);
  sql::Statement& statement = *prepared;
  bind_values(statement, search.args);
  Statement s(statement);
  std::vector<ThreadRecord> out;
  while (s.step()) out.push_back(read_thread(s));
  return out;
}

std::size_t SqlStore::count_threads(const ThreadFilter& filter) {
  ThreadFilterSql where = thread_filter_sql(filter, connection_->dialect());
  std::lock_guard lock(mutex_);
  auto prepared =
      sql::prepare_once(*connection_, "SELECT count(*) FROM server_threads " + where.where);
  sql::Statement& statement = *prepared;
  bind_values(statement, where.args);
  Statement s(statement);
  return s.step() ? static_cast<std::size_t>(s.integer(0)) : 0;
}

void SqlStore::delete_thread(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  write_locked([&] { delete_thread_locked(thread_id); });
}

void SqlStore::delete_thread_locked(const std::string& thread_id) {
  for (const char* text : {"DELETE FROM server_run_events WHERE run_id IN "
                           "(SELECT run_id FROM server_runs WHERE thread_id = ?)",
                           "DELETE FROM server_run_event_batches WHERE run_id IN "
                           "(SELECT run_id FROM server_runs WHERE thread_id = ?)"}) {
    Statement(prepared_locked(text)).bind(1, thread_id).run();
  }
  for (const char* text : {"DELETE FROM server_runs WHERE thread_id = ?",
                           "DELETE FROM server_thread_events WHERE thread_id = ?",
                           "DELETE FROM server_thread_event_batches WHERE thread_id = ?",
                           "DELETE FROM server_thread_state_parts WHERE thread_id = ?",
                           "DELETE FROM server_threads WHERE thread_id = ?"}) {
    Statement(prepared_locked(text)).bind(1, thread_id).run();
  }
}

void SqlStore::put_run(const RunRecord& r) {
  std::lock_guard lock(mutex_);
  write_locked([&] { put_run_locked(r); });
}

void SqlStore::put_run_locked(const RunRecord& r) {
  write_run_row_locked(r, RunTexts(r));
  count_active_runs_locked(r.thread_id);
}

SqlStore::RunTexts::RunTexts(const RunRecord& run)
    : metadata(event_json(run.metadata)), kwargs(event_json(run.kwargs)) {}

void SqlStore::write_run_row_locked(const RunRecord& r, const RunTexts& texts) {
  static const std::string kPut = upsert_sql("server_runs", kRunColumns, "run_id");
  Statement s(prepared_locked(kPut));
  s.bind(1, r.run_id).bind(2, r.thread_id).bind(3, r.assistant_id);
  s.bind_unowned(4, texts.metadata).bind(5, to_string(r.status));
  s.bind_unowned(6, texts.kwargs).bind(7, r.multitask_strategy);
  s.bind(8, r.created_at).bind(9, r.updated_at).bind(10, std::int64_t{r.attempts});
  s.bind(11, r.owner).bind(12, r.not_before).run();
}

bool SqlStore::lock_thread_locked(const std::string& thread_id) {
  // SQLite has one writer at a time: the write transaction is the lock.
  Statement s(prepared_locked(connection_->dialect() == sql::Dialect::kPostgres
                                  ? "SELECT 1 FROM server_threads WHERE thread_id = ? FOR UPDATE"
                                  : "SELECT 1 FROM server_threads WHERE thread_id = ?"));
  s.bind(1, thread_id);
  return s.step();
}

std::optional<SqlStore::ActiveRuns> SqlStore::active_runs_locked(const std::string& thread_id) {
  // By a statement of its own, after the thread's row is locked: on PostgreSQL each statement
  // reads what was committed when it began, so two replicas writing runs of one thread at once
  // count each other's runs. Two counts, not status IN (...): SQLite seeks the index for an IN
  // list through a temporary table it builds each time.
  static const std::string kCount =
      std::string(
          "SELECT active_runs, (SELECT count(*) FROM server_runs WHERE thread_id = ?1 AND "
          "status = 'pending' AND ") +
      kActive +
      ") + (SELECT count(*) FROM server_runs WHERE thread_id = ?1 AND status = 'running' AND " +
      kActive + ") FROM server_threads WHERE thread_id = ?1";
  Statement s(prepared_locked(kCount));
  s.bind(1, thread_id);
  if (!s.step()) return std::nullopt;
  return ActiveRuns{s.integer(0), s.integer(1)};
}

void SqlStore::count_active_runs_locked(const std::string& thread_id) {
  // A count that did not change (a run starting) writes nothing: the row and the indexes on
  // the statuses it reads (read_status, awaiting_review) stay as they are.
  if (connection_->dialect() == sql::Dialect::kPostgres) lock_thread_locked(thread_id);
  const std::optional<ActiveRuns> active = active_runs_locked(thread_id);
  if (!active || active->stored == active->counted) return;
  Statement(prepared_locked("UPDATE server_threads SET active_runs = ? WHERE thread_id = ?"))
      .bind(1, active->counted)
      .bind(2, thread_id)
      .run();
}

std::optional<std::string> SqlStore::thread_of_run_locked(const std::string& run_id) {
  Statement s(prepared_locked("SELECT thread_id FROM server_runs WHERE run_id = ?"));
  s.bind(1, run_id);
  if (!s.step()) return std::nullopt;
  return s.text(0);
}

bool SqlStore::insert_run(const RunRecord& run, const Json& thread_metadata,
                          std::vector<QueuedNotification>* notices) {
  const RunTexts texts(run);
  std::lock_guard lock(mutex_);
  bool found = false;
  write_locked([&] {
    found = add_run_locked(run, texts, thread_metadata);
    if (!found) return;
    write_notices_locked(notices);
  });
  return found;
}

void SqlStore::write_notices_locked(std::vector<QueuedNotification>* notices) {
  if (notices == nullptr) return;
  std::vector<std::string> feed;
  for (QueuedNotification& n : *notices) {
    n.fresh = write_webhook_event(*statements_, n.event, n.urls);
    // A fact told before (not fresh) was fed then.
    n.in_feed = n.fresh && feed_texts_;
    if (n.in_feed) feed.push_back(feed_texts_(n.event));
  }
  if (!feed.empty()) append_feed_locked(feed, now_millis());
}

std::optional<int> SqlStore::begin_attempt(const std::string& run_id, RunStatus status,
                                           std::int64_t updated_at) {
  std::lock_guard lock(mutex_);
  std::optional<int> attempts;
  write_locked([&] {
    // A run that goes from pending to running, as a rule, stays one of its thread's active
    // runs: their count, and the thread's row, stay as they are.
    const bool active = status == RunStatus::kPending || status == RunStatus::kRunning;
    const bool stays_active =
        active && Statement(prepared_locked("UPDATE server_runs SET status = ?, attempts = "
                                            "attempts + 1, updated_at = ? WHERE run_id = ? AND "
                                            "status IN ('pending', 'running')"))
                          .bind(1, to_string(status))
                          .bind(2, updated_at)
                          .bind(3, run_id)
                          .run() == 1;
    if (!stays_active) {
      Statement(prepared_locked("UPDATE server_runs SET status = ?, attempts = attempts + 1, "
                                "updated_at = ? WHERE run_id = ?"))
          .bind(1, to_string(status))
          .bind(2, updated_at)
          .bind(3, run_id)
          .run();
    }
    std::string thread_id;
    {
      Statement s(prepared_locked("SELECT attempts, thread_id FROM server_runs WHERE run_id = ?"));
      s.bind(1, run_id);
      if (!s.step()) return;
      attempts = static_cast<int>(s.integer(0));
      thread_id = s.text(1);
    }
    if (!stays_active) count_active_runs_locked(thread_id);
  });
  return attempts;
}

bool SqlStore::end_run(const RunRecord& run, bool keep_run, const ThreadOutcome* thread,
                       std::vector<QueuedNotification>* notices) {
  const OutcomeText thread_text = thread != nullptr ? outcome_text(*thread) : OutcomeText{};
  std::lock_guard lock(mutex_);
  bool found = false;
  bool fenced = false;
  // The run's last events are stored with its end.
  release_thread_events(run.thread_id);
  write_locked([&] {
    // A run that names its replica has its owner checked with its thread's row locked
    // (PostgreSQL): taken here, with the row's existence and its count of state parts.
    const bool locked = !run.owner.empty();
    const bool postgres = connection_->dialect() == sql::Dialect::kPostgres;
    std::optional<std::int64_t> stored_parts;  // read with the row locked (SQLite: always)
    {
      Statement s(prepared_locked(
          locked && postgres
              ? "SELECT state_parts FROM server_threads WHERE thread_id = ? FOR UPDATE"
              : "SELECT state_parts FROM server_threads WHERE thread_id = ?"));
      s.bind(1, run.thread_id);
      found = s.step();
      if (found && (locked || !postgres)) stored_parts = s.integer(0);
    }
    if (!found) return;
    // Only what running it changed: the row's other columns, and the indexes on them, stay
    // as its insert wrote them; a run that names its replica, only while it still does. A
    // row gone meanwhile is written whole, as it ended.
    bool updated = false;
    if (keep_run) {
      Statement s(prepared_locked(locked ? "UPDATE server_runs SET status = ?, attempts = ?, "
                                           "updated_at = ? WHERE run_id = ? AND owner = ?"
                                         : "UPDATE server_runs SET status = ?, attempts = ?, "
                                           "updated_at = ? WHERE run_id = ?"));
      s.bind(1, to_string(run.status)).bind(2, std::int64_t{run.attempts});
      s.bind(3, run.updated_at).bind(4, run.run_id);
      if (locked) s.bind(5, run.owner);
      updated = s.run() == 1;
    }
    if (locked && !updated && !owned_locked(run)) {
      // Another replica took this one for dead and adopted the run: its end is theirs to write.
      fenced = true;
      return;
    }
    ActiveRunsWrite active;  // the thread's active_runs, when counted here
    if (keep_run) {
      if (!updated) {
        put_run_locked(run);
      } else if (thread == nullptr) {
        count_active_runs_locked(run.thread_id);
      } else {
        // Counted by the outcome's UPDATE below: the thread's row is written once.
        if (!locked && postgres) lock_thread_locked(run.thread_id);
        active.kind = ActiveRunsWrite::Kind::kCount;
      }
    } else {
      delete_run_locked(run.run_id);
    }
    if (thread != nullptr) {
      set_thread_outcome_locked(run.thread_id, *thread, thread_text, active, stored_parts);
    }
    write_notices_locked(notices);
    notify_locked(channels_.runs, run.thread_id);
    notify_locked(channels_.events, "r:" + run.run_id);
  });
  if (fenced) log_warning("run " + run.run_id + ": its end was not stored, another replica owns it now");
  return found;
}

bool SqlStore::owned_locked(const RunRecord& run) {
  Statement s(prepared_locked("SELECT owner FROM server_runs WHERE run_id = ?"));
  s.bind(1, run.run_id);
  return !s.step() || s.text(0) == run.owner;
}

std::optional<RunRecord> SqlStore::get_run(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  return read_run_locked(run_id);
}

std::optional<RunRecord> SqlStore::read_run_locked(const std::string& run_id) {
  Statement s(prepared_locked(sql("SELECT ", kRunColumns, " FROM server_runs WHERE run_id = ?")));
  s.bind(1, run_id);
  if (!s.step()) return std::nullopt;
  return read_run(s);
}

std::vector<RunRecord> SqlStore::list_runs(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  Statement s(prepared_locked(
      sql("SELECT ", kRunColumns,
          " FROM server_runs WHERE thread_id = ? ORDER BY created_at DESC, run_id DESC")));
  s.bind(1, thread_id);
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

namespace {

// A row count for LIMIT and OFFSET: a count past int64 (a client's limit=18446744073709551615)
// means every row, not -1.
std::int64_t row_count(std::size_t n) {
  return static_cast<std::int64_t>(
      std::min<std::size_t>(n, static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())));
}

// What follows the columns of a page of a thread's runs, newest first (thread id, limit, offset).
constexpr const char* kRunsPage =
    " FROM server_runs WHERE thread_id = ? ORDER BY created_at DESC, run_id DESC LIMIT ? OFFSET ?";

}  // namespace

std::vector<RunRecord> SqlStore::list_runs_page(const std::string& thread_id, std::size_t limit,
                                                std::size_t offset) {
  std::lock_guard lock(mutex_);
  Statement s(prepared_locked(sql("SELECT ", kRunColumns, kRunsPage)));
  s.bind(1, thread_id).bind(2, row_count(limit)).bind(3, row_count(offset));
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

std::vector<Json> SqlStore::run_starters_page(const std::string& thread_id, std::size_t limit,
                                              std::size_t offset) {
  // The member is taken out by the database: the rest of each run's kwargs (its input, its
  // config) is not parsed here.
  const char* starter = connection_->dialect() == sql::Dialect::kPostgres
                            ? "CASE WHEN jsonb_typeof(kwargs::jsonb -> 'started_by') = 'object' "
                              "THEN (kwargs::jsonb -> 'started_by')::text END"
                            : "CASE WHEN json_type(kwargs, '$.started_by') = 'object' "
                              "THEN json_extract(kwargs, '$.started_by') END";
  std::lock_guard lock(mutex_);
  Statement s(prepared_locked(sql("SELECT ", starter, kRunsPage)));
  s.bind(1, thread_id).bind(2, row_count(limit)).bind(3, row_count(offset));
  std::vector<Json> out;
  while (s.step()) out.push_back(s.json(0));
  return out;
}

std::vector<RunRecord> SqlStore::list_runs_with_status(RunStatus status) {
  if (status != RunStatus::kPending && status != RunStatus::kRunning) {
    throw Error::Internal("list_runs_with_status lists pending or running runs, not " +
                          to_string(status));
  }
  std::lock_guard lock(mutex_);
  // The second term is the condition of index server_runs_active, which holds active runs.
  static const std::string kList =
      sql("SELECT ", kRunColumns, " FROM server_runs WHERE status = ? AND ") + kActive +
      " ORDER BY created_at, run_id";
  Statement s(prepared_locked(kList));
  s.bind(1, to_string(status));
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

void SqlStore::delete_run(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  write_locked([&] { delete_run_locked(run_id); });
}

void SqlStore::delete_run_locked(const std::string& run_id) {
  const std::optional<std::string> thread_id = thread_of_run_locked(run_id);
  for (const char* text : {"DELETE FROM server_run_events WHERE run_id = ?",
                           "DELETE FROM server_run_event_batches WHERE run_id = ?",
                           "DELETE FROM server_runs WHERE run_id = ?"}) {
    Statement(prepared_locked(text)).bind(1, run_id).run();
  }
  if (thread_id) count_active_runs_locked(*thread_id);
}

void SqlStore::append_run_event(const std::string& run_id, LogEntryPtr e) {
  queue_event(PendingEvent{false, run_id, std::move(e), now_millis()});
}

void SqlStore::queue_event(PendingEvent event) {
  // Framed here, not when the batch is written under the connection's lock, which every part
  // of the process waits for.
  const LogEntry& e = *event.entry;
  // The frame's fields; its head is a few dozen bytes.
  event.frame.reserve(e.event.size() + (e.stored.empty() ? e.data : e.stored).size() + e.id.size() +
                      e.channel.size() + 64);
  append_event_frame(event.frame, e, batch_format(event.of_thread));
  bool flush = false;
  {
    std::lock_guard lock(queue_mutex_);
    if (event.of_thread) event.held = held_threads_.count(event.owner_id) != 0;
    pending_events_.push_back(std::move(event));
    // While writes fail the queue grows; a flush is tried again at each further
    // kMaxPendingEvents.
    flush = pending_events_.size() % kMaxPendingEvents == 0;
  }
  if (!flush) return;
  std::lock_guard lock(mutex_);
  try_flush_events_locked();
}

std::vector<LogEntry> SqlStore::run_events(const std::string& run_id, std::int64_t after_seq) {
  std::vector<LogEntry> out;
  std::optional<std::string> thread_id;
  {
    std::lock_guard lock(mutex_);
    {
      // One statement: rows stored one an event (before schema 13, so before every batch of
      // the run), then the batches.
      Statement s(prepared_locked(
          "SELECT 0 AS part, seq, event, data, event_id, NULL AS events FROM server_run_events "
          "WHERE run_id = ? AND seq > ? UNION ALL SELECT 1, last_seq, NULL, NULL, NULL, events "
          "FROM server_run_event_batches WHERE run_id = ? AND last_seq > ? ORDER BY part, seq"));
      s.bind(1, run_id).bind(2, after_seq).bind(3, run_id).bind(4, after_seq);
      while (s.step()) {
        if (s.integer(0) == 1) {
          read_event_batch(s.text(5), after_seq, "run " + run_id, out);
        } else {
          out.push_back(log_entry_of(s, 1));
        }
      }
    }
    if (std::any_of(out.begin(), out.end(),
                    [](const LogEntry& e) { return has_state_ref(e.data); })) {
      thread_id = thread_of_run_locked(run_id);
    }
    append_queued_locked(false, run_id, after_seq, out);
  }
  // The states written back outside the lock: they are read through the checkpoint saver.
  if (thread_id) {
    resolve_state_refs(out, *thread_id, state_texts_);
  } else {
    resolve_state_refs(out, "run " + run_id, StateTexts());  // its thread is gone
  }
  return out;
}

void SqlStore::append_thread_event(const std::string& thread_id, LogEntryPtr e) {
  queue_event(PendingEvent{true, thread_id, std::move(e), now_millis()});
}

namespace {

// Events ordered by seq, of two with one seq the later stored kept (as the upsert of an event
// row kept it). Batches stored once each are in order already.
void in_seq_order(std::vector<LogEntry>& events) {
  const auto after = [](const LogEntry& a, const LogEntry& b) { return a.seq >= b.seq; };
  if (std::adjacent_find(events.begin(), events.end(), after) == events.end()) return;
  std::stable_sort(events.begin(), events.end(),
                   [](const LogEntry& a, const LogEntry& b) { return a.seq < b.seq; });
  std::vector<LogEntry> kept;
  kept.reserve(events.size());
  for (LogEntry& e : events) {
    if (!kept.empty() && kept.back().seq == e.seq) kept.pop_back();
    kept.push_back(std::move(e));
  }
  events.swap(kept);
}

}  // namespace

std::vector<LogEntry> SqlStore::thread_events(const std::string& thread_id, std::int64_t after_seq,
                                              std::int64_t* last_seq) {
  std::vector<LogEntry> out;
  read_thread_events(thread_id, after_seq, out);
  if (last_seq != nullptr) {
    *last_seq = after_seq;
    for (const LogEntry& e : out) *last_seq = std::max(*last_seq, e.seq);
  }
  // The states written back outside the lock: they are read through the checkpoint saver.
  resolve_state_refs(out, thread_id, state_texts_);
  return out;
}

std::int64_t SqlStore::last_thread_event_seq(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  std::int64_t last = 0;
  {
    // Rows from before schema 6 come before every batch of their thread.
    Statement s(prepared_locked(
        "SELECT coalesce((SELECT max(last_seq) FROM server_thread_event_batches WHERE thread_id "
        "= ?), (SELECT max(seq) FROM server_thread_events WHERE thread_id = ?), 0)"));
    s.bind(1, thread_id).bind(2, thread_id);
    if (s.step()) last = s.integer(0);
  }
  std::lock_guard queue(queue_mutex_);
  for (const PendingEvent& pending : pending_events_) {
    if (pending.of_thread && pending.owner_id == thread_id) {
      last = std::max(last, pending.entry->seq);
    }
  }
  return last;
}

void SqlStore::read_thread_events(const std::string& thread_id, std::int64_t after_seq,
                                  std::vector<LogEntry>& out) {
  std::lock_guard lock(mutex_);
  // One statement: rows stored one an event (before schema 6, so before every batch of the
  // thread), then the batches.
  Statement s(prepared_locked(
      "SELECT 0 AS part, seq, event, data, event_id, channel, namespace, NULL AS events FROM "
      "server_thread_events WHERE thread_id = ? AND seq > ? UNION ALL SELECT 1, last_seq, "
      "NULL, NULL, NULL, NULL, NULL, events FROM server_thread_event_batches WHERE "
      "thread_id = ? AND last_seq > ? ORDER BY part, seq"));
  s.bind(1, thread_id).bind(2, after_seq).bind(3, thread_id).bind(4, after_seq);
  while (s.step()) {
    if (s.integer(0) == 1) {
      read_event_batch(s.text(7), after_seq, "thread " + thread_id, out);
      continue;
    }
    LogEntry e = log_entry_of(s, 1);
    e.channel = s.text(5);
    e.ns = s.json(6).get<std::vector<std::string>>();
    out.push_back(std::move(e));
  }
  append_queued_locked(true, thread_id, after_seq, out);
}

bool SqlStore::try_flush_events_locked() {
  try {
    flush_events_locked();
    return true;
  } catch (const Error&) {
    return false;  // kept queued for the next write
  }
}

void SqlStore::append_queued_locked(bool of_thread, const std::string& owner_id,
                                    std::int64_t after_seq, std::vector<LogEntry>& out) const {
  {
    // The queue cannot be written meanwhile: a write takes it under mutex_, which the caller
    // holds, so every event is either in the rows read or in the queue.
    std::lock_guard lock(queue_mutex_);
    for (const PendingEvent& pending : pending_events_) {
      if (pending.of_thread == of_thread && !pending.held && pending.owner_id == owner_id &&
          pending.entry->seq > after_seq)
        out.push_back(*pending.entry);
    }
  }
  in_seq_order(out);
}

void SqlStore::flush_events() {
  std::lock_guard lock(mutex_);
  flush_events_locked();
}

}  // namespace tollgate::server

// SqlStore as the ReplicaStore of several replicas on one database (replica_store.h). On
// PostgreSQL, rows that decide who runs what are locked (FOR UPDATE, SKIP LOCKED where a replica
// should look elsewhere rather than wait); on SQLite the single writer already serialises every
// write transaction.
#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "server/sql_store.h"
#include "server/sql_store_rows.h"
#include "sql/connection.h"
#include "sql/postgres_connection.h"
#include "sql/statement_cache.h"
#include "tollgate/clock.h"
#include "tollgate/error.h"

namespace tollgate::server {

using namespace sql_rows;

namespace {

// Milliseconds since the epoch by the database's clock: every replica's heartbeat is read
// against the same clock, whatever the replicas' own clocks say.
const char* database_now(sql::Dialect dialect) {
  return dialect == sql::Dialect::kPostgres
             ? "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
             : "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
}

// `prefix` FOR UPDATE [SKIP LOCKED] on PostgreSQL, `prefix` on SQLite.
std::string locking(sql::Dialect dialect, const std::string& prefix, bool skip_locked) {
  if (dialect != sql::Dialect::kPostgres) return prefix;
  return prefix + (skip_locked ? " FOR UPDATE SKIP LOCKED" : " FOR UPDATE");
}

}  // namespace

void SqlStore::register_replica(const std::string& replica_id, const Json& info) {
  std::lock_guard lock(mutex_);
  const std::string now = database_now(connection_->dialect());
  write_locked([&] {
    Statement s(prepared_locked(
        "INSERT INTO server_replicas (replica_id, started_at, heartbeat_at, info) VALUES (?, " +
        now + ", " + now +
        ", ?) ON CONFLICT (replica_id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, "
        "info = excluded.info"));
    s.bind(1, replica_id).bind(2, info.dump()).run();
  });
}

bool SqlStore::heartbeat(const std::string& replica_id) {
  std::lock_guard lock(mutex_);
  bool alive = false;
  write_locked([&] {
    Statement s(prepared_locked(std::string("UPDATE server_replicas SET heartbeat_at = ") +
                                database_now(connection_->dialect()) + " WHERE replica_id = ?"));
    alive = s.bind(1, replica_id).run() == 1;
  });
  return alive;
}

void SqlStore::deregister_replica(const std::string& replica_id) {
  std::lock_guard lock(mutex_);
  write_locked([&] {
    Statement(prepared_locked("DELETE FROM server_replicas WHERE replica_id = ?"))
        .bind(1, replica_id)
        .run();
  });
}

ClaimOutcome SqlStore::claim_run(const std::string& run_id, const std::string& thread_id,
                                 const std::string& replica_id, std::int64_t now,
                                 ClaimedRun& claimed) {
  std::lock_guard lock(mutex_);
  const sql::Dialect dialect = connection_->dialect();
  ClaimOutcome outcome = ClaimOutcome::kGone;
  write_locked([&] {
    // Why a run is not taken up now, when it is not: gone unless it is still pending here.
    auto not_now = [&] {
      Statement s(prepared_locked("SELECT status, owner FROM server_runs WHERE run_id = ?"));
      s.bind(1, run_id);
      const bool pending_here =
          s.step() && parse_run_status(s.text(0), "server_runs.status") == RunStatus::kPending &&
          s.text(1) == replica_id;
      return pending_here ? ClaimOutcome::kWaiting : ClaimOutcome::kGone;
    };
    // The thread's row is the lock every replica takes before it takes up a run of the
    // thread; one that finds it taken looks at its other runs meanwhile.
    std::string rollback_to;
    {
      Statement s(prepared_locked(locking(
          dialect, "SELECT rollback_to FROM server_threads WHERE thread_id = ?", true)));
      s.bind(1, thread_id);
      if (!s.step()) {
        outcome = not_now();  // taken, or gone with its runs
        return;
      }
      rollback_to = s.text(0);
    }
    {
      // Read after the lock, by a statement of its own: what other replicas committed is seen.
      Statement s(prepared_locked(std::string("SELECT run_id, not_before FROM server_runs WHERE "
                                              "thread_id = ? AND ") +
                                  kActive +
                                  " ORDER BY CASE status WHEN 'running' THEN 0 ELSE 1 END, "
                                  "created_at, run_id LIMIT 1"));
      s.bind(1, thread_id);
      if (!s.step() || s.text(0) != run_id) {
        outcome = not_now();
        return;
      }
      if (s.integer(1) > now) {
        outcome = not_now();  // not due yet, when still this replica's
        return;
      }
    }
    {
      // The run as taken up, returned by the update (RETURNING: SQLite 3.35+, PostgreSQL): gone
      // when it is no longer pending or no longer this replica's.
      static const std::string kTakeUp =
          std::string(
              "UPDATE server_runs SET status = 'running', attempts = attempts + 1, "
              "updated_at = ? WHERE run_id = ? AND status = 'pending' AND owner = ? "
              "RETURNING ") +
          kRunColumns;
      Statement s(prepared_locked(kTakeUp));
      if (!s.bind(1, now).bind(2, run_id).bind(3, replica_id).step()) {
        outcome = ClaimOutcome::kGone;
        return;
      }
      claimed.record = read_run(s);
    }
    if (!rollback_to.empty()) {
      Statement(prepared_locked("UPDATE server_threads SET rollback_to = '' WHERE thread_id = ?"))
          .bind(1, thread_id)
          .run();
    }
    claimed.rollback_to = rollback_to;
    outcome = ClaimOutcome::kClaimed;
  });
  return outcome;
}

std::vector<RunRecord> SqlStore::adopt_orphaned_runs(const std::string& replica_id,
                                                     std::int64_t timeout_ms) {
  std::lock_guard lock(mutex_);
  const sql::Dialect dialect = connection_->dialect();
  const std::string live = std::string("SELECT replica_id FROM server_replicas WHERE heartbeat_at > ") +
                           database_now(dialect) + " - ?2";
  std::vector<RunRecord> adopted;
  write_locked([&] {
    std::vector<std::string> ids;
    {
      Statement s(prepared_locked(locking(
          dialect,
          std::string("SELECT run_id FROM server_runs WHERE ") + kActive +
              " AND owner <> ?1 AND owner NOT IN (" + live + ") ORDER BY created_at, run_id",
          true)));
      s.bind(1, replica_id).bind(2, timeout_ms);
      while (s.step()) ids.push_back(s.text(0));
    }
    for (const std::string& id : ids) {
      std::optional<RunRecord> run = read_run_locked(id);
      if (!run) continue;
      Statement(prepared_locked("UPDATE server_runs SET owner = ? WHERE run_id = ?"))
          .bind(1, replica_id)
          .bind(2, id)
          .run();
      run->owner = replica_id;
      adopted.push_back(std::move(*run));
    }
    Statement forget(prepared_locked(
        std::string("DELETE FROM server_replicas WHERE replica_id <> ?1 AND replica_id NOT IN (") +
        live + ") AND replica_id NOT IN (SELECT owner FROM server_runs WHERE " + kActive + ")"));
    forget.bind(1, replica_id).bind(2, timeout_ms).run();
  });
  return adopted;
}

std::vector<RunRecord> SqlStore::owned_runs(const std::string& replica_id) {
  std::lock_guard lock(mutex_);
  // The second term lets the partial index server_runs_by_owner serve the search.
  return active_runs_where_locked("owner = ? AND owner <> ''", replica_id);
}

std::vector<RunRecord> SqlStore::active_runs(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  return active_runs_where_locked("thread_id = ?", thread_id);
}

std::vector<RunRecord> SqlStore::active_runs_where_locked(const char* condition,
                                                          const std::string& value) {
  Statement s(prepared_locked(sql("SELECT ", kRunColumns, " FROM server_runs WHERE ") + condition +
                              " AND " + kActive + " ORDER BY created_at, run_id"));
  s.bind(1, value);
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

std::optional<RunRecord> SqlStore::request_cancel(const std::string& run_id, bool rollback) {
  std::lock_guard lock(mutex_);
  std::optional<RunRecord> run;
  write_locked([&] {
    // A rollback asked after an interrupt still discards the run's progress.
    Statement s(prepared_locked(
        std::string("UPDATE server_runs SET cancel_request = CASE WHEN cancel_request = "
                    "'rollback' THEN 'rollback' ELSE ? END WHERE run_id = ? AND ") +
        kActive));
    if (s.bind(1, std::string(rollback ? "rollback" : "interrupt")).bind(2, run_id).run() != 1) return;
    run = read_run_locked(run_id);
    if (run) notify_locked(channels_.cancels, (rollback ? "rollback:" : "interrupt:") + run_id);
  });
  return run;
}

std::vector<CancelRequest> SqlStore::cancel_requests(const std::string& replica_id) {
  std::lock_guard lock(mutex_);
  Statement s(prepared_locked(
      std::string("SELECT run_id, cancel_request FROM server_runs WHERE owner = ? AND owner "
                  "<> '' AND cancel_request <> '' AND ") +
      kActive + " ORDER BY created_at, run_id"));
  s.bind(1, replica_id);
  std::vector<CancelRequest> out;
  while (s.step()) out.push_back(CancelRequest{s.text(0), s.text(1) == "rollback"});
  return out;
}

void SqlStore::set_rollback_point(const std::string& thread_id, const std::string& checkpoint_id) {
  std::lock_guard lock(mutex_);
  write_locked([&] {
    Statement(prepared_locked("UPDATE server_threads SET rollback_to = ? WHERE thread_id = ?"))
        .bind(1, checkpoint_id)
        .bind(2, thread_id)
        .run();
  });
}

bool SqlStore::idle_thread_locked(const std::string& thread_id) {
  lock_thread_locked(thread_id);
  static const std::string kAny =
      std::string("SELECT 1 FROM server_runs WHERE thread_id = ? AND ") + kActive + " LIMIT 1";
  Statement s(prepared_locked(kAny));
  s.bind(1, thread_id);
  return !s.step();
}

bool SqlStore::delete_idle_thread(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  bool idle = false;
  write_locked([&] {
    idle = idle_thread_locked(thread_id);
    if (idle) delete_thread_locked(thread_id);
  });
  return idle;
}

bool SqlStore::with_idle_thread(const std::string& thread_id, const std::function<void()>& body) {
  std::lock_guard lock(mutex_);
  bool idle = false;
  write_locked([&] {
    idle = idle_thread_locked(thread_id);
    if (idle) body();
  });
  return idle;
}

ReplicaStore::Insert SqlStore::insert_run_unless_busy(const RunRecord& run,
                                                      const Json& thread_metadata,
                                                      std::vector<QueuedNotification>* notices) {
  const RunTexts texts(run);
  std::lock_guard lock(mutex_);
  Insert outcome = Insert::kThreadGone;
  write_locked([&] {
    // The read of the thread's metadata locks its row (PostgreSQL) for the rest: the check for
    // its active runs, the insert and their count.
    const MergedMetadata merged = merged_thread_metadata_locked(run.thread_id, thread_metadata);
    if (!merged.found) return;
    const std::optional<ActiveRuns> active = active_runs_locked(run.thread_id);
    if (!active) return;
    if (active->counted > 0) {
      outcome = Insert::kThreadBusy;
      return;
    }
    add_run_row_locked(run, texts, merged, active);
    write_notices_locked(notices);
    outcome = Insert::kInserted;
  });
  return outcome;
}

namespace {

constexpr std::size_t kFeedRowsPerInsert = 16;

// The INSERT of `rows` feed events (1 to kFeedRowsPerInsert): ?1 their time, ?2... the events in
// order, returning their numbers, which grow in that order. PostgreSQL numbers them after the
// last (appenders take turns: see append_feed); SQLite by its AUTOINCREMENT.
const std::string& feed_insert_sql(bool postgres, std::size_t rows) {
  using Texts = std::array<std::string, kFeedRowsPerInsert + 1>;
  static const std::array<Texts, 2> kTexts = [] {
    std::array<Texts, 2> texts;
    for (std::size_t n = 1; n <= kFeedRowsPerInsert; ++n) {
      std::string values;
      std::string numbered;
      for (std::size_t i = 0; i < n; ++i) {
        const std::string at = std::to_string(i + 2);
        values += (i == 0 ? "(?" : ", (?") + at + ", ?1)";
        numbered += (i == 0 ? "(" : ", (") + std::to_string(i + 1) + ", ?" + at + ")";
      }
      texts[0][n] =
          "INSERT INTO server_feed (event, created_at) VALUES " + values + " RETURNING seq";
      texts[1][n] =
          "INSERT INTO server_feed (seq, event, created_at) SELECT last.seq + v.n, v.event, ?1 "
          "FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM server_feed) last, (VALUES " +
          numbered + ") AS v(n, event) RETURNING seq";
    }
    return texts;
  }();
  return kTexts[postgres ? 1 : 0][rows];
}

}  // namespace

void SqlStore::append_feed(const std::vector<std::string>& events, std::int64_t at) {
  if (events.empty()) return;
  std::lock_guard lock(mutex_);
  write_locked([&] { append_feed_locked(events, at); });
}

void SqlStore::append_feed_locked(const std::vector<std::string>& events, std::int64_t at) {
  const bool postgres = connection_->dialect() == sql::Dialect::kPostgres;
  if (postgres) {
    // Numbers are taken in commit order: the next appender waits for this commit.
    Statement(prepared_locked(
                  "SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.server_feed'))"))
        .step();
  }
  // Up to kFeedRowsPerInsert events a statement (one round trip on PostgreSQL).
  for (std::size_t begin = 0; begin < events.size(); begin += kFeedRowsPerInsert) {
    const std::size_t rows = std::min(kFeedRowsPerInsert, events.size() - begin);
    Statement s(prepared_locked(feed_insert_sql(postgres, rows)));
    s.bind(1, at);
    for (std::size_t i = 0; i < rows; ++i) {
      s.bind(static_cast<int>(i) + 2, events[begin + i]);
    }
    std::vector<std::int64_t> numbers;
    while (s.step()) numbers.push_back(s.integer(0));
    if (numbers.size() != rows) {
      throw Error::Internal("the feed's insert numbered " + std::to_string(numbers.size()) +
                            " of " + std::to_string(rows) + " events");
    }
    std::sort(numbers.begin(), numbers.end());
    for (std::size_t i = 0; i < rows; ++i) fed_.emplace_back(numbers[i], events[begin + i]);
  }
  // The payload is the last number: a replica that has read that far reads nothing more.
  notify_locked(channels_.feed, std::to_string(fed_.back().first));
}

void SqlStore::keep_own_feed_locked() {
  std::lock_guard lock(own_feed_mutex_);
  for (auto& row : fed_) own_feed_.push_back(std::move(row));
  fed_.clear();
  while (own_feed_.size() > kOwnFeedKept) own_feed_.pop_front();
}

std::vector<std::pair<std::int64_t, std::string>> SqlStore::take_own_feed() {
  std::lock_guard lock(own_feed_mutex_);
  std::vector<std::pair<std::int64_t, std::string>> taken(
      std::make_move_iterator(own_feed_.begin()), std::make_move_iterator(own_feed_.end()));
  own_feed_.clear();
  return taken;
}

void SqlStore::set_feed_texts(std::function<std::string(const NotificationEvent&)> text) {
  std::lock_guard lock(mutex_);
  feed_texts_ = std::move(text);
}

std::vector<std::pair<std::int64_t, std::string>> SqlStore::feed_after(std::int64_t after,
                                                                       std::size_t limit) {
  std::lock_guard lock(mutex_);
  Statement s(prepared_locked("SELECT seq, event FROM server_feed WHERE seq > ? ORDER BY seq LIMIT ?"));
  s.bind(1, after).bind(2, static_cast<std::int64_t>(limit));
  std::vector<std::pair<std::int64_t, std::string>> out;
  while (s.step()) out.emplace_back(s.integer(0), s.text(1));
  return out;
}

std::int64_t SqlStore::last_feed_seq() {
  std::lock_guard lock(mutex_);
  Statement s(prepared_locked("SELECT COALESCE(MAX(seq), 0) FROM server_feed"));
  return s.step() ? s.integer(0) : 0;
}

void SqlStore::prune_feed(std::int64_t before) {
  std::lock_guard lock(mutex_);
  write_locked([&] {
    // The newest stays: PostgreSQL numbers the next event after it.
    Statement(prepared_locked("DELETE FROM server_feed WHERE created_at < ? AND seq < (SELECT "
                              "MAX(seq) FROM server_feed)"))
        .bind(1, before)
        .run();
  });
}

void SqlStore::set_channels(StoreChannels channels) {
  std::lock_guard lock(mutex_);
  channels_ = std::move(channels);
}

void SqlStore::notify_locked(const std::string& channel, const std::string& payload) {
  if (channel.empty() || connection_->dialect() != sql::Dialect::kPostgres) return;
  const std::pair<std::string, std::string> notice{channel, payload};
  if (std::find(notices_.begin(), notices_.end(), notice) == notices_.end()) {
    notices_.push_back(notice);
  }
}

sql::Statement* SqlStore::notices_statement_locked() {
  if (notices_.empty()) return nullptr;
  Json pairs = Json::array();
  for (const auto& [channel, payload] : notices_) pairs.push_back(Json::array({channel, payload}));
  notices_.clear();
  // One statement for every notice of the transaction, sent with its COMMIT.
  sql::Statement& notify = prepared_locked(
      "SELECT pg_notify(n->>0, n->>1) FROM jsonb_array_elements(CAST(? AS jsonb)) AS n");
  notify.bind(1, pairs.dump());
  // Before the commit delivers them: the listener tells this store's own notices by it.
  notifying_pid_ = static_cast<sql::PostgresConnection&>(*connection_).backend_pid();
  return &notify;
}

}  // namespace tollgate::server

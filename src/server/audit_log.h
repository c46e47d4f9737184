// The review audit log: every decision a person sent to a paused thread, with what was pending
// (shown) when it arrived, and what became of it.
//
// A decision is written BEFORE the run that carries it starts (fail closed: when the log cannot
// store it, the decision is not applied), and its outcome is filled in exactly once afterwards:
//   applied    the graph took the decision and ran on (it may have paused again)
//   recorded   an approval short of the action's approvals_required: kept, the thread stays
//              paused until the last approval needed arrives
//   refused    rejected before anything was saved (a bad HITL response, nothing to resume);
//              the thread stayed paused
//   failed     the run failed after taking the decision
//   cancelled  the run was cancelled
//   lost       the server stopped before the run decided (marked when it starts again)
// Nothing else in a row ever changes, and rows are never deleted — also not with their thread.
// The log lives in the server's database, a SQLite file or PostgreSQL (table server_audit_log;
// its schema version is row "audit_log" of table tollgate_schema, see sql/migrations.h); the
// entries and their hashes are the same on both.
//
// Tamper-evident: every entry carries the SHA-256 of the previous entry (audit_entry_hash);
// settling an outcome appends an "outcome" entry to the chain, so editing, deleting or
// reordering any row — an outcome included — breaks the chain at that row (verify()).
//
// Reviewer identity: empty in single-user mode; an authenticated identity when the server has
// authentication. It never comes from the request body.
//
// Thread-safety: every method may be called from any thread (one connection under a mutex).
// Several processes may keep one log (server replicas on one PostgreSQL database): each write
// transaction first takes a lock of the log's schema (an advisory lock), so appends and
// settles of all of them form one chain.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "sql/connection_lock.h"
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "server/identity.h"
#include "tollgate/json.h"

namespace tollgate::sql {
class Connection;
class StatementCache;
}

namespace tollgate::server {

struct AuditEntry {
  std::int64_t id = 0;            // increasing, in arrival order
  std::string kind = "decision";  // decision | outcome | refusal | state_write | run_start
  std::int64_t refers_to = 0;     // an outcome entry: the id of the entry it settles
  std::int64_t received_at = 0;   // ms since the epoch
  std::string thread_id;
  std::string run_id;
  std::string assistant_id;
  std::string graph_id;
  std::string reviewer;         // the identity's id; empty: single-user mode
  std::string checkpoint_id;    // the paused checkpoint the decision answered
  Json shown = Json::object();  // the pending interrupts: task id -> [{id, value}]
  Json decided;                 // the resume payload as received (a state write: its body)
  std::string outcome = "pending";
  std::string message;          // why it was refused, failed or lost
  std::int64_t settled_at = 0;  // when the outcome was written (0 while pending)
  std::string prev_hash;        // the previous entry's hash ("" for the first)
  std::string hash;             // SHA-256 of this entry's canonical encoding and prev_hash

  // {"audit_id", "kind", "refers_to" (or null), "received_at" (ISO 8601), "thread_id", ...,
  //  "outcome", "message" (or null), "settled_at" (ISO or null), "prev_hash", "hash"}
  Json to_json() const;
};

struct AuditQuery {
  std::optional<std::string> thread_id;
  std::optional<std::int64_t> before_id;  // only entries older than this id
  std::size_t limit = 100;
  // The whole chain as stored, oldest first, outcome entries included (for export); else the
  // entries a person reads, newest first, each decision carrying its outcome.
  bool chain = false;
};

// What verify() found: the first entry whose hash, link or outcome does not check out.
struct AuditVerification {
  bool intact = true;
  std::size_t entries = 0;       // how many entries were checked
  std::int64_t broken_id = 0;    // the first broken entry (0 when intact)
  std::string reason;
};

class AuditLog {
 public:
  // Opens (creating when missing) the log in the SQLite file `db_path`; a log written before
  // entries were chained is chained now (its rows in id order, then an outcome entry for each
  // settled decision). Throws Error(kUnavailable) when the file cannot be opened and
  // Error(kConflict) when its log is of a newer schema than this build's.
  explicit AuditLog(const std::string& db_path);
  // The log on `connection` (SQLite or PostgreSQL), with the same behaviour and errors.
  explicit AuditLog(std::unique_ptr<sql::Connection> connection);
  // The same on a connection other parts may share (connection_lock.h).
  explicit AuditLog(sql::SharedConnection connection);
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Appends an entry (a decision or state write with outcome "pending"; a refusal or run start
  // with the outcome it has) to the chain and returns its id. Throws Error(kUnavailable) when
  // it cannot be stored.
  std::int64_t append(const AuditEntry& entry);
  // Settles a pending entry: appends its chained outcome entry and shows the outcome on the
  // entry; an entry that is already settled keeps its outcome.
  void settle(std::int64_t id, const std::string& outcome, const std::string& message = "");
  // Settles every pending entry as "lost" (call once at start-up, before runs resume); the
  // entries of the runs in `uncertain` (cut off while a tool call they authorized ran, whose
  // effect is unknown: docs/effects.md) as "effect_uncertain" with `uncertain_message`. Those of
  // the runs in `continued` stay pending: their cut-off step runs again and they settle them.
  // With `only`, just the entries of those runs (a replica taking over a dead one's runs, while
  // the other replicas' runs are still executing).
  std::size_t settle_lost(const std::string& message, const std::set<std::string>& uncertain = {},
                          const std::string& uncertain_message = "",
                          const std::set<std::string>& continued = {},
                          const std::set<std::string>* only = nullptr);
  // The newest pending entry of run `run_id` (the decision it carries), if any.
  std::optional<std::int64_t> pending_decision_of(const std::string& run_id) const;
  std::vector<AuditEntry> list(const AuditQuery& query) const;
  // Checks the whole chain: each entry's hash, its link to the previous one, and that each
  // decision shows the outcome its outcome entry says.
  AuditVerification verify() const;

 private:
  // Chains the rows a log of schema version 1 holds (none afterwards).
  void chain_unchained();
  // The texts of an entry's `shown` and `decided` (event_json), written out before the lock
  // is taken: they are the large part of an entry.
  struct EntryTexts {
    std::string shown, decided;
    explicit EntryTexts(const AuditEntry& entry);
  };
  // The id and hash of the chain's last entry (0 and "" when it has none).
  struct ChainHead {
    std::int64_t id = 0;
    std::string hash;
  };
  // Begins `transaction`, takes the chain's writers' lock (PostgreSQL) and then reads its head
  // by a statement of its own: one round trip with the BEGIN. A session found broken by it had
  // done nothing in the transaction: the transaction is begun once more, on a new session.
  ChainHead begin_chain_locked(std::optional<sql::Transaction>& transaction);
  // With `commit`, the entry's INSERT is the transaction's last statement: sent with its COMMIT
  // (one round trip on PostgreSQL), and the transaction is committed. With `head`, the chain's
  // head as begin_chain_locked read it (nothing appended since); without, it is read here.
  std::int64_t append_locked(AuditEntry entry, const EntryTexts& texts,
                             sql::Transaction* commit = nullptr, const ChainHead* head = nullptr);
  bool settle_locked(std::int64_t id, const std::string& outcome, const std::string& message,
                     sql::Transaction* commit = nullptr, const ChainHead* head = nullptr);

  mutable sql::ConnectionLock mutex_;
  std::shared_ptr<sql::Connection> db_;
  std::unique_ptr<sql::StatementCache> statements_;  // the appends' statements, kept prepared
};

// The reviewer an entry names for `identity`: its id, or "" for the local user of a server
// without authentication (single-user mode).
std::string audit_identity(const Identity& identity);

// The hash of `entry` after `prev_hash`: SHA-256 (hex) of prev_hash, a newline, and the
// canonical JSON (sorted keys) of every field but `hash` — without the outcome, message and
// settled_at of a decision or state write, which are settled by a chained outcome entry.
std::string audit_entry_hash(const AuditEntry& entry, const std::string& prev_hash);
// The same, given the texts of the entry's `shown` and `decided` (event_json).
std::string audit_entry_hash(const AuditEntry& entry, const std::string& prev_hash,
                             std::string_view shown_text, std::string_view decided_text);

}  // namespace tollgate::server

// The review audit log: every decision a person sent to a paused thread, with what was pending
// (shown) when it arrived, and what became of it.
//
// A decision is written BEFORE the run that carries it starts (fail closed: when the log cannot
// store it, the decision is not applied), and its outcome is filled in exactly once afterwards:
//   applied    the graph took the decision and ran on (it may have paused again)
//   refused    rejected before anything was saved (a bad HITL response, nothing to resume);
//              the thread stayed paused
//   failed     the run failed after taking the decision
//   cancelled  the run was cancelled
//   lost       the server stopped before the run decided (marked when it starts again)
// Nothing else in a row ever changes, and rows are never deleted — also not with their thread.
// The log lives in the server's database file (table server_audit_log; its schema version is
// row "audit_log" of table tollgate_schema, see sql/migrations.h).
//
// Reviewer identity: empty in single-user mode; an authenticated identity when the server has
// authentication. It never comes from the request body.
//
// Thread-safety: every method may be called from any thread (one connection under a mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tollgate/json.h"

namespace tollgate::sql {
class SqliteConnection;
}

namespace tollgate::server {

struct AuditEntry {
  std::int64_t id = 0;           // increasing, in arrival order
  std::int64_t received_at = 0;  // ms since the epoch
  std::string thread_id;
  std::string run_id;
  std::string assistant_id;
  std::string graph_id;
  std::string reviewer;         // empty: single-user mode
  std::string checkpoint_id;    // the paused checkpoint the decision answered
  Json shown = Json::object();  // the pending interrupts: task id -> [{id, value}]
  Json decided;                 // the resume payload as received
  std::string outcome = "pending";
  std::string message;          // why it was refused, failed or lost
  std::int64_t settled_at = 0;  // when the outcome was written (0 while pending)

  // {"audit_id", "received_at" (ISO 8601), "thread_id", ..., "outcome", "message" (or null),
  //  "settled_at" (ISO or null)}
  Json to_json() const;
};

struct AuditQuery {
  std::optional<std::string> thread_id;
  std::optional<std::int64_t> before_id;  // only entries older than this id
  std::size_t limit = 100;
};

class AuditLog {
 public:
  // Opens (creating when missing) the log in the SQLite file `db_path`. Throws
  // Error(kUnavailable) when the file cannot be opened and Error(kConflict) when its log is of
  // a newer schema than this build's.
  explicit AuditLog(const std::string& db_path);
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Stores a received decision (outcome "pending") and returns its id. Throws
  // Error(kUnavailable) when it cannot be stored.
  std::int64_t append(const AuditEntry& entry);
  // Writes the outcome of a pending entry; an entry that is already settled keeps its outcome.
  void settle(std::int64_t id, const std::string& outcome, const std::string& message = "");
  // Settles every pending entry as "lost" (call once at start-up, before runs resume).
  std::size_t settle_lost(const std::string& message);
  // Newest first.
  std::vector<AuditEntry> list(const AuditQuery& query) const;

 private:
  mutable std::mutex mutex_;
  std::unique_ptr<sql::SqliteConnection> db_;
};

}  // namespace tollgate::server

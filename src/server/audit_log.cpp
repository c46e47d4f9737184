#include "server/audit_log.h"

#include <array>

#include "server/ids.h"
#include "sql/migrations.h"
#include "sql/sqlite_connection.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

using sql::SqliteConnection;
using sql::SqliteStatement;

// Each entry moves the schema one version up. Never edit a released migration: add one.
constexpr std::array<sql::Migration, 1> kMigrations = {{
    // 1: the log.
    {R"sql(
CREATE TABLE server_audit_log (
  audit_id INTEGER PRIMARY KEY AUTOINCREMENT, received_at INTEGER NOT NULL,
  thread_id TEXT NOT NULL, run_id TEXT NOT NULL, assistant_id TEXT NOT NULL,
  graph_id TEXT NOT NULL, reviewer TEXT NOT NULL, checkpoint_id TEXT NOT NULL,
  shown TEXT NOT NULL, decided TEXT NOT NULL, outcome TEXT NOT NULL, message TEXT NOT NULL,
  settled_at INTEGER NOT NULL);
CREATE INDEX server_audit_log_by_thread ON server_audit_log(thread_id, audit_id);
)sql"},
}};

// Files made before tollgate_schema had the log without a version: that is version 1.
int adopt_legacy_version(sql::Connection& connection) {
  return sql::table_exists(connection, "server_audit_log") ? 1 : 0;
}

constexpr sql::Schema kSchema{"audit_log", kMigrations, adopt_legacy_version};

constexpr const char* kColumns =
    "audit_id, received_at, thread_id, run_id, assistant_id, graph_id, reviewer, checkpoint_id, "
    "shown, decided, outcome, message, settled_at";

Json parse_stored(const std::string& text) {
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_discarded() ? Json(text) : value;
}

AuditEntry read_entry(const SqliteStatement& s) {
  AuditEntry e;
  e.id = s.integer(0);
  e.received_at = s.integer(1);
  e.thread_id = s.text(2);
  e.run_id = s.text(3);
  e.assistant_id = s.text(4);
  e.graph_id = s.text(5);
  e.reviewer = s.text(6);
  e.checkpoint_id = s.text(7);
  e.shown = parse_stored(s.text(8));
  e.decided = parse_stored(s.text(9));
  e.outcome = s.text(10);
  e.message = s.text(11);
  e.settled_at = s.integer(12);
  return e;
}

}  // namespace

Json AuditEntry::to_json() const {
  auto optional_text = [](const std::string& text) { return text.empty() ? Json() : Json(text); };
  return Json{{"audit_id", id},
              {"received_at", iso_timestamp(received_at)},
              {"thread_id", thread_id},
              {"run_id", run_id},
              {"assistant_id", assistant_id},
              {"graph_id", graph_id},
              {"reviewer", optional_text(reviewer)},
              {"checkpoint_id", optional_text(checkpoint_id)},
              {"shown", shown},
              {"decided", decided},
              {"outcome", outcome},
              {"message", optional_text(message)},
              {"settled_at", settled_at == 0 ? Json() : Json(iso_timestamp(settled_at))}};
}

AuditLog::AuditLog(const std::string& db_path)
    : db_(std::make_unique<SqliteConnection>(
          db_path, sql::SqliteFileOptions{std::chrono::milliseconds(10000), /*wal=*/true})) {
  sql::migrate(*db_, kSchema);
}

AuditLog::~AuditLog() = default;

std::int64_t AuditLog::append(const AuditEntry& entry) {
  std::lock_guard lock(mutex_);
  SqliteStatement s(*db_, std::string("INSERT INTO server_audit_log (") + kColumns +
                              ") VALUES (NULL,?,?,?,?,?,?,?,?,?,'pending','',0)");
  s.bind(1, entry.received_at != 0 ? entry.received_at : now_millis());
  s.bind(2, entry.thread_id).bind(3, entry.run_id).bind(4, entry.assistant_id);
  s.bind(5, entry.graph_id).bind(6, entry.reviewer).bind(7, entry.checkpoint_id);
  s.bind(8, entry.shown.dump()).bind(9, entry.decided.dump());
  s.run();
  return db_->last_insert_rowid();
}

void AuditLog::settle(std::int64_t id, const std::string& outcome, const std::string& message) {
  std::lock_guard lock(mutex_);
  SqliteStatement s(*db_,
                    "UPDATE server_audit_log SET outcome = ?, message = ?, settled_at = ? "
                    "WHERE audit_id = ? AND outcome = 'pending'");
  s.bind(1, outcome).bind(2, message).bind(3, now_millis()).bind(4, id).run();
}

std::size_t AuditLog::settle_lost(const std::string& message) {
  std::lock_guard lock(mutex_);
  SqliteStatement s(*db_,
                    "UPDATE server_audit_log SET outcome = 'lost', message = ?, settled_at = ? "
                    "WHERE outcome = 'pending'");
  return static_cast<std::size_t>(s.bind(1, message).bind(2, now_millis()).run());
}

std::vector<AuditEntry> AuditLog::list(const AuditQuery& query) const {
  std::lock_guard lock(mutex_);
  std::string sql = std::string("SELECT ") + kColumns + " FROM server_audit_log WHERE 1 = 1";
  if (query.thread_id) sql += " AND thread_id = ?";
  if (query.before_id) sql += " AND audit_id < ?";
  sql += " ORDER BY audit_id DESC LIMIT ?";
  SqliteStatement s(*db_, sql);
  int index = 1;
  if (query.thread_id) s.bind(index++, *query.thread_id);
  if (query.before_id) s.bind(index++, *query.before_id);
  s.bind(index, static_cast<std::int64_t>(query.limit));
  std::vector<AuditEntry> entries;
  while (s.step()) entries.push_back(read_entry(s));
  return entries;
}

}  // namespace tollgate::server

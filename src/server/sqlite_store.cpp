#include "server/sqlite_store.h"

#include <sqlite3.h>

#include <functional>
#include <vector>

#include "tollgate/error.h"

namespace tollgate::server {
namespace {

// Each entry moves the schema one version up.
const std::vector<const char*> kMigrations = {
    // 1: the initial tables.
    R"sql(
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
};

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw Error::Unavailable("server database: " + what + ": " +
                           (db ? sqlite3_errmsg(db) : "cannot open"));
}

// One use of a cached prepared statement (SqliteStore::prepared); binds by position from 1,
// reads columns from 0, and resets the statement when it goes out of scope.
class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, const std::string& text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int index, std::int64_t value) {
    sqlite3_bind_int64(stmt_, index, value);
    return *this;
  }
  Statement& bind_json(int index, const Json& value) {
    if (value.is_null()) {
      sqlite3_bind_null(stmt_, index);
      return *this;
    }
    return bind(index, value.dump());
  }
  Statement& bind_optional(int index, const std::optional<std::string>& text) {
    if (!text) {
      sqlite3_bind_null(stmt_, index);
      return *this;
    }
    return bind(index, *text);
  }
  // True while a row is available.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, "step");
  }
  void run() {
    while (step()) {
    }
  }
  std::string text(int column) const {
    const unsigned char* value = sqlite3_column_text(stmt_, column);
    return value ? std::string(reinterpret_cast<const char*>(value),
                               static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
                 : std::string();
  }
  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::optional<std::string> optional_text(int column) const {
    if (is_null(column)) return std::nullopt;
    return text(column);
  }
  Json json(int column) const {
    if (is_null(column)) return Json();
    return Json::parse(text(column));
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

void exec(sqlite3* db, const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    throw Error::Unavailable(std::string("server database: ") + text);
  }
}

AssistantRecord read_assistant(const Statement& s) {
  AssistantRecord a;
  a.assistant_id = s.text(0);
  a.graph_id = s.text(1);
  a.name = s.text(2);
  a.description = s.optional_text(3);
  a.config = s.json(4);
  a.context = s.json(5);
  a.metadata = s.json(6);
  a.version = static_cast<int>(s.integer(7));
  a.created_at = s.integer(8);
  a.updated_at = s.integer(9);
  return a;
}

ThreadRecord read_thread(const Statement& s) {
  ThreadRecord t;
  t.thread_id = s.text(0);
  t.created_at = s.integer(1);
  t.updated_at = s.integer(2);
  t.metadata = s.json(3);
  t.status = s.text(4);
  t.config = s.json(5);
  t.values = s.json(6);
  t.interrupts = s.json(7);
  t.error = s.json(8);
  return t;
}

RunRecord read_run(const Statement& s) {
  RunRecord r;
  r.run_id = s.text(0);
  r.thread_id = s.text(1);
  r.assistant_id = s.text(2);
  r.metadata = s.json(3);
  r.status = s.text(4);
  r.kwargs = s.json(5);
  r.multitask_strategy = s.text(6);
  r.created_at = s.integer(7);
  r.updated_at = s.integer(8);
  return r;
}

// A stored stream event: seq, event, data, event_id (the first four columns of both event tables).
LogEntry log_entry_of(const Statement& s) {
  LogEntry e;
  e.seq = s.integer(0);
  e.event = s.text(1);
  e.data = s.text(2);
  e.id = s.text(3);
  return e;
}

constexpr const char* kAssistantColumns =
    "assistant_id, graph_id, name, description, config, context, metadata, version, created_at, "
    "updated_at";
constexpr const char* kThreadColumns =
    "thread_id, created_at, updated_at, metadata, status, config, state_values, interrupts, error";
constexpr const char* kRunColumns =
    "run_id, thread_id, assistant_id, metadata, status, kwargs, multitask_strategy, created_at, "
    "updated_at";

std::string sql(const char* prefix, const char* columns, const char* suffix) {
  return std::string(prefix) + columns + suffix;
}

}  // namespace

SqliteStore::SqliteStore(const std::string& path) {
  if (sqlite3_open_v2(path.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : "cannot open";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error::Unavailable("server database " + path + ": " + message);
  }
  sqlite3_busy_timeout(db_, 10000);
  exec(db_, "PRAGMA journal_mode=WAL");
  exec(db_, "PRAGMA synchronous=NORMAL");
  migrate();
}

SqliteStore::~SqliteStore() {
  {
    std::lock_guard lock(mutex_);
    try {
      flush_events_locked();
    } catch (const Error&) {
      // Closing anyway: events of runs still in flight are lost like the runs themselves.
    }
    for (auto& [text, statement] : statements_) sqlite3_finalize(statement);
    statements_.clear();
  }
  sqlite3_close(db_);
}

sqlite3_stmt* SqliteStore::prepared_locked(const std::string& text) {
  auto it = statements_.find(text);
  if (it != statements_.end()) return it->second;
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v3(db_, text.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &statement, nullptr) !=
      SQLITE_OK) {
    fail(db_, "prepare");
  }
  statements_.emplace(text, statement);
  return statement;
}

void SqliteStore::write_locked(const std::function<void()>& body) {
  Statement(db_, prepared_locked("BEGIN IMMEDIATE")).run();
  try {
    write_events_locked();
    body();
    Statement(db_, prepared_locked("COMMIT")).run();
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  pending_events_.clear();
}

void SqliteStore::write_events_locked() {
  for (const PendingEvent& pending : pending_events_) {
    const LogEntry& e = pending.entry;
    Statement s(db_,
                prepared_locked(pending.of_thread
                                    ? "INSERT OR REPLACE INTO server_thread_events (thread_id, "
                                      "seq, event, data, event_id, channel, namespace) "
                                      "VALUES (?,?,?,?,?,?,?)"
                                    : "INSERT OR REPLACE INTO server_run_events (run_id, seq, "
                                      "event, data, event_id) VALUES (?,?,?,?,?)"));
    s.bind(1, pending.owner_id).bind(2, e.seq).bind(3, e.event).bind(4, e.data).bind(5, e.id);
    if (pending.of_thread) s.bind(6, e.channel).bind(7, Json(e.ns).dump());
    s.run();
  }
}

void SqliteStore::flush_events_locked() {
  if (!pending_events_.empty()) write_locked([] {});
}

void SqliteStore::migrate() {
  std::lock_guard lock(mutex_);
  exec(db_, "CREATE TABLE IF NOT EXISTS server_schema (version INTEGER NOT NULL)");
  write_locked([&] {
    int version = 0;
    {
      Statement s(db_, prepared_locked("SELECT version FROM server_schema"));
      if (s.step()) version = static_cast<int>(s.integer(0));
    }
    if (version > kServerSchemaVersion) {
      throw Error::Unavailable("server database: schema version " + std::to_string(version) +
                               " is newer than this program's " +
                               std::to_string(kServerSchemaVersion));
    }
    for (int v = version; v < kServerSchemaVersion; ++v) {
      exec(db_, kMigrations[static_cast<std::size_t>(v)]);
    }
    exec(db_, "DELETE FROM server_schema");
    Statement(db_, prepared_locked("INSERT INTO server_schema (version) VALUES (?)"))
        .bind(1, std::int64_t{kServerSchemaVersion})
        .run();
  });
}

int SqliteStore::schema_version() {
  std::lock_guard lock(mutex_);
  Statement s(db_, prepared_locked("SELECT version FROM server_schema"));
  return s.step() ? static_cast<int>(s.integer(0)) : 0;
}

void SqliteStore::put_assistant(const AssistantRecord& a) {
  std::lock_guard lock(mutex_);
  assistants_.erase(a.assistant_id);
  write_locked([&] {
    Statement s(db_, prepared_locked(sql("INSERT OR REPLACE INTO server_assistants (",
                                         kAssistantColumns, ") VALUES (?,?,?,?,?,?,?,?,?,?)")));
    s.bind(1, a.assistant_id).bind(2, a.graph_id).bind(3, a.name).bind_optional(4, a.description);
    s.bind(5, a.config.dump()).bind(6, a.context.dump()).bind(7, a.metadata.dump());
    s.bind(8, std::int64_t{a.version}).bind(9, a.created_at).bind(10, a.updated_at).run();
  });
}

std::optional<AssistantRecord> SqliteStore::get_assistant(const std::string& assistant_id) {
  std::lock_guard lock(mutex_);
  auto cached = assistants_.find(assistant_id);
  if (cached != assistants_.end()) return cached->second;
  if (assistants_.size() >= kMaxCachedAssistants) assistants_.clear();
  std::optional<AssistantRecord> found = read_assistant_locked(assistant_id);
  assistants_.emplace(assistant_id, found);
  return found;
}

std::optional<AssistantRecord> SqliteStore::read_assistant_locked(const std::string& assistant_id) {
  Statement s(db_, prepared_locked(sql("SELECT ", kAssistantColumns,
                                       " FROM server_assistants WHERE assistant_id = ?")));
  s.bind(1, assistant_id);
  if (!s.step()) return std::nullopt;
  return read_assistant(s);
}

std::vector<AssistantRecord> SqliteStore::list_assistants() {
  std::lock_guard lock(mutex_);
  Statement s(db_, prepared_locked(sql("SELECT ", kAssistantColumns,
                                       " FROM server_assistants ORDER BY created_at DESC")));
  std::vector<AssistantRecord> out;
  while (s.step()) out.push_back(read_assistant(s));
  return out;
}

void SqliteStore::delete_assistant(const std::string& assistant_id) {
  std::lock_guard lock(mutex_);
  assistants_.erase(assistant_id);
  write_locked([&] {
    Statement(db_, prepared_locked("DELETE FROM server_assistants WHERE assistant_id = ?"))
        .bind(1, assistant_id)
        .run();
  });
}

bool SqliteStore::create_thread(const ThreadRecord& t) {
  std::lock_guard lock(mutex_);
  bool created = false;
  write_locked([&] {
    Statement s(db_, prepared_locked(sql("INSERT OR IGNORE INTO server_threads (", kThreadColumns,
                                         ") VALUES (?,?,?,?,?,?,?,?,?)")));
    s.bind(1, t.thread_id).bind(2, t.created_at).bind(3, t.updated_at).bind(4, t.metadata.dump());
    s.bind(5, t.status).bind(6, t.config.dump()).bind_json(7, t.values).bind_json(8, t.interrupts);
    s.bind_json(9, t.error).run();
    created = sqlite3_changes(db_) == 1;
  });
  return created;
}

std::optional<ThreadRecord> SqliteStore::get_thread(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  Statement s(db_, prepared_locked(
                       sql("SELECT ", kThreadColumns, " FROM server_threads WHERE thread_id = ?")));
  s.bind(1, thread_id);
  if (!s.step()) return std::nullopt;
  return read_thread(s);
}

void SqliteStore::update_thread(const ThreadRecord& t) {
  std::lock_guard lock(mutex_);
  write_locked([&] {
    Statement s(db_, prepared_locked("UPDATE server_threads SET updated_at = ?, metadata = ?, "
                                     "status = ?, config = ?, state_values = ?, interrupts = ?, "
                                     "error = ? WHERE thread_id = ?"));
    s.bind(1, t.updated_at).bind(2, t.metadata.dump()).bind(3, t.status).bind(4, t.config.dump());
    s.bind_json(5, t.values).bind_json(6, t.interrupts).bind_json(7, t.error).bind(8, t.thread_id);
    s.run();
  });
}

std::vector<ThreadRecord> SqliteStore::list_threads() {
  std::lock_guard lock(mutex_);
  Statement s(db_, prepared_locked(sql("SELECT ", kThreadColumns,
                                       " FROM server_threads ORDER BY created_at DESC")));
  std::vector<ThreadRecord> out;
  while (s.step()) out.push_back(read_thread(s));
  return out;
}

void SqliteStore::delete_thread(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  write_locked([&] {
    Statement(db_, prepared_locked("DELETE FROM server_run_events WHERE run_id IN "
                                   "(SELECT run_id FROM server_runs WHERE thread_id = ?)"))
        .bind(1, thread_id)
        .run();
    for (const char* text : {"DELETE FROM server_runs WHERE thread_id = ?",
                             "DELETE FROM server_thread_events WHERE thread_id = ?",
                             "DELETE FROM server_threads WHERE thread_id = ?"}) {
      Statement(db_, prepared_locked(text)).bind(1, thread_id).run();
    }
  });
}

void SqliteStore::put_run(const RunRecord& r) {
  std::lock_guard lock(mutex_);
  write_locked([&] {
    Statement s(db_, prepared_locked(sql("INSERT OR REPLACE INTO server_runs (", kRunColumns,
                                         ") VALUES (?,?,?,?,?,?,?,?,?)")));
    s.bind(1, r.run_id).bind(2, r.thread_id).bind(3, r.assistant_id).bind(4, r.metadata.dump());
    s.bind(5, r.status).bind(6, r.kwargs.dump()).bind(7, r.multitask_strategy);
    s.bind(8, r.created_at).bind(9, r.updated_at).run();
  });
}

std::optional<RunRecord> SqliteStore::get_run(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              prepared_locked(sql("SELECT ", kRunColumns, " FROM server_runs WHERE run_id = ?")));
  s.bind(1, run_id);
  if (!s.step()) return std::nullopt;
  return read_run(s);
}

std::vector<RunRecord> SqliteStore::list_runs(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  Statement s(
      db_, prepared_locked(
               sql("SELECT ", kRunColumns,
                   " FROM server_runs WHERE thread_id = ? ORDER BY created_at DESC, run_id DESC")));
  s.bind(1, thread_id);
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

std::vector<RunRecord> SqliteStore::list_runs_with_status(const std::string& status) {
  std::lock_guard lock(mutex_);
  Statement s(db_, prepared_locked(sql("SELECT ", kRunColumns,
                                       " FROM server_runs WHERE status = ? ORDER BY created_at, "
                                       "run_id")));
  s.bind(1, status);
  std::vector<RunRecord> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

void SqliteStore::delete_run(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  write_locked([&] {
    for (const char* text : {"DELETE FROM server_run_events WHERE run_id = ?",
                             "DELETE FROM server_runs WHERE run_id = ?"}) {
      Statement(db_, prepared_locked(text)).bind(1, run_id).run();
    }
  });
}

void SqliteStore::append_run_event(const std::string& run_id, const LogEntry& e) {
  std::lock_guard lock(mutex_);
  pending_events_.push_back(PendingEvent{false, run_id, e});
  if (pending_events_.size() >= kMaxPendingEvents) flush_events_locked();
}

std::vector<LogEntry> SqliteStore::run_events(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  flush_events_locked();
  Statement s(db_, prepared_locked("SELECT seq, event, data, event_id FROM server_run_events "
                                   "WHERE run_id = ? ORDER BY seq"));
  s.bind(1, run_id);
  std::vector<LogEntry> out;
  while (s.step()) out.push_back(log_entry_of(s));
  return out;
}

void SqliteStore::append_thread_event(const std::string& thread_id, const LogEntry& e) {
  std::lock_guard lock(mutex_);
  pending_events_.push_back(PendingEvent{true, thread_id, e});
  if (pending_events_.size() >= kMaxPendingEvents) flush_events_locked();
}

std::vector<LogEntry> SqliteStore::thread_events(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  flush_events_locked();
  Statement s(db_, prepared_locked("SELECT seq, event, data, event_id, channel, namespace FROM "
                                   "server_thread_events WHERE thread_id = ? ORDER BY seq"));
  s.bind(1, thread_id);
  std::vector<LogEntry> out;
  while (s.step()) {
    LogEntry e = log_entry_of(s);
    e.channel = s.text(4);
    e.ns = s.json(5).get<std::vector<std::string>>();
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace tollgate::server

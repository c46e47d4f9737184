#include "server/audit_log.h"

#include <array>
#include <map>
#include <string>
#include <utility>

#include "core/sha256.h"
#include "server/ids.h"
#include "server/wire_format.h"
#include "sql/connection_lock.h"
#include "sql/migrations.h"
#include "sql/postgres_connection.h"
#include "sql/statement_cache.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

using sql::prepare_once;
using sql::Transaction;
using sql::TransactionKind;

// Each entry moves the schema one version up. Never edit a released migration: add one.
constexpr std::array<sql::Migration, 2> kMigrations = {{
    // 1: the log.
    {R"sql(
CREATE TABLE server_audit_log (
  audit_id INTEGER PRIMARY KEY AUTOINCREMENT, received_at INTEGER NOT NULL,
  thread_id TEXT NOT NULL, run_id TEXT NOT NULL, assistant_id TEXT NOT NULL,
  graph_id TEXT NOT NULL, reviewer TEXT NOT NULL, checkpoint_id TEXT NOT NULL,
  shown TEXT NOT NULL, decided TEXT NOT NULL, outcome TEXT NOT NULL, message TEXT NOT NULL,
  settled_at INTEGER NOT NULL);
CREATE INDEX server_audit_log_by_thread ON server_audit_log(thread_id, audit_id);
)sql",
     // PostgreSQL: ids are given by append (the previous greatest plus one).
     R"sql(
CREATE TABLE server_audit_log (
  audit_id BIGINT PRIMARY KEY, received_at BIGINT NOT NULL,
  thread_id TEXT NOT NULL, run_id TEXT NOT NULL, assistant_id TEXT NOT NULL,
  graph_id TEXT NOT NULL, reviewer TEXT NOT NULL, checkpoint_id TEXT NOT NULL,
  shown TEXT NOT NULL, decided TEXT NOT NULL, outcome TEXT NOT NULL, message TEXT NOT NULL,
  settled_at BIGINT NOT NULL);
CREATE INDEX server_audit_log_by_thread ON server_audit_log(thread_id, audit_id);
)sql"},
    // 2: the hash chain. Rows written at version 1 are chained when the log is opened
    // (AuditLog::chain_unchained).
    {R"sql(
ALTER TABLE server_audit_log ADD COLUMN kind TEXT NOT NULL DEFAULT 'decision';
ALTER TABLE server_audit_log ADD COLUMN refers_to INTEGER NOT NULL DEFAULT 0;
ALTER TABLE server_audit_log ADD COLUMN prev_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE server_audit_log ADD COLUMN hash TEXT NOT NULL DEFAULT '';
)sql",
     R"sql(
ALTER TABLE server_audit_log ADD COLUMN kind TEXT NOT NULL DEFAULT 'decision';
ALTER TABLE server_audit_log ADD COLUMN refers_to BIGINT NOT NULL DEFAULT 0;
ALTER TABLE server_audit_log ADD COLUMN prev_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE server_audit_log ADD COLUMN hash TEXT NOT NULL DEFAULT '';
)sql"},
}};

// Files made before tollgate_schema had the log without a version: that is version 1.
int adopt_legacy_version(sql::Connection& connection) {
  return sql::table_exists(connection, "server_audit_log") ? 1 : 0;
}

constexpr sql::Schema kSchema{"audit_log", kMigrations, adopt_legacy_version};

constexpr const char* kColumns =
    "audit_id, received_at, thread_id, run_id, assistant_id, graph_id, reviewer, checkpoint_id, "
    "shown, decided, outcome, message, settled_at, kind, refers_to, prev_hash, hash";

Json parse_stored(const std::string& text) {
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_discarded() ? Json(text) : value;
}

AuditEntry read_entry(const sql::Statement& s) {
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
  e.kind = s.text(13);
  e.refers_to = s.integer(14);
  e.prev_hash = s.text(15);
  e.hash = s.text(16);
  return e;
}

// Entries whose outcome is settled later by an outcome entry (their own outcome columns are
// not hashed).
bool settled_later(const std::string& kind) {
  return kind == "decision" || kind == "state_write";
}

// Every write transaction of the log takes this lock first on PostgreSQL (released at its
// commit), so processes sharing the database append one after the other: an append reads the
// greatest id and the last hash, and two at once would fork the chain or collide on the id.
// The key is derived from the schema, so logs in other schemas of the database do not wait.
// On SQLite the write transaction (BEGIN IMMEDIATE) already holds the file's one write lock.
constexpr const char* kSerialiseWriters =
    "SELECT pg_advisory_xact_lock(hashtextextended('tollgate.server_audit_log.' || "
    "current_schema(), 0))";
constexpr const char* kLastEntry =
    "SELECT audit_id, hash FROM server_audit_log ORDER BY audit_id DESC LIMIT 1";

void serialise_writers(sql::StatementCache& statements) {
  if (statements.connection().dialect() != sql::Dialect::kPostgres) return;
  statements.use(kSerialiseWriters)->step();
}

// The id and hash of the log's last entry; 0 and "" when it has none.
std::pair<std::int64_t, std::string> last_entry_locked(sql::StatementCache& statements) {
  auto s = statements.use(kLastEntry);
  if (!s->step()) return {0, std::string()};
  return {s->integer(0), s->text(1)};
}

}  // namespace

std::string audit_identity(const Identity& identity) {
  return identity.authenticated ? identity.id : std::string();
}

std::string audit_entry_hash(const AuditEntry& e, const std::string& prev_hash) {
  return audit_entry_hash(e, prev_hash, event_json(e.shown), event_json(e.decided));
}

std::string audit_entry_hash(const AuditEntry& e, const std::string& prev_hash,
                             std::string_view shown_text, std::string_view decided_text) {
  // The canonical JSON is the event_json text of an object of the hashed fields, whose members
  // come in key order. It is written here member by member in that order, without copying
  // `shown` and `decided` into such an object. event_json is dump()'s text for the valid UTF-8
  // every entry holds (dump() throws on other bytes), so chains hashed by either verify alike.
  const bool own_outcome = !settled_later(e.kind);
  std::string text = prev_hash;
  text.reserve(prev_hash.size() + 512);
  text += "\n{";
  auto key = [&text](const char* name) {
    if (text.back() != '{') text += ',';
    text += '"';
    text += name;
    text += "\":";
  };
  auto string = [&](const char* name, const std::string& value) {
    key(name);
    append_json_string(text, value);
  };
  auto number = [&](const char* name, std::int64_t value) {
    key(name);
    text += std::to_string(value);
  };
  auto value = [&](const char* name, std::string_view json_text) {
    key(name);
    text += json_text;
  };
  string("assistant_id", e.assistant_id);
  number("audit_id", e.id);
  string("checkpoint_id", e.checkpoint_id);
  value("decided", decided_text);
  string("graph_id", e.graph_id);
  string("kind", e.kind);
  if (own_outcome) {
    string("message", e.message);
    string("outcome", e.outcome);
  }
  number("received_at", e.received_at);
  number("refers_to", e.refers_to);
  string("reviewer", e.reviewer);
  string("run_id", e.run_id);
  if (own_outcome) number("settled_at", e.settled_at);
  value("shown", shown_text);
  string("thread_id", e.thread_id);
  text += '}';
  return core::sha256_hex(text);
}

Json AuditEntry::to_json() const {
  auto optional_text = [](const std::string& text) { return text.empty() ? Json() : Json(text); };
  return Json{{"audit_id", id},
              {"kind", kind},
              {"refers_to", refers_to == 0 ? Json() : Json(refers_to)},
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
              {"settled_at", settled_at == 0 ? Json() : Json(iso_timestamp(settled_at))},
              {"prev_hash", prev_hash},
              {"hash", hash}};
}

AuditLog::AuditLog(const std::string& db_path)
    : AuditLog(sql::shared_sqlite_file(db_path, sql::SqliteSync::kFull, std::chrono::milliseconds(10000))) {}

AuditLog::AuditLog(std::unique_ptr<sql::Connection> connection)
    : AuditLog(sql::SharedConnection::alone(std::move(connection))) {}

AuditLog::AuditLog(sql::SharedConnection connection)
    : mutex_(std::move(connection.lock)),
      db_(std::move(connection.connection)),
      statements_(std::make_unique<sql::StatementCache>(*db_)) {
  {
    std::lock_guard lock(mutex_);
    sql::migrate(*db_, kSchema);
  }
  chain_unchained();
}

AuditLog::~AuditLog() = default;

void AuditLog::chain_unchained() {
  std::lock_guard lock(mutex_);
  {
    auto unchained = prepare_once(*db_, "SELECT 1 FROM server_audit_log WHERE hash = '' LIMIT 1");
    if (!unchained->step()) return;
  }
  Transaction transaction(*db_, TransactionKind::kWrite);
  serialise_writers(*statements_);
  std::vector<AuditEntry> rows;
  {
    auto s = prepare_once(*db_, std::string("SELECT ") + kColumns +
                                    " FROM server_audit_log WHERE hash = '' ORDER BY audit_id");
    while (s->step()) rows.push_back(read_entry(*s));
  }
  // Only a log of version 1 has unchained rows, and then all of them are.
  std::string prev;
  auto link =
      prepare_once(*db_, "UPDATE server_audit_log SET prev_hash = ?, hash = ? WHERE audit_id = ?");
  for (const AuditEntry& row : rows) {
    const std::string hash = audit_entry_hash(row, prev);
    link->bind(1, prev).bind(2, hash).bind(3, row.id).run();
    link->reset();
    prev = hash;
  }
  for (const AuditEntry& row : rows) {
    if (row.outcome == "pending") continue;
    AuditEntry outcome;
    outcome.kind = "outcome";
    outcome.refers_to = row.id;
    outcome.received_at = row.settled_at;
    outcome.thread_id = row.thread_id;
    outcome.run_id = row.run_id;
    outcome.outcome = row.outcome;
    outcome.message = row.message;
    outcome.settled_at = row.settled_at;
    append_locked(outcome, EntryTexts(outcome));
  }
  transaction.commit();
}

AuditLog::EntryTexts::EntryTexts(const AuditEntry& entry)
    : shown(event_json(entry.shown)), decided(event_json(entry.decided)) {}

AuditLog::ChainHead AuditLog::begin_chain_locked(std::optional<Transaction>& transaction) {
  for (int attempt = 0;; ++attempt) {
    transaction.emplace(*db_, TransactionKind::kWrite);
    try {
      if (db_->dialect() != sql::Dialect::kPostgres) {
        auto [id, hash] = last_entry_locked(*statements_);
        return {id, std::move(hash)};
      }
      // Both in one pipeline: the head's statement begins once the lock is held, so its
      // snapshot holds every entry any writer committed.
      auto& lock = static_cast<sql::PostgresStatement&>(statements_->get(kSerialiseWriters));
      auto& last = static_cast<sql::PostgresStatement&>(statements_->get(kLastEntry));
      sql::StatementUse<sql::Statement> use(last);
      {
        sql::PostgresPipeline pipeline(static_cast<sql::PostgresConnection&>(*db_));
        pipeline.add(lock);
        pipeline.add(last, /*keep_result=*/true);
        pipeline.finish();
      }
      if (!last.step()) return {};
      return {last.integer(0), last.text(1)};
    } catch (const Error& e) {
      transaction.reset();  // rolled back: it held the lock at most
      if (attempt > 0 || e.code() != ErrorCode::kUnavailable) throw;
    }
  }
}

std::int64_t AuditLog::append_locked(AuditEntry entry, const EntryTexts& texts,
                                     sql::Transaction* commit, const ChainHead* head) {
  auto [last_id, last_hash] =
      head != nullptr ? std::pair(head->id, head->hash) : last_entry_locked(*statements_);
  entry.prev_hash = std::move(last_hash);
  entry.id = last_id + 1;
  if (entry.received_at == 0) entry.received_at = now_millis();
  if (db_->dialect() == sql::Dialect::kSqlite) {
    // AUTOINCREMENT never reuses an id: the next id is past any deleted row too.
    auto seq = statements_->use("SELECT seq FROM sqlite_sequence WHERE name = 'server_audit_log'");
    if (seq->step() && seq->integer(0) >= entry.id) entry.id = seq->integer(0) + 1;
  }
  entry.hash = audit_entry_hash(entry, entry.prev_hash, texts.shown, texts.decided);
  auto s = statements_->use(std::string("INSERT INTO server_audit_log (") + kColumns +
                            ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  s->bind(1, entry.id).bind(2, entry.received_at).bind(3, entry.thread_id).bind(4, entry.run_id);
  s->bind(5, entry.assistant_id).bind(6, entry.graph_id).bind(7, entry.reviewer);
  s->bind(8, entry.checkpoint_id).bind(9, texts.shown).bind(10, texts.decided);
  s->bind(11, entry.outcome).bind(12, entry.message).bind(13, entry.settled_at);
  s->bind(14, entry.kind).bind(15, entry.refers_to).bind(16, entry.prev_hash).bind(17, entry.hash);
  if (commit != nullptr) {
    commit->commit_after(*s);
  } else {
    s->run();
  }
  return entry.id;
}

std::int64_t AuditLog::append(const AuditEntry& entry) {
  const EntryTexts texts(entry);
  std::lock_guard lock(mutex_);
  std::optional<Transaction> transaction;
  const ChainHead head = begin_chain_locked(transaction);
  AuditEntry appended = entry;
  if (settled_later(appended.kind)) {
    appended.outcome = "pending";
    appended.message.clear();
    appended.settled_at = 0;
  } else if (appended.settled_at == 0) {
    appended.settled_at = appended.received_at != 0 ? appended.received_at : now_millis();
  }
  return append_locked(std::move(appended), texts, &*transaction, &head);
}

bool AuditLog::settle_locked(std::int64_t id, const std::string& outcome,
                             const std::string& message, sql::Transaction* commit,
                             const ChainHead* head) {
  const std::int64_t now = now_millis();
  std::string thread_id, run_id;
  {
    // One statement settles the entry and names its thread and run (RETURNING: SQLite 3.35+,
    // PostgreSQL); no row when it is not pending.
    auto s = statements_->use(
        "UPDATE server_audit_log SET outcome = ?, message = ?, settled_at = ? "
        "WHERE audit_id = ? AND outcome = 'pending' RETURNING thread_id, run_id");
    if (!s->bind(1, outcome).bind(2, message).bind(3, now).bind(4, id).step()) return false;
    thread_id = s->text(0);
    run_id = s->text(1);
  }
  AuditEntry settled;
  settled.kind = "outcome";
  settled.refers_to = id;
  settled.received_at = now;
  settled.thread_id = thread_id;
  settled.run_id = run_id;
  settled.outcome = outcome;
  settled.message = message;
  settled.settled_at = now;
  const EntryTexts texts(settled);  // an outcome shows and decides nothing: two "null"s
  append_locked(std::move(settled), texts, commit, head);
  return true;
}

void AuditLog::settle(std::int64_t id, const std::string& outcome, const std::string& message) {
  std::lock_guard lock(mutex_);
  std::optional<Transaction> transaction;
  const ChainHead head = begin_chain_locked(transaction);
  settle_locked(id, outcome, message, &*transaction, &head);  // committed when it settled it
}

std::size_t AuditLog::settle_lost(const std::string& message,
                                  const std::set<std::string>& uncertain,
                                  const std::string& uncertain_message,
                                  const std::set<std::string>& continued,
                                  const std::set<std::string>* only) {
  std::lock_guard lock(mutex_);
  Transaction transaction(*db_, TransactionKind::kWrite);
  serialise_writers(*statements_);
  std::vector<std::pair<std::int64_t, bool>> pending;  // (audit id, effect uncertain)
  {
    auto s = prepare_once(*db_,
                          "SELECT audit_id, run_id FROM server_audit_log WHERE outcome = 'pending' "
                          "ORDER BY audit_id");
    while (s->step()) {
      const std::string run_id = s->text(1);
      if (continued.count(run_id) != 0) continue;
      if (only != nullptr && only->count(run_id) == 0) continue;
      pending.emplace_back(s->integer(0), uncertain.count(run_id) != 0);
    }
  }
  std::size_t count = 0;
  for (const auto& [id, effect_uncertain] : pending) {
    const bool settled = effect_uncertain ? settle_locked(id, "effect_uncertain", uncertain_message)
                                          : settle_locked(id, "lost", message);
    count += settled ? 1 : 0;
  }
  transaction.commit();
  return count;
}

std::optional<std::int64_t> AuditLog::pending_decision_of(const std::string& run_id) const {
  std::lock_guard lock(mutex_);
  auto s = prepare_once(*db_,
                        "SELECT audit_id FROM server_audit_log WHERE outcome = 'pending' AND "
                        "run_id = ? ORDER BY audit_id DESC LIMIT 1");
  if (!s->bind(1, run_id).step()) return std::nullopt;
  return s->integer(0);
}

std::vector<AuditEntry> AuditLog::list(const AuditQuery& query) const {
  std::lock_guard lock(mutex_);
  std::string sql = std::string("SELECT ") + kColumns + " FROM server_audit_log WHERE 1 = 1";
  if (!query.chain) sql += " AND kind <> 'outcome'";
  if (query.thread_id) sql += " AND thread_id = ?";
  if (query.before_id) sql += " AND audit_id < ?";
  sql += query.chain ? " ORDER BY audit_id ASC LIMIT ?" : " ORDER BY audit_id DESC LIMIT ?";
  auto s = prepare_once(*db_, sql);
  int index = 1;
  if (query.thread_id) s->bind(index++, *query.thread_id);
  if (query.before_id) s->bind(index++, *query.before_id);
  s->bind(index, static_cast<std::int64_t>(query.limit));
  std::vector<AuditEntry> entries;
  while (s->step()) entries.push_back(read_entry(*s));
  return entries;
}

AuditVerification AuditLog::verify() const {
  std::lock_guard lock(mutex_);
  AuditVerification result;
  auto broken = [&result](std::int64_t id, std::string reason) {
    result.intact = false;
    result.broken_id = id;
    result.reason = std::move(reason);
    return result;
  };
  std::map<std::int64_t, AuditEntry> settled_by;  // decision id -> its outcome entry
  std::map<std::int64_t, AuditEntry> settled_later_entries;
  std::string prev;
  auto s = prepare_once(
      *db_, std::string("SELECT ") + kColumns + " FROM server_audit_log ORDER BY audit_id");
  while (s->step()) {
    AuditEntry e = read_entry(*s);
    ++result.entries;
    if (e.prev_hash != prev) {
      return broken(e.id,
                    "its prev_hash is not the hash of the entry before it (an entry was "
                    "removed, inserted or reordered)");
    }
    if (audit_entry_hash(e, e.prev_hash) != e.hash) {
      return broken(e.id, "its hash does not match its contents (the entry was changed)");
    }
    prev = e.hash;
    if (e.kind == "outcome") {
      if (!settled_later_entries.count(e.refers_to) || settled_by.count(e.refers_to)) {
        return broken(e.id, "it settles entry " + std::to_string(e.refers_to) +
                                ", which is not an unsettled earlier entry");
      }
      settled_by.emplace(e.refers_to, e);
    } else if (settled_later(e.kind)) {
      settled_later_entries.emplace(e.id, e);
    }
  }
  for (const auto& [id, e] : settled_later_entries) {
    auto outcome = settled_by.find(id);
    const bool shows = outcome == settled_by.end() ? e.outcome == "pending"
                                                   : e.outcome == outcome->second.outcome &&
                                                         e.message == outcome->second.message &&
                                                         e.settled_at == outcome->second.settled_at;
    if (!shows) {
      return broken(id,
                    "its outcome is not the one its outcome entry settled (the entry was "
                    "changed)");
    }
  }
  return result;
}

}  // namespace tollgate::server

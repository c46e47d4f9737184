#include "server/sql_review_store.h"

#include <algorithm>
#include <array>
#include <chrono>

#include "server/ids.h"
#include "sql/migrations.h"
#include "sql/connection_lock.h"
#include "sql/statement_cache.h"

namespace tollgate::server {
namespace {

using sql::prepare_once;
using sql::Transaction;
using sql::TransactionKind;

// Each entry moves the schema one version up. Never edit a released migration: add one.
constexpr std::array<sql::Migration, 4> kMigrations = {{
    // 1: the records.
    {R"sql(
CREATE TABLE server_reviews (
  review_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL,
  interrupt_id TEXT NOT NULL, action_index INTEGER NOT NULL, tool_call_id TEXT NOT NULL,
  digest TEXT NOT NULL, created_at INTEGER NOT NULL, status TEXT NOT NULL,
  decided_by TEXT NOT NULL, run_id TEXT NOT NULL, decided_at INTEGER NOT NULL,
  UNIQUE (thread_id, checkpoint_id, interrupt_id, action_index));
CREATE INDEX server_reviews_by_run ON server_reviews(run_id);
CREATE INDEX server_reviews_pending ON server_reviews(thread_id, status);
)sql",
     // PostgreSQL: rowid keeps the insertion order SQLite's rowid gives (ORDER BY rowid).
     R"sql(
CREATE TABLE server_reviews (
  rowid BIGSERIAL UNIQUE, review_id TEXT COLLATE "C" PRIMARY KEY,
  thread_id TEXT COLLATE "C" NOT NULL, checkpoint_id TEXT COLLATE "C" NOT NULL,
  interrupt_id TEXT COLLATE "C" NOT NULL, action_index BIGINT NOT NULL,
  tool_call_id TEXT NOT NULL, digest TEXT NOT NULL, created_at BIGINT NOT NULL,
  status TEXT NOT NULL, decided_by TEXT NOT NULL, run_id TEXT NOT NULL, decided_at BIGINT NOT NULL,
  UNIQUE (thread_id, checkpoint_id, interrupt_id, action_index));
CREATE INDEX server_reviews_by_run ON server_reviews(run_id);
CREATE INDEX server_reviews_pending ON server_reviews(thread_id, status);
)sql"},
    // 2: approvals collected one by one (approvals_required > 1).
    {R"sql(
CREATE TABLE server_review_approvals (
  thread_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL, interrupt_id TEXT NOT NULL,
  action_index INTEGER NOT NULL, approved_by TEXT NOT NULL, approved_at INTEGER NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_id, interrupt_id, action_index, approved_by));
)sql",
     R"sql(
CREATE TABLE server_review_approvals (
  rowid BIGSERIAL UNIQUE, thread_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL,
  interrupt_id TEXT NOT NULL, action_index BIGINT NOT NULL, approved_by TEXT NOT NULL,
  approved_at BIGINT NOT NULL,
  PRIMARY KEY (thread_id, checkpoint_id, interrupt_id, action_index, approved_by));
)sql"},
    // 3: review deadlines (0: none) and what answers them (JSON text; '': none given).
    {R"sql(
ALTER TABLE server_reviews ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE server_reviews ADD COLUMN on_timeout TEXT NOT NULL DEFAULT '';
CREATE INDEX server_reviews_expiry ON server_reviews(status, expires_at);
)sql",
     R"sql(
ALTER TABLE server_reviews ADD COLUMN expires_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE server_reviews ADD COLUMN on_timeout TEXT NOT NULL DEFAULT '';
CREATE INDEX server_reviews_expiry ON server_reviews(status, expires_at);
)sql"},
    // 4: claims of pending reviews ('' / 0: unclaimed); live while claim_expires_at is ahead.
    {R"sql(
ALTER TABLE server_reviews ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE server_reviews ADD COLUMN claimed_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE server_reviews ADD COLUMN claim_expires_at INTEGER NOT NULL DEFAULT 0;
)sql",
     R"sql(
ALTER TABLE server_reviews ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE server_reviews ADD COLUMN claimed_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE server_reviews ADD COLUMN claim_expires_at BIGINT NOT NULL DEFAULT 0;
)sql"},
}};

// Resets the claim columns, for updates that end a review's pending state.
constexpr const char* kNoClaim = "claimed_by = '', claimed_at = 0, claim_expires_at = 0";

constexpr sql::Schema kSchema{"reviews", kMigrations};

constexpr const char* kColumns =
    "review_id, thread_id, checkpoint_id, interrupt_id, action_index, tool_call_id, digest, "
    "created_at, status, decided_by, run_id, decided_at, expires_at, on_timeout";

ReviewRecord read_record(const sql::Statement& s) {
  ReviewRecord r;
  r.review_id = s.text(0);
  r.thread_id = s.text(1);
  r.checkpoint_id = s.text(2);
  r.interrupt_id = s.text(3);
  r.action_index = static_cast<int>(s.integer(4));
  r.tool_call_id = s.text(5);
  r.digest = s.text(6);
  r.created_at = s.integer(7);
  r.status = parse_review_status(s.text(8), "server_reviews.status");
  r.decided_by = s.text(9);
  r.run_id = s.text(10);
  r.decided_at = s.integer(11);
  r.expires_at = s.integer(12);
  const std::string on_timeout = s.text(13);
  if (!on_timeout.empty())
    r.on_timeout = Json::parse(on_timeout, nullptr, /*allow_exceptions=*/false);
  if (r.on_timeout.is_discarded()) r.on_timeout = Json();
  return r;
}

}  // namespace

Json ReviewRecord::to_json() const {
  auto optional_text = [](const std::string& text) { return text.empty() ? Json() : Json(text); };
  return Json{{"review_id", review_id},
              {"thread_id", thread_id},
              {"checkpoint_id", checkpoint_id},
              {"interrupt_id", interrupt_id},
              {"action_index", action_index},
              {"tool_call_id", optional_text(tool_call_id)},
              {"digest", digest},
              {"created_at", iso_timestamp(created_at)},
              {"status", to_string(status)},
              {"decided_by", optional_text(decided_by)},
              {"run_id", optional_text(run_id)},
              {"decided_at", decided_at == 0 ? Json() : Json(iso_timestamp(decided_at))},
              {"expires_at", expires_at == 0 ? Json() : Json(iso_timestamp(expires_at))},
              {"on_timeout", on_timeout}};
}

Json ReviewClaim::to_json() const {
  return Json{{"thread_id", thread_id},
              {"interrupt_id", interrupt_id},
              {"claimed_by", claimed_by},
              {"claimed_at", iso_timestamp(claimed_at)},
              {"expires_at", iso_timestamp(expires_at)}};
}

SqlReviewStore::SqlReviewStore(std::unique_ptr<sql::Connection> connection)
    : SqlReviewStore(sql::SharedConnection::alone(std::move(connection))) {}

SqlReviewStore::SqlReviewStore(sql::SharedConnection connection)
    : mutex_(std::move(connection.lock)),
      claim_mutex_(mutex_.at_level(sql::SqliteSync::kNormal)),
      db_(std::move(connection.connection)),
      statements_(std::make_unique<sql::StatementCache>(*db_)) {
  std::lock_guard lock(mutex_);
  sql::migrate(*db_, kSchema);
}

SqliteReviewStore::SqliteReviewStore(const std::string& db_path)
    : SqlReviewStore(sql::shared_sqlite_file(db_path, sql::SqliteSync::kFull, std::chrono::milliseconds(10000))) {}

SqlReviewStore::~SqlReviewStore() = default;

void SqlReviewStore::add_pending(const std::vector<ReviewRecord>& records) {
  if (records.empty()) return;
  std::lock_guard lock(mutex_);
  Transaction transaction(*db_, TransactionKind::kWrite);
  auto s = statements_->use(std::string("INSERT INTO server_reviews (") + kColumns +
                            ") VALUES (?,?,?,?,?,?,?,?,'pending','','',0,?,?) ON CONFLICT DO "
                            "NOTHING");
  for (std::size_t i = 0; i < records.size(); ++i) {
    const ReviewRecord& r = records[i];
    s->bind(1, r.review_id).bind(2, r.thread_id).bind(3, r.checkpoint_id).bind(4, r.interrupt_id);
    s->bind(5, std::int64_t{r.action_index}).bind(6, r.tool_call_id).bind(7, r.digest);
    s->bind(8, r.created_at != 0 ? r.created_at : now_millis());
    s->bind(9, r.expires_at).bind(10, r.on_timeout.is_null() ? std::string() : r.on_timeout.dump());
    if (i + 1 == records.size()) {
      transaction.commit_after(*s);  // the last with the COMMIT (one round trip on PostgreSQL)
    } else {
      s->run();
      s->reset();
    }
  }
}

std::vector<ReviewRecord> SqlReviewStore::list(const std::string& thread_id) {
  std::lock_guard lock(mutex_);
  auto s = statements_->use(std::string("SELECT ") + kColumns +
                            " FROM server_reviews WHERE thread_id = ? ORDER BY rowid");
  s->bind(1, thread_id);
  std::vector<ReviewRecord> records;
  while (s->step()) records.push_back(read_record(*s));
  return records;
}

std::size_t SqlReviewStore::decide(const std::string& thread_id,
                                      const std::string& checkpoint_id,
                                      const std::string& interrupt_id,
                                      const std::string& decided_by, const std::string& run_id,
                                      std::int64_t at) {
  return claim(ReviewStatus::kDecided, thread_id, checkpoint_id, interrupt_id, decided_by, run_id,
               at);
}

std::size_t SqlReviewStore::expire(const std::string& thread_id,
                                      const std::string& checkpoint_id,
                                      const std::string& interrupt_id,
                                      const std::string& decided_by, const std::string& run_id,
                                      std::int64_t at) {
  return claim(ReviewStatus::kExpired, thread_id, checkpoint_id, interrupt_id, decided_by, run_id,
               at);
}

std::size_t SqlReviewStore::claim(ReviewStatus status, const std::string& thread_id,
                                  const std::string& checkpoint_id, const std::string& interrupt_id,
                                  const std::string& decided_by, const std::string& run_id,
                                  std::int64_t at) {
  std::lock_guard lock(claim_mutex_);
  auto s = statements_->use(std::string("UPDATE server_reviews SET status = ?, decided_by = ?, "
                                        "run_id = ?, decided_at = ?, ") +
                            kNoClaim +
                            " WHERE thread_id = ? AND checkpoint_id = ? AND "
                            "interrupt_id = ? AND status = 'pending'");
  s->bind(1, to_string(status)).bind(2, decided_by).bind(3, run_id).bind(4, at);
  s->bind(5, thread_id).bind(6, checkpoint_id).bind(7, interrupt_id);
  return static_cast<std::size_t>(s->run());
}

void SqlReviewStore::reopen(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  auto s = statements_->use(
      "UPDATE server_reviews SET status = 'pending', decided_by = '', run_id = '', "
      "decided_at = 0 WHERE run_id = ? AND status IN ('decided', 'expired')");
  s->bind(1, run_id).run();
}

void SqlReviewStore::disarm(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  auto s = statements_->use("UPDATE server_reviews SET expires_at = 0 WHERE run_id = ?");
  s->bind(1, run_id).run();
}

std::vector<ReviewRecord> SqlReviewStore::at_checkpoint(const std::string& thread_id,
                                                        const std::string& checkpoint_id) {
  std::lock_guard lock(mutex_);
  auto s = statements_->use(std::string("SELECT ") + kColumns +
                            " FROM server_reviews WHERE thread_id = ? AND checkpoint_id = ? "
                            "ORDER BY interrupt_id, action_index");
  s->bind(1, thread_id).bind(2, checkpoint_id);
  std::vector<ReviewRecord> records;
  while (s->step()) records.push_back(read_record(*s));
  return records;
}

std::optional<std::int64_t> SqlReviewStore::next_expiry() {
  std::lock_guard lock(mutex_);
  auto s = statements_->use(
      "SELECT expires_at FROM server_reviews WHERE status = 'pending' AND "
      "expires_at > 0 ORDER BY expires_at LIMIT 1");
  if (!s->step()) return std::nullopt;
  return s->integer(0);
}

std::vector<ReviewRecord> SqlReviewStore::due(std::int64_t now) {
  std::lock_guard lock(mutex_);
  auto s = statements_->use(std::string("SELECT ") + kColumns +
                            " FROM server_reviews WHERE status = 'pending' AND expires_at > 0 "
                            "AND expires_at <= ? ORDER BY expires_at, rowid");
  s->bind(1, now);
  std::vector<ReviewRecord> records;
  while (s->step()) records.push_back(read_record(*s));
  return records;
}

void SqlReviewStore::supersede_others(const std::string& thread_id,
                                      const std::string& checkpoint_id,
                                      const std::vector<std::string>& interrupt_ids) {
  std::lock_guard lock(mutex_);
  // Read first, write only when something moved on: most run ends supersede nothing, and the
  // update is conditional, so nothing decided meanwhile is overwritten.
  std::vector<std::string> stale;
  {
    auto s = statements_->use(
        "SELECT review_id, checkpoint_id, interrupt_id FROM server_reviews WHERE "
        "thread_id = ? AND status = 'pending'");
    s->bind(1, thread_id);
    while (s->step()) {
      const bool current =
          s->text(1) == checkpoint_id &&
          std::find(interrupt_ids.begin(), interrupt_ids.end(), s->text(2)) != interrupt_ids.end();
      if (!current) stale.push_back(s->text(0));
    }
  }
  if (stale.empty()) return;
  Transaction transaction(*db_, TransactionKind::kWrite);
  auto update = statements_->use(std::string("UPDATE server_reviews SET status = 'superseded', ") +
                                 kNoClaim + " WHERE review_id = ? AND status = 'pending'");
  for (const std::string& id : stale) {
    update->bind(1, id).run();
    update->reset();
  }
  transaction.commit();
}

bool SqlReviewStore::add_approval(const std::string& thread_id, const std::string& checkpoint_id,
                                  const ReviewApproval& approval) {
  std::lock_guard lock(mutex_);
  auto s = statements_->use(
      "INSERT INTO server_review_approvals (thread_id, checkpoint_id, interrupt_id, "
      "action_index, approved_by, approved_at) VALUES (?,?,?,?,?,?) ON CONFLICT DO "
      "NOTHING");
  s->bind(1, thread_id).bind(2, checkpoint_id).bind(3, approval.interrupt_id);
  s->bind(4, std::int64_t{approval.action_index}).bind(5, approval.approved_by);
  s->bind(6, approval.approved_at != 0 ? approval.approved_at : now_millis());
  return s->run() == 1;
}

std::vector<ReviewApproval> SqlReviewStore::approvals(const std::string& thread_id,
                                                      const std::string& checkpoint_id) {
  std::lock_guard lock(mutex_);
  auto s = statements_->use(
      "SELECT interrupt_id, action_index, approved_by, approved_at FROM "
      "server_review_approvals WHERE thread_id = ? AND checkpoint_id = ? ORDER BY "
      "approved_at, rowid");
  s->bind(1, thread_id).bind(2, checkpoint_id);
  std::vector<ReviewApproval> out;
  while (s->step()) {
    out.push_back(
        ReviewApproval{s->text(0), static_cast<int>(s->integer(1)), s->text(2), s->integer(3)});
  }
  return out;
}

std::optional<ReviewClaim> SqlReviewStore::claim_of_locked(const std::string& thread_id,
                                                           const std::string& interrupt_id) {
  auto s = statements_->use(
      "SELECT claimed_by, claimed_at, claim_expires_at FROM server_reviews WHERE "
      "thread_id = ? AND interrupt_id = ? AND status = 'pending' "
      "ORDER BY claim_expires_at DESC LIMIT 1");
  s->bind(1, thread_id).bind(2, interrupt_id);
  if (!s->step()) return std::nullopt;
  return ReviewClaim{thread_id, interrupt_id, s->text(0), s->integer(1), s->integer(2)};
}

std::optional<ReviewClaim> SqlReviewStore::take_claim(const std::string& thread_id,
                                                      const std::string& interrupt_id,
                                                      const std::string& claimed_by,
                                                      std::int64_t now, std::int64_t expires_at) {
  std::lock_guard lock(mutex_);
  Transaction transaction(*db_, TransactionKind::kWrite);
  std::optional<ReviewClaim> held = claim_of_locked(thread_id, interrupt_id);
  if (!held) return std::nullopt;
  if (held->expires_at > now && held->claimed_by != claimed_by) return held;
  // The holder claiming again keeps when it first claimed.
  const std::int64_t since =
      held->expires_at > now && held->claimed_by == claimed_by ? held->claimed_at : now;
  auto s = statements_->use(
      "UPDATE server_reviews SET claimed_by = ?, claimed_at = ?, "
      "claim_expires_at = ? WHERE thread_id = ? AND interrupt_id = ? AND "
      "status = 'pending'");
  s->bind(1, claimed_by)
      .bind(2, since)
      .bind(3, expires_at)
      .bind(4, thread_id)
      .bind(5, interrupt_id);
  s->run();
  transaction.commit();
  return ReviewClaim{thread_id, interrupt_id, claimed_by, since, expires_at};
}

std::optional<ReviewClaim> SqlReviewStore::release_claim(const std::string& thread_id,
                                                         const std::string& interrupt_id,
                                                         const std::string& held_by,
                                                         std::int64_t now) {
  std::lock_guard lock(mutex_);
  Transaction transaction(*db_, TransactionKind::kWrite);
  std::optional<ReviewClaim> held = claim_of_locked(thread_id, interrupt_id);
  if (!held || held->claimed_by.empty() || held->expires_at <= now ||
      (!held_by.empty() && held->claimed_by != held_by)) {
    return std::nullopt;
  }
  auto s = statements_->use(std::string("UPDATE server_reviews SET ") + kNoClaim +
                            " WHERE thread_id = ? AND interrupt_id = ? AND status = 'pending'");
  s->bind(1, thread_id).bind(2, interrupt_id).run();
  transaction.commit();
  return held;
}

std::vector<ReviewClaim> SqlReviewStore::live_claims(const std::vector<std::string>& thread_ids,
                                                     std::int64_t now) {
  std::vector<ReviewClaim> out;
  if (thread_ids.empty()) return out;
  std::string marks;
  for (std::size_t i = 0; i < thread_ids.size(); ++i) marks += i == 0 ? "?" : ",?";
  std::lock_guard lock(mutex_);
  auto s = prepare_once(*db_,
                        "SELECT thread_id, interrupt_id, MAX(claimed_by), MIN(claimed_at), "
                        "MAX(claim_expires_at) FROM server_reviews WHERE status = 'pending' AND "
                        "claimed_by <> '' AND claim_expires_at > ? AND thread_id IN (" +
                            marks +
                            ") GROUP BY thread_id, interrupt_id ORDER BY thread_id, interrupt_id");
  s->bind(1, now);
  for (std::size_t i = 0; i < thread_ids.size(); ++i)
    s->bind(static_cast<int>(i) + 2, thread_ids[i]);
  while (s->step()) {
    out.push_back(ReviewClaim{s->text(0), s->text(1), s->text(2), s->integer(3), s->integer(4)});
  }
  return out;
}

}  // namespace tollgate::server

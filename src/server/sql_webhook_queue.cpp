#include "server/sql_webhook_queue.h"

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
constexpr std::array<sql::Migration, 3> kMigrations = {{
    // 1: events and their deliveries.
    {R"sql(
CREATE TABLE server_webhook_events (
  event_id TEXT PRIMARY KEY, type TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE server_webhook_deliveries (
  delivery_id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, url TEXT NOT NULL,
  status TEXT NOT NULL, attempts INTEGER NOT NULL, next_attempt_at INTEGER NOT NULL,
  last_error TEXT NOT NULL, last_status INTEGER NOT NULL, created_at INTEGER NOT NULL,
  delivered_at INTEGER NOT NULL, UNIQUE (event_id, url));
CREATE INDEX server_webhook_deliveries_pending ON server_webhook_deliveries(status, url, delivery_id);
)sql",
     R"sql(
CREATE TABLE server_webhook_events (
  event_id TEXT PRIMARY KEY, type TEXT NOT NULL, body TEXT NOT NULL, created_at BIGINT NOT NULL);
CREATE TABLE server_webhook_deliveries (
  delivery_id BIGSERIAL PRIMARY KEY, event_id TEXT NOT NULL, url TEXT NOT NULL,
  status TEXT NOT NULL, attempts BIGINT NOT NULL, next_attempt_at BIGINT NOT NULL,
  last_error TEXT NOT NULL, last_status BIGINT NOT NULL, created_at BIGINT NOT NULL,
  delivered_at BIGINT NOT NULL, UNIQUE (event_id, url));
CREATE INDEX server_webhook_deliveries_pending ON server_webhook_deliveries(status, url, delivery_id);
)sql"},
    // 2: leases: the sender trying a delivery holds it until leased_until (several senders,
    // one per server replica, share the queue).
    {R"sql(
ALTER TABLE server_webhook_deliveries ADD COLUMN leased_by TEXT NOT NULL DEFAULT '';
ALTER TABLE server_webhook_deliveries ADD COLUMN leased_until INTEGER NOT NULL DEFAULT 0;
)sql",
     R"sql(
ALTER TABLE server_webhook_deliveries ADD COLUMN leased_by TEXT NOT NULL DEFAULT '';
ALTER TABLE server_webhook_deliveries ADD COLUMN leased_until BIGINT NOT NULL DEFAULT 0;
)sql"},
    // 3: retention reads events and deliveries by age.
    {R"sql(
CREATE INDEX server_webhook_events_by_time ON server_webhook_events(created_at);
CREATE INDEX server_webhook_deliveries_by_time ON server_webhook_deliveries(created_at);
)sql",
     R"sql(
CREATE INDEX server_webhook_events_by_time ON server_webhook_events(created_at);
CREATE INDEX server_webhook_deliveries_by_time ON server_webhook_deliveries(created_at);
)sql"},
}};

// Rows deleted per transaction by prune().
constexpr std::int64_t kPruneBatch = 1000;

constexpr sql::Schema kSchema{"webhooks", kMigrations};

constexpr const char* kSelect =
    "SELECT d.delivery_id, d.event_id, e.type, d.url, e.body, d.status, d.attempts, "
    "d.next_attempt_at, d.last_error, d.last_status, d.created_at, d.delivered_at, "
    "d.leased_by, d.leased_until FROM "
    "server_webhook_deliveries d JOIN server_webhook_events e ON e.event_id = d.event_id ";

WebhookDelivery read_delivery(const sql::Statement& s) {
  WebhookDelivery d;
  d.delivery_id = s.integer(0);
  d.event_id = s.text(1);
  d.type = s.text(2);
  d.url = s.text(3);
  d.body = s.text(4);
  d.status = parse_delivery_status(s.text(5), "server_webhook_deliveries.status");
  d.attempts = static_cast<int>(s.integer(6));
  d.next_attempt_at = s.integer(7);
  d.last_error = s.text(8);
  d.last_status = static_cast<int>(s.integer(9));
  d.created_at = s.integer(10);
  d.delivered_at = s.integer(11);
  d.leased_by = s.text(12);
  d.leased_until = s.integer(13);
  return d;
}

}  // namespace

SqlWebhookQueue::SqlWebhookQueue(std::unique_ptr<sql::Connection> connection)
    : SqlWebhookQueue(sql::SharedConnection::alone(std::move(connection))) {}

SqlWebhookQueue::SqlWebhookQueue(sql::SharedConnection connection)
    : mutex_(std::move(connection.lock)),
      db_(std::move(connection.connection)),
      statements_(std::make_unique<sql::StatementCache>(*db_)) {
  std::lock_guard lock(mutex_);
  sql::migrate(*db_, kSchema);
}

SqliteWebhookQueue::SqliteWebhookQueue(const std::string& db_path)
    : SqlWebhookQueue(sql::shared_sqlite_file(db_path, sql::SqliteSync::kFull, std::chrono::milliseconds(10000))) {}

SqlWebhookQueue::~SqlWebhookQueue() = default;

bool write_webhook_event(sql::StatementCache& statements, const NotificationEvent& event,
                         const std::vector<std::string>& urls) {
  {
    sql::Statement& insert =
        statements.get("INSERT INTO server_webhook_events (event_id, type, body, created_at) "
                       "VALUES (?,?,?,?) ON CONFLICT DO NOTHING");
    sql::StatementUse<sql::Statement> use(insert);
    // Only deliveries read the body: an event no receiver subscribes to keeps its id (telling
    // it again stays a no-op), type and time, not its text.
    insert.bind(1, event.id).bind(2, event.type);
    insert.bind(3, urls.empty() ? std::string() : event.to_json().dump());
    if (insert.bind(4, event.created_at).run() == 0) return false;
  }
  sql::Statement& queue =
      statements.get("INSERT INTO server_webhook_deliveries (event_id, url, status, attempts, "
                     "next_attempt_at, last_error, last_status, created_at, delivered_at) "
                     "VALUES (?,?,'pending',0,?,'',0,?,0) ON CONFLICT DO NOTHING");
  for (const std::string& url : urls) {
    sql::StatementUse<sql::Statement> use(queue);
    queue.bind(1, event.id).bind(2, url).bind(3, event.created_at).bind(4, event.created_at);
    queue.run();
  }
  return true;
}

bool SqlWebhookQueue::add(const NotificationEvent& event, const std::vector<std::string>& urls) {
  std::lock_guard lock(mutex_);
  Transaction transaction(*db_, TransactionKind::kWrite);
  if (!write_webhook_event(*statements_, event, urls)) return false;  // rolled back: nothing new
  transaction.commit();
  return true;
}

std::vector<WebhookDelivery> SqlWebhookQueue::heads() {
  std::lock_guard lock(mutex_);
  auto s = prepare_once(*db_, std::string(kSelect) +
                              "WHERE d.delivery_id IN (SELECT MIN(delivery_id) FROM "
                              "server_webhook_deliveries WHERE status = 'pending' GROUP BY url) "
                              "ORDER BY d.delivery_id");
  std::vector<WebhookDelivery> out;
  while (s->step()) out.push_back(read_delivery(*s));
  return out;
}

bool SqlWebhookQueue::lease(const WebhookDelivery& head, const std::string& holder,
                            std::int64_t now, std::int64_t leased_until) {
  std::lock_guard lock(mutex_);
  // One statement, so that of two senders leasing at once one wins (PostgreSQL re-checks the
  // conditions on the row the other just leased; SQLite runs one write at a time). The older
  // pending delivery it must not overtake is one whose insert committed after the heads were
  // read.
  auto s =
      prepare_once(*db_,
                   "UPDATE server_webhook_deliveries SET leased_by = ?1, leased_until = ?2 "
                   "WHERE delivery_id = ?3 AND attempts = ?4 AND status = 'pending' "
                   "AND next_attempt_at <= ?5 AND (leased_until <= ?5 OR leased_by = ?1) "
                   "AND NOT EXISTS (SELECT 1 FROM server_webhook_deliveries older WHERE "
                   "older.url = server_webhook_deliveries.url AND older.status = 'pending' AND "
                   "older.delivery_id < server_webhook_deliveries.delivery_id)");
  s->bind(1, holder).bind(2, leased_until).bind(3, head.delivery_id);
  s->bind(4, std::int64_t{head.attempts}).bind(5, now);
  return s->run() == 1;
}

void SqlWebhookQueue::delivered(std::int64_t delivery_id, int status, std::int64_t at) {
  std::lock_guard lock(mutex_);
  auto s = prepare_once(*db_,
                        "UPDATE server_webhook_deliveries SET status = 'delivered', attempts = "
                        "attempts + 1, next_attempt_at = 0, last_error = '', last_status = ?, "
                        "delivered_at = ?, leased_by = '', leased_until = 0 WHERE delivery_id = ? "
                        "AND status = 'pending'");
  s->bind(1, std::int64_t{status}).bind(2, at).bind(3, delivery_id).run();
}

void SqlWebhookQueue::attempt_failed(std::int64_t delivery_id, const std::string& holder,
                                     const std::string& error, int status,
                                     std::int64_t next_attempt_at, bool give_up) {
  std::lock_guard lock(mutex_);
  auto s = prepare_once(*db_,
                        "UPDATE server_webhook_deliveries SET status = ?, attempts = attempts + 1, "
                        "next_attempt_at = ?, last_error = ?, last_status = ?, leased_by = '', "
                        "leased_until = 0 WHERE delivery_id = ? AND status = 'pending' AND "
                        "leased_by = ?");
  s->bind(1, to_string(give_up ? DeliveryStatus::kFailed : DeliveryStatus::kPending))
      .bind(2, give_up ? std::int64_t{0} : next_attempt_at);
  s->bind(3, error).bind(4, std::int64_t{status}).bind(5, delivery_id).bind(6, holder).run();
}

std::size_t SqlWebhookQueue::prune(std::int64_t before) {
  // Oldest first, a batch at a time: each statement deletes what its subquery picked.
  static constexpr const char* kEndedDeliveries =
      "DELETE FROM server_webhook_deliveries WHERE delivery_id IN (SELECT delivery_id FROM "
      "server_webhook_deliveries WHERE created_at < ?1 AND status <> 'pending' ORDER BY "
      "created_at LIMIT ?2)";
  static constexpr const char* kEventsLeftAlone =
      "DELETE FROM server_webhook_events WHERE event_id IN (SELECT e.event_id FROM "
      "server_webhook_events e WHERE e.created_at < ?1 AND NOT EXISTS (SELECT 1 FROM "
      "server_webhook_deliveries d WHERE d.event_id = e.event_id) ORDER BY e.created_at "
      "LIMIT ?2)";
  std::size_t deleted = 0;
  for (const char* text : {kEndedDeliveries, kEventsLeftAlone}) {
    for (;;) {
      std::lock_guard lock(mutex_);
      Transaction transaction(*db_, TransactionKind::kWrite);
      sql::Statement& s = statements_->get(text);
      sql::StatementUse<sql::Statement> use(s);
      const int rows = s.bind(1, before).bind(2, kPruneBatch).run();
      transaction.commit();
      deleted += static_cast<std::size_t>(rows);
      if (rows < kPruneBatch) break;
    }
  }
  return deleted;
}

std::vector<WebhookDelivery> SqlWebhookQueue::list(std::optional<DeliveryStatus> status,
                                                   std::size_t limit) {
  std::lock_guard lock(mutex_);
  auto s = prepare_once(*db_, std::string(kSelect) + (status ? "WHERE d.status = ? " : "") +
                              "ORDER BY d.delivery_id DESC LIMIT ?");
  int at = 1;
  if (status) s->bind(at++, to_string(*status));
  s->bind(at, static_cast<std::int64_t>(limit));
  std::vector<WebhookDelivery> out;
  while (s->step()) out.push_back(read_delivery(*s));
  return out;
}

Json NotificationEvent::to_json() const {
  return Json{{"id", id}, {"type", type}, {"created_at", iso_timestamp(created_at)}, {"data", data}};
}

Json WebhookDelivery::to_json() const {
  auto optional_time = [](std::int64_t at) { return at == 0 ? Json() : Json(iso_timestamp(at)); };
  return Json{{"delivery_id", delivery_id},
              {"event_id", event_id},
              {"type", type},
              {"url", url},
              {"status", to_string(status)},
              {"attempts", attempts},
              {"next_attempt_at", optional_time(next_attempt_at)},
              {"last_error", last_error.empty() ? Json() : Json(last_error)},
              {"last_status", last_status == 0 ? Json() : Json(last_status)},
              {"created_at", iso_timestamp(created_at)},
              {"delivered_at", optional_time(delivered_at)}};
}

}  // namespace tollgate::server

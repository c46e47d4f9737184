// SqlWebhookQueue: WebhookQueue in the server's database through sql::Connection, SQLite or
// PostgreSQL (tables server_webhook_events and server_webhook_deliveries; schema version in
// row "webhooks" of tollgate_schema).
// Thread-safety: one connection under a mutex; every method may be called from any thread.
#pragma once

#include <memory>
#include <mutex>

#include "sql/connection_lock.h"
#include <string>

#include "server/webhook_queue.h"

namespace tollgate::sql {
class Connection;
class StatementCache;
}

namespace tollgate::server {

class SqlWebhookQueue : public WebhookQueue {
 public:
  // Creates or migrates the tables. Throws Error(kUnavailable) when the database cannot be
  // reached.
  explicit SqlWebhookQueue(std::unique_ptr<sql::Connection> connection);
  // The same on a connection other parts may share (connection_lock.h).
  explicit SqlWebhookQueue(sql::SharedConnection connection);
  ~SqlWebhookQueue() override;

  bool add(const NotificationEvent& event, const std::vector<std::string>& urls) override;
  std::vector<WebhookDelivery> heads() override;
  bool lease(const WebhookDelivery& head, const std::string& holder, std::int64_t now,
             std::int64_t leased_until) override;
  void delivered(std::int64_t delivery_id, int status, std::int64_t at) override;
  void attempt_failed(std::int64_t delivery_id, const std::string& holder, const std::string& error,
                      int status, std::int64_t next_attempt_at, bool give_up) override;
  std::vector<WebhookDelivery> list(std::optional<DeliveryStatus> status,
                                    std::size_t limit) override;
  // In batches of a transaction each, so that the writers sharing the connection wait for one
  // batch at most.
  std::size_t prune(std::int64_t before) override;

 private:
  sql::ConnectionLock mutex_;  // guards db_ and statements_
  std::shared_ptr<sql::Connection> db_;
  std::unique_ptr<sql::StatementCache> statements_;
};

// Writes `event` and a pending delivery of it to each of `urls` with statements of `statements`,
// inside the write transaction its connection has open: how another store of the same database
// queues an event in the transaction of the fact it tells. False, and nothing written, when an
// event with its id was stored before. Without `urls` only the event's id, type and time are
// stored: no delivery will read its body. The tables must exist (a SqlWebhookQueue was opened on
// the database).
bool write_webhook_event(sql::StatementCache& statements, const NotificationEvent& event,
                         const std::vector<std::string>& urls);

// The queue in the SQLite file `db_path`. Throws Error(kUnavailable) when the file cannot be
// opened.
class SqliteWebhookQueue final : public SqlWebhookQueue {
 public:
  explicit SqliteWebhookQueue(const std::string& db_path);
};

}  // namespace tollgate::server

// The webhook queue: every notification event the server emits (review.requested,
// review.decided, review.expired, run.finished, run.failed) and, for each receiver subscribed to
// its type, one delivery that stays pending until the receiver answers 2xx or the tries run out.
// Kept in the server's database so that deliveries survive a restart (at least once: a delivery
// whose answer was lost with the process is sent again; receivers dedupe by the event id).
//
//   pending    waiting for its next try (next_attempt_at)
//   delivered  a try was answered 2xx
//   failed     every try failed, or its receiver is no longer configured
//
// Deliveries to one receiver go out in the order their events were stored: only its oldest
// pending delivery is tried (see heads()), so review.requested reaches a receiver before the
// review.decided that answers it, even across retries.
//
// Several senders may share one queue (server replicas on one database): a sender leases a
// delivery before each try (lease()), a conditional update that only one of them wins, so a
// delivery is tried by one sender at a time; a lease lapses at its leased_until, so the
// delivery of a sender that died mid-try is tried again by another.
//
// The interface knows no SQL: SqlWebhookQueue keeps it in the server's database, SQLite or
// PostgreSQL (sql_webhook_queue.h).
// Thread-safety: every method may be called from any thread; each call is atomic.
// Storage failures throw Error(kUnavailable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/record_status.h"
#include "tollgate/json.h"

namespace tollgate::server {

struct NotificationEvent {
  std::string id;    // a UUID, the same each time the same fact is told (receivers dedupe by it)
  std::string type;  // one of kWebhookEventTypes
  std::int64_t created_at = 0;  // milliseconds since the epoch
  Json data = Json::object();
  // {"id", "type", "created_at" (ISO 8601), "data"}: the body of a delivery.
  Json to_json() const;
};

// An event to be stored together with the fact it tells (ServerStore::end_run writes these in
// the transaction of a run's end): the event, the receivers subscribed to its type, and, once
// written, whether it was new (false: the same fact was told before, nothing was stored).
struct QueuedNotification {
  NotificationEvent event;
  std::vector<std::string> urls;
  bool fresh = false;
  // Several replicas: appended to the review feed by the store's write that stored it
  // (ReplicaStore::set_feed_texts), so not relayed again.
  bool in_feed = false;
};

struct WebhookDelivery {
  std::int64_t delivery_id = 0;  // increasing in the order deliveries were queued
  std::string event_id;
  std::string type;
  std::string url;
  std::string body;  // the event as sent, byte for byte on every try
  DeliveryStatus status = DeliveryStatus::kPending;
  int attempts = 0;
  std::int64_t next_attempt_at = 0;  // milliseconds since the epoch; 0 once not pending
  std::string last_error;            // "" when the last try succeeded or none was made
  int last_status = 0;               // HTTP status of the last answer; 0: none
  std::int64_t created_at = 0;
  std::int64_t delivered_at = 0;
  std::string leased_by;          // the sender trying it now ("" when none has leased it)
  std::int64_t leased_until = 0;  // ms since the epoch; the lease is held until then

  // Without the lease (which is the senders' business, not the log's).
  Json to_json() const;
};

class WebhookQueue {
 public:
  virtual ~WebhookQueue() = default;

  // Stores `event` and a pending delivery of it to each of `urls` (due at once), in one
  // transaction. False, and nothing stored, when an event with its id was stored before.
  virtual bool add(const NotificationEvent& event, const std::vector<std::string>& urls) = 0;
  // The oldest pending delivery of each receiver (leased or not).
  virtual std::vector<WebhookDelivery> heads() = 0;
  // Leases the delivery `head` (as heads() read it) to `holder` (a sender's id) for one try,
  // until `leased_until`: true when it is still its receiver's oldest pending delivery, with
  // the tries `head` counts, due at `now`, and no other holder's lease on it runs past `now`.
  // False: another sender has it, or it moved on since it was read.
  virtual bool lease(const WebhookDelivery& head, const std::string& holder, std::int64_t now,
                     std::int64_t leased_until) = 0;
  // The delivery's try was answered 2xx (whoever holds the lease now: it was delivered).
  virtual void delivered(std::int64_t delivery_id, int status, std::int64_t at) = 0;
  // `holder`'s try of the delivery failed (`status` 0: no answer); it is tried again at
  // `next_attempt_at`, or, when `give_up`, marked failed. Nothing changes when `holder` no
  // longer holds the lease (it lapsed and another sender took the delivery).
  virtual void attempt_failed(std::int64_t delivery_id, const std::string& holder,
                              const std::string& error, int status, std::int64_t next_attempt_at,
                              bool give_up) = 0;
  // The newest deliveries first, only those in `status` when given.
  virtual std::vector<WebhookDelivery> list(std::optional<DeliveryStatus> status,
                                            std::size_t limit) = 0;
  // Retention: deletes the deliveries that ended (delivered or failed) and were queued before
  // `before`, then the events stored before it that no delivery is left of. A pending delivery
  // and its event are kept. An event told again once deleted is new again (add() queues it):
  // receivers dedupe by its id. Returns how many rows were deleted.
  virtual std::size_t prune(std::int64_t before) = 0;
};

}  // namespace tollgate::server

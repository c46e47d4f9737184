// Notifications: tells people that something waits for them or has ended, without their
// watching a page. Each event (review.requested, review.decided, review.expired, run.finished,
// run.failed; docs/webhooks.md) is
//   - stored with a delivery to every webhook subscribed to its type (webhook_queue.h), which
//     the WebhookSender thread POSTs, signed, and retries until a 2xx answer;
//   - published to the in-memory ReviewFeed that GET /reviews/stream subscribers read.
// An event's id is derived from the fact it tells (e.g. review.requested of one interrupt at one
// checkpoint), so telling the same fact twice (a run's end stored again, recovery) stores and
// sends it once. Claims (review.claimed, review.released) are passing news for the consoles
// that watch: published to the feed only.
//
// What a run's end tells (review.decided of the decision it applied, review.requested of the
// pause it reached, run.finished / run.failed) is stored in the transaction of the run's end
// (ServerStore::end_run): the methods named *_notices build the events, the store writes them
// with the fact, and told() then wakes the sender and publishes them; review.expired likewise
// with the run that applies the expiry (ServerStore::insert_run), and review.requested of a
// pause made by a state update or found by start-up recovery with that thread outcome
// (ServerStore::set_thread_outcome). tell() stores notices in their own transaction instead,
// where the queue is not in the store's database. Everything queued is delivered at least once.
//
// Thread-safety: every method may be called from any thread. Failures to store an event are
// logged, never thrown: a notification must not fail the run or decision it tells of.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/record_status.h"
#include "server/review_feed.h"
#include "server/review_store.h"
#include "server/webhook_queue.h"
#include "tollgate/json.h"
#include "tollgate/server.h"

namespace tollgate::server {

class WebhookSender;

// What review events say of a review, beside its type.
struct ReviewFacts {
  std::string thread_id;
  std::string assistant_id;
  std::string checkpoint_id;
  std::string interrupt_id;
  Json value;  // the interrupt's value (a HITL request: action_requests, review_configs)
};

class Notifications {
 public:
  // Reads each webhook's secret from its environment variable: Error(kInvalidArgument) naming
  // "webhooks[i].secret_env" when one is not set, or "webhooks[i].url" when a URL is declared
  // twice. `queue` may be null when no webhook is configured; it must outlive this.
  // `queue_in_store_database`: the queue's tables are in the server store's database
  // (Storage::one_database), so the store can write notices with their facts.
  // `queue_shared`: other processes send from the queue too (Storage::shared), so this one's
  // sender leases under an id of its own (webhook_sender.h). Events are stored only when a
  // webhook is configured or the queue is shared: a stored event is what a webhook delivers,
  // and its id keeps a fact that another process tells again told once. A lone server without
  // webhooks tells its events to the review stream alone (its events table would only grow).
  Notifications(const std::vector<WebhookOptions>& webhooks, WebhookQueue* queue,
                bool queue_in_store_database = false, bool queue_shared = false);
  ~Notifications();
  Notifications(const Notifications&) = delete;
  Notifications& operator=(const Notifications&) = delete;

  // The console's address; console_url in events is "<url>/#/t/<thread id>".
  void set_public_url(std::string url);
  void start();  // the sender thread (when a webhook is configured)
  void stop();

  const std::shared_ptr<ReviewFeed>& feed() const { return feed_; }
  // Several replicas: the review stream's events go to `relay` (which stores them for every
  // replica, ReplicaStore::append_feed) instead of straight to the feed, which a FeedFollower
  // fills from the store. A relay that throws is logged: the event is lost to the stream only.
  // Call before start().
  void set_feed_relay(std::function<void(const std::vector<NotificationEvent>&)> relay) {
    relay_ = std::move(relay);
  }
  WebhookQueue* queue() const { return queue_; }

  // A run paused on the interrupts `interrupts` (task id -> [{id, value}]) at `checkpoint_id`:
  // one review.requested per interrupt.
  std::vector<QueuedNotification> review_requested_notices(const std::string& thread_id,
                                                            const std::string& assistant_id,
                                                            const std::string& checkpoint_id,
                                                            const Json& interrupts) const;
  // A decision by `decided_by` was applied to the review; `outcome` names the decision types
  // ("approve", "reject,approve", ...).
  QueuedNotification review_decided_notice(const ReviewFacts& review,
                                           const std::string& decided_by,
                                           const std::string& outcome) const;
  // For review deadlines: the review expired and its safe default `outcome` ("reject",
  // "respond") was applied by `decided_by` (e.g. "system:timeout").
  QueuedNotification review_expired_notice(const ReviewFacts& review,
                                           const std::string& decided_by,
                                           const std::string& outcome) const;
  // Claims (review_claims.h), told on the review stream only, never to webhooks: review.claimed
  // when `claim` was taken (or extended), review.released when `released_by` ended it.
  void review_claimed(const ReviewClaim& claim, const std::string& assistant_id);
  void review_released(const ReviewClaim& claim, const std::string& assistant_id,
                       const std::string& released_by);
  // A run ended: run.finished for `status` success (outcome "completed", or "paused" when the
  // thread waits for a review: `thread_status`, its outcome, is interrupted) and interrupted
  // (outcome "cancelled"); run.failed for error (outcome "error", with `error`). Nothing for other
  // statuses.
  std::optional<QueuedNotification> run_ended_notice(
      const std::string& run_id, const std::string& thread_id, const std::string& assistant_id,
      RunStatus status, std::optional<ThreadStatus> thread_status, const std::string& error) const;

  // Whether notices are stored by the server store with the facts they tell (events are
  // stored, and the webhook queue is in its database).
  bool stored_with_facts() const { return stores_events() && queue_in_store_database_; }
  // Whether events are stored at all (see the constructor).
  bool stores_events() const { return queue_ != nullptr && store_events_; }
  // Notices a store wrote with their fact: the fresh ones are sent and published.
  void told(const std::vector<QueuedNotification>& notices);
  // Stores each notice in its own transaction (failures logged), then as told().
  void tell(std::vector<QueuedNotification> notices);

 private:
  QueuedNotification notice(const std::string& type, const std::string& fact, Json data) const;
  QueuedNotification review_answered(const std::string& type, const ReviewFacts& review,
                                     const std::string& decided_by,
                                     const std::string& outcome) const;
  // To the review stream's subscribers only (nothing stored).
  void publish_live(const std::string& type, Json data);
  // To the review stream: the feed, or the relay when there is one.
  void publish(std::vector<NotificationEvent> events);
  Json claim_data(const ReviewClaim& claim, const std::string& assistant_id) const;
  Json review_data(const ReviewFacts& review) const;
  std::string console_url(const std::string& thread_id) const;

  WebhookQueue* queue_;
  bool queue_in_store_database_;
  bool store_events_;  // a webhook is configured, or the queue is shared
  std::map<std::string, std::vector<std::string>> urls_by_type_;
  std::unique_ptr<WebhookSender> sender_;  // null: no webhook configured
  std::shared_ptr<ReviewFeed> feed_ = std::make_shared<ReviewFeed>();
  std::function<void(const std::vector<NotificationEvent>&)> relay_;
  mutable std::mutex mutex_;  // guards public_url_
  std::string public_url_;
};

// The decision types of a resume answer {"decisions": [{"type"}, ...]} joined by ","; "answered"
// when it is no HITL response.
std::string decision_outcome(const Json& answer);

}  // namespace tollgate::server

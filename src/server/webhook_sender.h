// WebhookSender: the thread that POSTs queued deliveries (webhook_queue.h) to their receivers,
// signed, and schedules the retry of each failed try. It never runs on the HTTP I/O threads or
// the run workers: a slow receiver delays only other deliveries, never a request or a run.
//
// Each try: POST <url>, Content-Type: application/json, the event's stored body, and
//   Tollgate-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the secret>
// A 2xx answer delivers it; anything else (another status, a transport error, the timeout) is a
// failed try, retried after retry_delay_millis().
//
// Before each try the sender leases the delivery (WebhookQueue::lease) for the receiver's
// timeout plus a margin, under an id of its own: senders of several processes sharing the
// queue never try one delivery at once, and each receiver's deliveries still go out one at a
// time, oldest first. Every process must configure the same webhooks: a sender gives up a
// delivery whose URL it does not know.
//
// Thread-safety: start/stop/wake may be called from any thread; stop() is idempotent.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "server/webhook_queue.h"
#include "tollgate/server.h"

namespace tollgate::server {

// The delay after a delivery's `attempts`-th failed try (1 based): first_retry_seconds doubled
// for each earlier failure, scaled by 1 + jitter * (2 * unit_random - 1) (unit_random in [0,1]).
std::int64_t retry_delay_millis(const WebhookOptions& options, int attempts, double unit_random);

// "t=<t>,v1=<hex>": the Tollgate-Signature header value of `body` sent at `unix_seconds`.
std::string webhook_signature(const std::string& secret, std::int64_t unix_seconds,
                              const std::string& body);

// The lease holder of the one sender of a queue no other process shares.
inline constexpr const char* kOnlySenderId = "only-sender";

class WebhookSender {
 public:
  struct Receiver {
    WebhookOptions options;
    std::string secret;
  };
  // Receivers by URL; `queue` must outlive the sender. `holder`: the id its leases carry,
  // unique per sender when other processes share the queue (new_uuid7()); kOnlySenderId when
  // none does, so that after a crash the restarted process takes back at once the lease its
  // previous run left, as a process alone on its queue may.
  WebhookSender(WebhookQueue& queue, std::map<std::string, Receiver> receivers, std::string holder);
  ~WebhookSender();
  WebhookSender(const WebhookSender&) = delete;
  WebhookSender& operator=(const WebhookSender&) = delete;

  void start();
  void stop();
  // Something was queued: look at the queue now.
  void wake();

 private:
  void loop();
  // Tries every due head once; returns when the earliest later head is due (ms since epoch).
  std::int64_t send_due(std::int64_t now);
  void attempt(const WebhookDelivery& delivery);
  // How long a try of a delivery to `url` holds its lease.
  std::int64_t lease_millis(const std::string& url) const;

  WebhookQueue& queue_;
  const std::map<std::string, Receiver> receivers_;
  const std::string holder_;  // this sender's id in the leases it takes
  std::mt19937_64 random_;  // used by the sender thread only
  std::thread thread_;
  std::mutex mutex_;  // guards stopping_ and woken_
  std::condition_variable wake_;
  bool stopping_ = false;
  bool woken_ = false;
};

}  // namespace tollgate::server

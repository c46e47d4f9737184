#include "server/webhook_sender.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/sha256.h"
#include "core/thread_name.h"
#include "models/http_client.h"
#include "server/ids.h"
#include "server/log.h"

namespace tollgate::server {
namespace {

// How often the queue is read when nothing is due and nothing woke the sender (another
// process sharing the database may have queued deliveries).
constexpr std::int64_t kIdlePollMillis = 1000;
// How long the sender waits after storage failed before it reads the queue again.
constexpr std::int64_t kStorageRetryMillis = 1000;
// A try's lease outlasts its timeout by this much (the answer is stored after it, and the
// clocks of the processes sharing the queue may differ a little). Another sender takes the
// delivery over only after the lease of one that died mid-try lapsed.
constexpr std::int64_t kLeaseMarginMillis = 30 * 1000;

std::chrono::milliseconds try_timeout(const WebhookOptions& options) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_seconds * 1000));
}

}  // namespace

std::int64_t retry_delay_millis(const WebhookOptions& options, int attempts, double unit_random) {
  const double doubled = options.first_retry_seconds * std::pow(2.0, std::max(0, attempts - 1));
  const double scaled = doubled * (1.0 + options.jitter * (2.0 * unit_random - 1.0));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(scaled * 1000.0));
}

std::string webhook_signature(const std::string& secret, std::int64_t unix_seconds,
                              const std::string& body) {
  const std::string t = std::to_string(unix_seconds);
  return "t=" + t + ",v1=" + core::hmac_sha256_hex(secret, t + "." + body);
}

WebhookSender::WebhookSender(WebhookQueue& queue, std::map<std::string, Receiver> receivers,
                             std::string holder)
    : queue_(queue),
      receivers_(std::move(receivers)),
      holder_(std::move(holder)),
      random_(std::random_device{}()) {}

WebhookSender::~WebhookSender() {
  stop();
}

void WebhookSender::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    core::name_this_thread("tg-webhooks");
    loop();
  });
}

void WebhookSender::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WebhookSender::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  wake_.notify_all();
}

void WebhookSender::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    woken_ = false;
    lock.unlock();
    std::int64_t next = 0;
    try {
      next = send_due(now_millis());
    } catch (const std::exception& e) {
      log_error(std::string("webhooks: the delivery queue could not be read: ") + e.what());
      next = now_millis() + kStorageRetryMillis;
    }
    lock.lock();
    const auto wait = std::chrono::milliseconds(std::max<std::int64_t>(0, next - now_millis()));
    wake_.wait_for(lock, wait, [this] { return stopping_ || woken_; });
  }
}

std::int64_t WebhookSender::send_due(std::int64_t now) {
  std::int64_t next = now + kIdlePollMillis;
  bool sent = false;
  for (const WebhookDelivery& head : queue_.heads()) {
    if (head.next_attempt_at > now) {
      next = std::min(next, head.next_attempt_at);
      continue;
    }
    // Another sender is trying it (its answer frees the receiver's next delivery).
    if (head.leased_until > now && head.leased_by != holder_) continue;
    // Leased from now, not from `now`: the tries before this one took their time.
    const std::int64_t leased_at = now_millis();
    if (!queue_.lease(head, holder_, leased_at, leased_at + lease_millis(head.url))) continue;
    attempt(head);
    sent = true;
    std::lock_guard lock(mutex_);
    if (stopping_) return now;
  }
  // After a try, the receiver's next delivery may be due at once.
  return sent ? now : next;
}

std::int64_t WebhookSender::lease_millis(const std::string& url) const {
  auto receiver = receivers_.find(url);
  const std::int64_t timeout =
      receiver == receivers_.end() ? 0 : try_timeout(receiver->second.options).count();
  return timeout + kLeaseMarginMillis;
}

void WebhookSender::attempt(const WebhookDelivery& delivery) {
  auto receiver = receivers_.find(delivery.url);
  if (receiver == receivers_.end()) {
    queue_.attempt_failed(delivery.delivery_id, holder_, "no webhook with this URL is configured",
                          0, 0, true);
    return;
  }
  const WebhookOptions& options = receiver->second.options;
  const std::int64_t unix_seconds = now_millis() / 1000;
  models::HttpRequest request;
  request.url = delivery.url;
  request.body = delivery.body;
  request.headers = {{"Content-Type", "application/json"},
                     {"User-Agent", "tollgate-webhooks"},
                     {"Tollgate-Signature",
                      webhook_signature(receiver->second.secret, unix_seconds, delivery.body)}};
  request.timeout = try_timeout(options);
  request.connect_timeout = std::min(request.timeout, std::chrono::milliseconds(5000));
  const models::HttpResponse response = models::http_post(request);
  if (response.status >= 200 && response.status < 300) {
    queue_.delivered(delivery.delivery_id, static_cast<int>(response.status), now_millis());
    return;
  }
  std::string error = response.timed_out                 ? "timed out"
                      : !response.transport_error.empty() ? response.transport_error
                                                          : "HTTP " + std::to_string(response.status);
  const int attempts = delivery.attempts + 1;
  const bool give_up = attempts >= options.max_attempts;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::int64_t next = now_millis() + retry_delay_millis(options, attempts, unit(random_));
  queue_.attempt_failed(delivery.delivery_id, holder_, error, static_cast<int>(response.status),
                        next, give_up);
  if (give_up) {
    log_warning("webhooks: delivery " + std::to_string(delivery.delivery_id) + " of event " +
                delivery.event_id + " to " + delivery.url + " failed " + std::to_string(attempts) +
                " times and is given up: " + error);
  }
}

}  // namespace tollgate::server

#include "server/notifications.h"

#include <cassert>
#include <cstdlib>

#include "server/ids.h"
#include "server/log.h"
#include "server/review_records.h"
#include "server/webhook_sender.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

// The namespace of event ids: uuid5(kEventNamespace, "<type>|<fact>").
constexpr const char* kEventNamespace = "5d0c8a52-8f0e-4f53-9d1c-7a1e2b3c4d5e";

Json member_or_null(const Json* value) {
  return value != nullptr ? *value : Json();
}

// The first deadline among the review configs (review deadlines put "expires_at" there).
Json expires_at_of(const Json* configs) {
  if (configs == nullptr || !configs->is_array()) return Json();
  for (const Json& config : *configs) {
    if (const Json* at = find_either(config, "expires_at", "expiresAt"); at != nullptr)
      return *at;
  }
  return Json();
}

}  // namespace

Notifications::Notifications(const std::vector<WebhookOptions>& webhooks, WebhookQueue* queue,
                             bool queue_in_store_database, bool queue_shared)
    : queue_(queue),
      queue_in_store_database_(queue_in_store_database),
      store_events_(!webhooks.empty() || queue_shared) {
  std::map<std::string, WebhookSender::Receiver> receivers;
  for (std::size_t i = 0; i < webhooks.size(); ++i) {
    const WebhookOptions& hook = webhooks[i];
    const std::string at = "webhooks[" + std::to_string(i) + "]";
    const char* secret = std::getenv(hook.secret_env.c_str());
    if (secret == nullptr || *secret == '\0') {
      throw Error::InvalidArgument(at + ".secret_env: environment variable " + hook.secret_env +
                                   " is not set");
    }
    if (receivers.count(hook.url) > 0)
      throw Error::InvalidArgument(at + ".url: " + hook.url + " is declared twice");
    receivers[hook.url] = WebhookSender::Receiver{hook, secret};
    for (const std::string& type : hook.events) urls_by_type_[type].push_back(hook.url);
  }
  if (!receivers.empty()) {
    assert(queue_ != nullptr);
    sender_ = std::make_unique<WebhookSender>(*queue_, std::move(receivers),
                                              queue_shared ? new_uuid7() : kOnlySenderId);
  }
}

Notifications::~Notifications() {
  stop();
}

void Notifications::set_public_url(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  std::lock_guard lock(mutex_);
  public_url_ = std::move(url);
}

void Notifications::start() {
  if (sender_) sender_->start();
}

void Notifications::stop() {
  if (sender_) sender_->stop();
}

std::string Notifications::console_url(const std::string& thread_id) const {
  std::lock_guard lock(mutex_);
  return public_url_ + "/#/t/" + thread_id;
}

Json Notifications::review_data(const ReviewFacts& review) const {
  const Json* configs = find_either(review.value, "review_configs", "reviewConfigs");
  return json_object("thread_id", review.thread_id, "assistant_id", review.assistant_id,
                     "interrupt_id", review.interrupt_id, "action_requests",
                     member_or_null(find_either(review.value, "action_requests", "actionRequests")),
                     "review_configs", member_or_null(configs), "expires_at",
                     expires_at_of(configs), "decided_by", nullptr, "outcome", nullptr,
                     "console_url", console_url(review.thread_id));
}

std::vector<QueuedNotification> Notifications::review_requested_notices(
    const std::string& thread_id, const std::string& assistant_id,
    const std::string& checkpoint_id, const Json& interrupts) const {
  std::vector<QueuedNotification> out;
  if (!interrupts.is_object()) return out;
  for (const auto& [task, list] : interrupts.items()) {
    if (!list.is_array()) continue;
    for (const Json& interrupt : list) {
      if (!interrupt.is_object()) continue;
      ReviewFacts review{thread_id, assistant_id, checkpoint_id, interrupt.value("id", ""),
                         interrupt.value("value", Json())};
      out.push_back(notice("review.requested",
                           thread_id + "|" + checkpoint_id + "|" + review.interrupt_id,
                           review_data(review)));
    }
  }
  return out;
}

QueuedNotification Notifications::review_decided_notice(const ReviewFacts& review,
                                                        const std::string& decided_by,
                                                        const std::string& outcome) const {
  return review_answered("review.decided", review, decided_by, outcome);
}

QueuedNotification Notifications::review_expired_notice(const ReviewFacts& review,
                                                        const std::string& decided_by,
                                                        const std::string& outcome) const {
  return review_answered("review.expired", review, decided_by, outcome);
}

QueuedNotification Notifications::review_answered(const std::string& type,
                                                  const ReviewFacts& review,
                                                  const std::string& decided_by,
                                                  const std::string& outcome) const {
  Json data = review_data(review);
  data["decided_by"] = decided_by;
  data["outcome"] = outcome;
  return notice(type, review.thread_id + "|" + review.checkpoint_id + "|" + review.interrupt_id,
                std::move(data));
}

Json Notifications::claim_data(const ReviewClaim& claim, const std::string& assistant_id) const {
  return Json{{"thread_id", claim.thread_id},
              {"assistant_id", assistant_id},
              {"interrupt_id", claim.interrupt_id},
              {"claimed_by", claim.claimed_by},
              {"claimed_at", iso_timestamp(claim.claimed_at)},
              {"expires_at", iso_timestamp(claim.expires_at)},
              {"console_url", console_url(claim.thread_id)}};
}

void Notifications::review_claimed(const ReviewClaim& claim, const std::string& assistant_id) {
  publish_live("review.claimed", claim_data(claim, assistant_id));
}

void Notifications::review_released(const ReviewClaim& claim, const std::string& assistant_id,
                                    const std::string& released_by) {
  Json data = claim_data(claim, assistant_id);
  data["released_by"] = released_by;
  publish_live("review.released", std::move(data));
}

void Notifications::publish_live(const std::string& type, Json data) {
  NotificationEvent event;
  event.id = new_uuid7();
  event.type = type;
  event.created_at = now_millis();
  event.data = std::move(data);
  publish({std::move(event)});
}

void Notifications::publish(std::vector<NotificationEvent> events) {
  if (events.empty()) return;
  if (!relay_) {
    for (NotificationEvent& event : events) feed_->publish(std::move(event));
    return;
  }
  try {
    relay_(events);
  } catch (const std::exception& e) {
    log_error("the review stream's events were not stored for every replica: " +
              std::string(e.what()));
  }
}

std::optional<QueuedNotification> Notifications::run_ended_notice(
    const std::string& run_id, const std::string& thread_id, const std::string& assistant_id,
    RunStatus status, std::optional<ThreadStatus> thread_status, const std::string& error) const {
  const bool failed = status == RunStatus::kError;
  if (!failed && status != RunStatus::kSuccess && status != RunStatus::kInterrupted)
    return std::nullopt;
  const char* outcome = failed                                        ? "error"
                        : status == RunStatus::kInterrupted           ? "cancelled"
                        : thread_status == ThreadStatus::kInterrupted ? "paused"
                                                                      : "completed";
  Json data = json_object("thread_id", thread_id, "assistant_id", assistant_id, "run_id", run_id,
                          "interrupt_id", nullptr, "action_requests", nullptr, "review_configs",
                          nullptr, "expires_at", nullptr, "decided_by", nullptr, "outcome", outcome,
                          "console_url", console_url(thread_id));
  if (failed) data["error"] = error;
  return notice(failed ? "run.failed" : "run.finished", run_id, std::move(data));
}

QueuedNotification Notifications::notice(const std::string& type, const std::string& fact,
                                         Json data) const {
  QueuedNotification out;
  out.event.id = uuid5(kEventNamespace, type + "|" + fact);
  out.event.type = type;
  out.event.created_at = now_millis();
  out.event.data = std::move(data);
  if (auto urls = urls_by_type_.find(type); urls != urls_by_type_.end()) out.urls = urls->second;
  return out;
}

void Notifications::told(const std::vector<QueuedNotification>& notices) {
  bool to_send = false;
  std::vector<NotificationEvent> fresh;
  for (const QueuedNotification& n : notices) {
    if (!n.fresh) continue;  // told before
    to_send = to_send || !n.urls.empty();
    if (!n.in_feed) fresh.push_back(n.event);  // else the store fed it with the fact
  }
  publish(std::move(fresh));
  if (to_send && sender_) sender_->wake();
}

void Notifications::tell(std::vector<QueuedNotification> notices) {
  for (QueuedNotification& n : notices) {
    n.fresh = true;
    if (!stores_events()) continue;
    try {
      n.fresh = queue_->add(n.event, n.urls);
    } catch (const std::exception& e) {
      // Still published to the review stream's readers: they are told, the receivers are not.
      log_error("notification " + n.event.type + " " + n.event.id + " was not queued: " +
                e.what());
    }
  }
  told(notices);
}

std::string decision_outcome(const Json& answer) {
  const Json* decisions = answer.is_object() ? find_either(answer, "decisions", "decisions") : nullptr;
  if (decisions == nullptr || !decisions->is_array() || decisions->empty()) return "answered";
  std::string out;
  for (const Json& decision : *decisions) {
    const Json* type = decision.is_object() ? find_either(decision, "type", "type") : nullptr;
    out += (out.empty() ? "" : ",") +
           (type != nullptr && type->is_string() ? type->get<std::string>() : "answered");
  }
  return out;
}

}  // namespace tollgate::server

#include "server/review_claims.h"

#include <map>

#include "server/ids.h"
#include "server/notifications.h"
#include "server/review_records.h"
#include "server/review_rules.h"
#include "server/thread_access.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

std::string assistant_of(const ThreadRecord& thread) {
  const Json& m = thread.metadata;
  return m.is_object() && m.contains("assistant_id") && m["assistant_id"].is_string()
             ? m["assistant_id"].get<std::string>()
             : "";
}

}  // namespace

ReviewClaims::ReviewClaims(ReviewStore& store, Notifications* notifications,
                           std::chrono::milliseconds ttl, const Clock& clock)
    : store_(store), notifications_(notifications), ttl_(ttl), clock_(clock) {}

std::vector<Json> ReviewClaims::targets(const ThreadRecord& thread,
                                        const std::string& interrupt_id) const {
  std::vector<Json> out;
  if (thread.interrupts.is_object()) {
    for (const auto& [task, interrupts] : thread.interrupts.items()) {
      if (!interrupts.is_array()) continue;
      for (const Json& interrupt : interrupts) {
        if (!interrupt.is_object()) continue;
        if (interrupt_id.empty() || interrupt.value("id", "") == interrupt_id)
          out.push_back(interrupt);
      }
    }
  }
  if (out.empty()) {
    throw Error::Conflict(interrupt_id.empty()
                              ? "Thread " + thread.thread_id + " has no pending review to claim"
                              : "interrupt_id: " + interrupt_id +
                                    " is not pending on thread " + thread.thread_id);
  }
  return out;
}

std::vector<ReviewClaim> ReviewClaims::claim(const ThreadRecord& thread,
                                             const std::string& interrupt_id,
                                             const Identity& who) {
  const std::vector<Json> interrupts = targets(thread, interrupt_id);
  const std::string owner = thread_owner(thread);
  for (const Json& interrupt : interrupts)
    check_reviewer(interrupt.value("value", Json()), Json(), who, owner);
  const std::int64_t now = now_millis(clock_);
  std::vector<ReviewClaim> taken;
  for (const Json& interrupt : interrupts) {
    const std::string id = interrupt.value("id", "");
    std::optional<ReviewClaim> held = store_.take_claim(thread.thread_id, id, who.id, now, now + ttl_.count());
    if (!held) {
      throw Error::Conflict("The review of interrupt " + id + " is no longer pending on thread " +
                            thread.thread_id);
    }
    if (held->claimed_by != who.id) {
      // Claims taken before this refusal stay: they are the caller's own and lapse by themselves.
      throw Error::Conflict("'" + held->claimed_by + "' has claimed the review of interrupt " + id +
                            " until " + iso_timestamp(held->expires_at) +
                            " (a claim is advisory: a decision still applies)");
    }
    taken.push_back(*held);
  }
  if (notifications_ != nullptr) {
    for (const ReviewClaim& c : taken)
      notifications_->review_claimed(c, assistant_of(thread));
  }
  return taken;
}

std::vector<ReviewClaim> ReviewClaims::release(const ThreadRecord& thread,
                                               const std::string& interrupt_id,
                                               const Identity& who) {
  const std::vector<Json> interrupts = targets(thread, interrupt_id);
  const std::int64_t now = now_millis(clock_);
  if (!who.is_admin()) {
    for (const ReviewClaim& live : store_.live_claims({thread.thread_id}, now)) {
      const bool targeted = interrupt_id.empty() || live.interrupt_id == interrupt_id;
      if (targeted && live.claimed_by != who.id) {
        throw Error::PermissionDenied("'" + who.id + "' may not release the claim of '" +
                                      live.claimed_by + "' on interrupt " + live.interrupt_id +
                                      ": only its holder or an admin may");
      }
    }
  }
  std::vector<ReviewClaim> released;
  for (const Json& interrupt : interrupts) {
    auto ended = store_.release_claim(thread.thread_id, interrupt.value("id", ""),
                                      who.is_admin() ? "" : who.id, now);
    if (ended) released.push_back(*ended);
  }
  if (notifications_ != nullptr) {
    for (const ReviewClaim& c : released)
      notifications_->review_released(c, assistant_of(thread), who.id);
  }
  return released;
}

void ReviewClaims::show(std::vector<Json*> threads) {
  std::vector<std::string> ids;
  for (const Json* t : threads) {
    if (t->is_object() && t->contains("interrupts") && (*t)["interrupts"].is_object() &&
        !(*t)["interrupts"].empty()) {
      ids.push_back(t->value("thread_id", ""));
    }
  }
  if (ids.empty()) return;
  std::map<std::pair<std::string, std::string>, ReviewClaim> live;
  for (ReviewClaim& c : store_.live_claims(ids, now_millis(clock_)))
    live.emplace(std::make_pair(c.thread_id, c.interrupt_id), std::move(c));
  if (live.empty()) return;
  for (Json* t : threads) {
    if (!t->is_object() || !t->contains("interrupts") || !(*t)["interrupts"].is_object()) continue;
    const std::string thread_id = t->value("thread_id", "");
    for (auto& [task, interrupts] : (*t)["interrupts"].items()) {
      if (!interrupts.is_array()) continue;
      for (Json& interrupt : interrupts) {
        if (!interrupt.is_object()) continue;
        auto found = live.find({thread_id, interrupt.value("id", "")});
        if (found == live.end() || !interrupt.contains("value")) continue;
        Json& value = interrupt["value"];
        const char* key = value.contains("reviewConfigs") ? "reviewConfigs" : "review_configs";
        if (!value.is_object() || !value.contains(key) || !value[key].is_array()) continue;
        for (Json& config : value[key]) {
          if (!config.is_object()) continue;
          config["claimed_by"] = found->second.claimed_by;
          config["claimed_at"] = iso_timestamp(found->second.claimed_at);
          config["claim_expires_at"] = iso_timestamp(found->second.expires_at);
        }
      }
    }
  }
}

}  // namespace tollgate::server

// RunManager's part of the review records: written when a run pauses, claimed by the decision
// that answers them when it is accepted, put back when that decision changed nothing.
#include <algorithm>

#include "server/audit_log.h"
#include "server/cluster.h"
#include "server/ids.h"
#include "server/log.h"
#include "server/notifications.h"
#include "server/review_binding.h"
#include "server/review_records.h"
#include "server/review_rules.h"
#include "server/review_store.h"
#include "server/review_timer.h"
#include "server/run_manager.h"
#include "server/thread_access.h"
#include "tollgate/error.h"
#include "tollgate/review_timeout.h"

namespace tollgate::server {

void RunManager::check_reviewers(const RunRequest& request, const ThreadRecord& thread,
                                 const std::string& graph_id) {
  if (!request.binding.is_object() || !request.command) return;
  // The server's own answers (an expired review) follow the policy's on_timeout, not a rule.
  if (request.decided_by.id.rfind("system:", 0) == 0) return;
  const Command command = Command::from_json(*request.command);
  const Json shown = request.binding.value("shown", Json::object());
  const std::string owner = thread_owner(thread);
  for (const auto& [task, interrupts] : shown.items()) {
    for (const Json& interrupt : interrupts) {
      auto answer = command.resume_map.find(interrupt.value("id", ""));
      if (answer == command.resume_map.end()) continue;
      try {
        check_reviewer(interrupt.value("value", Json()), answer->second, request.decided_by, owner);
      } catch (const Error& refusal) {
        if (audit_ != nullptr) {
          AuditEntry entry;
          entry.kind = "refusal";
          entry.thread_id = request.thread_id;
          entry.assistant_id = request.assistant_id;
          entry.graph_id = graph_id;
          entry.reviewer = audit_identity(request.decided_by);
          entry.checkpoint_id = request.binding.value("checkpoint_id", "");
          entry.shown = shown;
          entry.decided = request.binding.value("decided", Json());
          entry.outcome = "refused";
          entry.message = refusal.what();
          audit_->append(entry);
        }
        throw;
      }
    }
  }
}

bool RunManager::put_back_orphaned_claims(const std::vector<ReviewRecord>& records,
                                          const std::string& interrupt_id, std::int64_t now) {
  // A claim whose run was never stored (its insert failed and so did putting the claim back,
  // e.g. on a full disk, or the process died in between) holds the review for nobody: it is
  // put back. Here a thread's claims and run inserts happen under its submission lock, held
  // now; another replica's claim may be a moment from its insert, so it is taken for orphaned
  // only once it is older than a replica is given to live.
  const std::int64_t orphaned_before =
      shared() ? now - cluster_->options().timeout.count() : now + 1;
  bool orphaned = false;
  for (const ReviewRecord& r : records) {
    if (r.interrupt_id == interrupt_id && !r.run_id.empty() &&
        (r.status == ReviewStatus::kDecided || r.status == ReviewStatus::kExpired) &&
        r.decided_at < orphaned_before && !run_in_memory(r.run_id) && !store_.get_run(r.run_id)) {
      reviews_->reopen(r.run_id);
      orphaned = true;
    }
  }
  return orphaned;
}

void RunManager::claim_reviews(const RunRequest& request, const std::string& run_id) {
  if (reviews_ == nullptr || !request.binding.is_object() || !request.command) return;
  const Command command = Command::from_json(*request.command);
  if (command.resume_map.empty()) return;  // a plain resume the graph refuses (none or several)
  const std::string checkpoint = request.binding.value("checkpoint_id", "");
  const Json shown = request.binding.value("shown", Json::object());
  const std::vector<std::string> pending = interrupt_ids_of(shown);
  const std::int64_t now = now_millis(*clock_);
  // The timer's answer expires the records; a person's decides them. Either claim is
  // conditional on the records being pending, so only one of them wins.
  const bool expiry = request.decided_by.id == kTimeoutIdentity;
  for (const auto& [interrupt_id, answer] : command.resume_map) {
    // An id that was not pending is refused by the graph when the run executes.
    if (std::find(pending.begin(), pending.end(), interrupt_id) == pending.end()) continue;
    const auto claim = [&, &id = interrupt_id] {
      return expiry ? reviews_->expire(request.thread_id, checkpoint, id, request.decided_by.id,
                                       run_id, now)
                    : reviews_->decide(request.thread_id, checkpoint, id, request.decided_by.id,
                                       run_id, now);
    };
    std::size_t claimed = claim();
    if (claimed == 0) {
      const std::vector<ReviewRecord> kept = reviews_->at_checkpoint(request.thread_id, checkpoint);
      if (std::none_of(kept.begin(), kept.end(), [&id = interrupt_id](const ReviewRecord& r) {
            return r.interrupt_id == id;
          })) {
        // A thread paused before review records were kept (or whose records were not written
        // at its pause) gets them now, pending, and claimed like any other.
        reviews_->add_pending(
            review_records_for(request.thread_id, checkpoint, shown, Json(), *clock_));
        claimed = claim();
      } else if (put_back_orphaned_claims(kept, interrupt_id, now)) {
        claimed = claim();
      }
    }
    if (claimed == 0) {
      reviews_->reopen(run_id);
      throw Error::Conflict("The review of interrupt " + interrupt_id +
                            " is no longer pending: a decision for it was already accepted "
                            "(or its deadline passed). Nothing was changed.");
    }
  }
}

void RunManager::collect_approvals(RunRequest& request) {
  if (!request.binding.is_object() || !request.command) return;
  const Command command = Command::from_json(*request.command);
  const Json shown = request.binding.value("shown", Json::object());
  const std::string checkpoint = request.binding.value("checkpoint_id", "");
  const Identity& who = request.decided_by;
  bool short_of_approvals = false;
  for (const auto& [task, interrupts] : shown.items()) {
    for (const Json& interrupt : interrupts) {
      const std::string interrupt_id = interrupt.value("id", "");
      auto answer = command.resume_map.find(interrupt_id);
      if (answer == command.resume_map.end()) continue;
      for (const CountedApproval& counted :
           counted_approvals(interrupt.value("value", Json()), answer->second)) {
        const std::string what = counted.action_name.empty() ? "this review" : counted.action_name;
        if (reviews_ == nullptr) {
          throw Error::PermissionDenied("'" + who.id + "' may not approve " + what +
                                        " alone: rule approvals_required " +
                                        std::to_string(counted.required) +
                                        ", and this server keeps no review records");
        }
        if (!reviews_->add_approval(
                request.thread_id, checkpoint,
                ReviewApproval{interrupt_id, counted.action_index, who.id, now_millis(*clock_)})) {
          throw Error::Conflict("'" + who.id + "' already approved " + what +
                                ": rule approvals_required " + std::to_string(counted.required) +
                                " needs that many distinct reviewers. Nothing was changed.");
        }
        int given = 0;
        for (const ReviewApproval& a : reviews_->approvals(request.thread_id, checkpoint)) {
          if (a.interrupt_id == interrupt_id && a.action_index == counted.action_index) ++given;
        }
        if (given < counted.required) short_of_approvals = true;
      }
    }
  }
  if (short_of_approvals) request.binding["approval_only"] = true;
}

std::vector<ReviewRecord> RunManager::annotate_reviews(const std::string& thread_id,
                                                       ThreadOutcome& outcome) {
  if (reviews_ == nullptr || outcome.checkpoint_id.empty() || !outcome.interrupts.is_object())
    return {};
  // A thread that ended its run without a pending interrupt has nothing to annotate: its
  // records are not read.
  const bool pending =
      std::any_of(outcome.interrupts.begin(), outcome.interrupts.end(),
                  [](const Json& list) { return list.is_array() && !list.empty(); });
  if (!pending) return {};
  std::vector<ReviewRecord> records;
  std::vector<ReviewApproval> approvals;
  try {
    records = reviews_->at_checkpoint(thread_id, outcome.checkpoint_id);
    approvals = reviews_->approvals(thread_id, outcome.checkpoint_id);
  } catch (const std::exception& e) {
    log_error("the review records of thread " + thread_id + " were not read: " + e.what());
    return records;  // those read, if any
  }
  if (records.empty() && approvals.empty()) return records;
  for (auto& [task, interrupts] : outcome.interrupts.items()) {
    if (!interrupts.is_array()) continue;
    for (Json& interrupt : interrupts) {
      if (!interrupt.is_object() || !interrupt.contains("value")) continue;
      Json& value = interrupt["value"];
      const char* key = value.contains("reviewConfigs") ? "reviewConfigs" : "review_configs";
      if (!value.is_object() || !value.contains(key) || !value[key].is_array()) continue;
      Json& configs = value[key];
      const std::string interrupt_id = interrupt.value("id", "");
      // The review config of the action, or nullptr.
      auto config_of = [&](const std::string& of, int index) -> Json* {
        if (of != interrupt_id || index < 0 || static_cast<std::size_t>(index) >= configs.size() ||
            !configs[index].is_object()) {
          return nullptr;
        }
        return &configs[index];
      };
      for (const ReviewRecord& r : records) {
        if (Json* config = config_of(r.interrupt_id, r.action_index))
          (*config)["created_at"] = iso_timestamp(r.created_at);
      }
      for (const ReviewApproval& a : approvals) {
        Json* config = config_of(a.interrupt_id, a.action_index);
        if (config == nullptr) continue;
        Json& list = (*config)["approvals"];
        if (!list.is_array()) list = Json::array();
        list.push_back(Json{{"by", a.approved_by}, {"at", iso_timestamp(a.approved_at)}});
      }
    }
  }
  return records;
}

void RunManager::reopen_claims(const std::string& run_id) {
  if (reviews_ == nullptr) return;
  reviews_->reopen(run_id);
  if (timer_ != nullptr) timer_->rearm();  // a reopened deadline may be due already
}

void RunManager::reopen_reviews(const std::string& run_id, bool disarm) {
  if (reviews_ == nullptr) return;
  try {
    if (disarm) reviews_->disarm(run_id);
    reviews_->reopen(run_id);
    if (timer_ != nullptr) timer_->rearm();  // a reopened deadline may be due already
  } catch (const std::exception& e) {
    log_error("the review records of run " + run_id + " could not be reopened: " + e.what());
  }
}

bool RunManager::claims_still_pending(const std::string& run_id, const ThreadOutcome& outcome,
                                      const std::vector<ReviewRecord>& at_checkpoint) const {
  if (reviews_ == nullptr || outcome.status != ThreadStatus::kInterrupted ||
      outcome.checkpoint_id.empty())
    return false;
  const std::vector<std::string> pending = interrupt_ids_of(outcome.interrupts);
  for (const ReviewRecord& r : at_checkpoint) {
    if (r.run_id == run_id &&
        (r.status == ReviewStatus::kDecided || r.status == ReviewStatus::kExpired) &&
        std::find(pending.begin(), pending.end(), r.interrupt_id) != pending.end())
      return true;
  }
  return false;
}

std::vector<ReviewRecord> RunManager::record_reviews(const std::string& thread_id,
                                                     ThreadOutcome& outcome) {
  if (reviews_ == nullptr || outcome.checkpoint_id.empty()) return {};
  const Json interrupts = outcome.interrupts.is_object() ? outcome.interrupts : Json::object();
  try {
    const std::vector<ReviewRecord> records = review_records_for(
        thread_id, outcome.checkpoint_id, interrupts, outcome.value_of("messages"), *clock_);
    reviews_->add_pending(records);
    reviews_->supersede_others(thread_id, outcome.checkpoint_id, interrupt_ids_of(interrupts));
    const bool timed = std::any_of(records.begin(), records.end(),
                                   [](const ReviewRecord& r) { return r.expires_at > 0; });
    if (timed && timer_ != nullptr) timer_->rearm();
  } catch (const std::exception& e) {
    log_error("the review records of thread " + thread_id + " were not written: " + e.what());
  }
  return annotate_reviews(thread_id, outcome);
}

std::vector<QueuedNotification> RunManager::review_requested_notices(
    const std::string& thread_id, const std::string& assistant_id,
    const ThreadOutcome& outcome) const {
  if (notifications_ == nullptr || outcome.status != ThreadStatus::kInterrupted) return {};
  const Json interrupts = outcome.interrupts.is_object() ? outcome.interrupts : Json::object();
  return notifications_->review_requested_notices(thread_id, assistant_id, outcome.checkpoint_id,
                                                  interrupts);
}

void RunManager::store_outcome(const std::string& thread_id, const ThreadOutcome& outcome) {
  std::vector<QueuedNotification> notices;
  if (notifications_ != nullptr && outcome.status == ThreadStatus::kInterrupted) {
    std::string assistant_id;
    try {
      auto thread = store_.get_thread(thread_id);
      if (thread && thread->metadata.is_object() && thread->metadata.contains("assistant_id") &&
          thread->metadata["assistant_id"].is_string()) {
        assistant_id = thread->metadata["assistant_id"].get<std::string>();
      }
    } catch (const std::exception& e) {
      log_warning("thread " + thread_id + " was not read for its notification: " + e.what());
    }
    notices = review_requested_notices(thread_id, assistant_id, outcome);
  }
  store_.set_thread_outcome(thread_id, outcome, notices_for_store(notices));
  tell_after_store(notices);
}

std::vector<QueuedNotification> RunManager::decision_notices(const RunRecord& record,
                                                             const RunRequest& request) const {
  std::vector<QueuedNotification> out;
  if (notifications_ == nullptr) return out;
  if (record.status == RunStatus::kSuccess && carries_decision(request) &&
      !approval_only(request) && request.binding.is_object() && request.command) {
    const Command command = Command::from_json(*request.command);
    const Json shown = request.binding.value("shown", Json::object());
    for (const auto& [task, interrupts] : shown.items()) {
      if (!interrupts.is_array()) continue;
      for (const Json& interrupt : interrupts) {
        auto answer = command.resume_map.find(interrupt.value("id", ""));
        if (answer == command.resume_map.end()) continue;
        ReviewFacts review{record.thread_id, record.assistant_id,
                           request.binding.value("checkpoint_id", ""), answer->first,
                           interrupt.value("value", Json())};
        out.push_back(notifications_->review_decided_notice(review, request.decided_by.id,
                                                            decision_outcome(answer->second)));
      }
    }
  }
  return out;
}

std::optional<QueuedNotification> RunManager::run_end_notice(
    const RunRecord& record, const std::optional<ThreadOutcome>& thread,
    const std::string& failure) const {
  if (notifications_ == nullptr) return std::nullopt;
  return notifications_->run_ended_notice(
      record.run_id, record.thread_id, record.assistant_id, record.status,
      thread ? std::optional(thread->status) : std::nullopt, failure);
}

}  // namespace tollgate::server

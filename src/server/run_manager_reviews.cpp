// RunManager's part of the review records: written when a run pauses, claimed by the decision
// that answers them when it is accepted, put back when that decision changed nothing.
#include <algorithm>

#include "server/audit_log.h"
#include "server/ids.h"
#include "server/log.h"
#include "server/review_records.h"
#include "server/review_rules.h"
#include "server/review_store.h"
#include "server/run_manager.h"
#include "tollgate/error.h"

namespace tollgate::server {

void RunManager::check_reviewers(const RunRequest& request, const ThreadRecord& thread,
                                 const std::string& graph_id) {
  if (!request.binding.is_object() || !request.command) return;
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

void RunManager::claim_reviews(const RunRequest& request, const std::string& run_id) {
  if (reviews_ == nullptr || !request.binding.is_object() || !request.command) return;
  const Command command = Command::from_json(*request.command);
  if (command.resume_map.empty()) return;  // a plain resume the graph refuses (none or several)
  const std::string checkpoint = request.binding.value("checkpoint_id", "");
  const Json shown = request.binding.value("shown", Json::object());
  // Threads paused before review records were kept get theirs now.
  reviews_->add_pending(review_records_for(request.thread_id, checkpoint, shown, Json()));
  const std::vector<std::string> pending = interrupt_ids_of(shown);
  const std::int64_t now = now_millis();
  for (const auto& [interrupt_id, answer] : command.resume_map) {
    // An id that was not pending is refused by the graph when the run executes.
    if (std::find(pending.begin(), pending.end(), interrupt_id) == pending.end()) continue;
    if (reviews_->decide(request.thread_id, checkpoint, interrupt_id, request.decided_by.id, run_id,
                         now) == 0) {
      reviews_->reopen(run_id);
      throw Error::Conflict("The review of interrupt " + interrupt_id +
                            " is no longer pending: a decision for it was already accepted. "
                            "Nothing was changed.");
    }
  }
}

void RunManager::reopen_reviews(const std::string& run_id) {
  if (reviews_ == nullptr) return;
  try {
    reviews_->reopen(run_id);
  } catch (const std::exception& e) {
    log_error("the review records of run " + run_id + " could not be reopened: " + e.what());
  }
}

void RunManager::record_reviews(const std::string& thread_id, const ThreadOutcome& outcome) {
  if (reviews_ == nullptr || outcome.checkpoint_id.empty()) return;
  const Json interrupts = outcome.interrupts.is_object() ? outcome.interrupts : Json::object();
  try {
    reviews_->add_pending(
        review_records_for(thread_id, outcome.checkpoint_id, interrupts, outcome.values));
    reviews_->supersede_others(thread_id, outcome.checkpoint_id, interrupt_ids_of(interrupts));
  } catch (const std::exception& e) {
    log_error("the review records of thread " + thread_id + " were not written: " + e.what());
  }
}

}  // namespace tollgate::server

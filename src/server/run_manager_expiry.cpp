// RunManager's part of review deadlines: a review whose deadline passed is answered by the
// server, as identity "system:timeout", through the same path as a person's decision (bound
// to its checkpoint, claimed by a conditional update, audited, applied by a run).
#include "server/identity.h"
#include "server/log.h"
#include "server/notifications.h"
#include "server/review_records.h"
#include "server/review_store.h"
#include "server/run_manager.h"
#include "server/wire_format.h"
#include "tollgate/review_timeout.h"

namespace tollgate::server {
namespace {

// The rejection every action gets unless its own deadline passed.
Json default_rejection() {
  return Json{{"type", "reject"}, {"message", std::string(kReviewTimeoutMessage)}};
}

// What answers action `index` of the interrupt: its on_timeout once its deadline passed (only
// reject and respond: the policy refuses anything else, and so does this), else a rejection.
Json timeout_decision(const std::vector<ReviewRecord>& records, int index, std::int64_t now) {
  for (const ReviewRecord& r : records) {
    if (r.action_index != index || r.expires_at == 0 || r.expires_at > now) continue;
    if (!r.on_timeout.is_object()) return default_rejection();
    const std::string type = r.on_timeout.value("type", "reject");
    if (type != "reject" && type != "respond") return default_rejection();
    const Json* message = r.on_timeout.contains("message") ? &r.on_timeout["message"] : nullptr;
    return Json{{"type", type},
                {"message", message != nullptr && message->is_string()
                                ? message->get<std::string>()
                                : std::string(kReviewTimeoutMessage)}};
  }
  return default_rejection();
}

// The interrupt `id` of `shown` (task id -> [{id, value}]), or nullptr.
const Json* find_interrupt(const Json& shown, const std::string& id) {
  if (!shown.is_object()) return nullptr;
  for (const auto& [task, interrupts] : shown.items()) {
    for (const Json& interrupt : interrupts) {
      if (interrupt.is_object() && interrupt.value("id", "") == id) return &interrupt;
    }
  }
  return nullptr;
}

}  // namespace

void RunManager::expire_review(const ReviewRecord& due) {
  if (reviews_ == nullptr) return;
  const std::int64_t now = now_millis(*clock_);
  const std::optional<ThreadRecord> thread = store_.get_thread_head(due.thread_id);
  const Json metadata = thread && thread->metadata.is_object() ? thread->metadata : Json::object();
  const CompiledGraph* g = graph(metadata.value("graph_id", ""));
  if (!thread || g == nullptr) {
    // Nothing left to answer: the thread (or its graph) is gone.
    reviews_->supersede_others(due.thread_id, "", {});
    return;
  }
  RunConfig latest;
  latest.thread_id = due.thread_id;
  const StateSnapshot snapshot = g->get_state(latest);
  const Json shown = interrupts_by_task(snapshot);
  const Json* interrupt = find_interrupt(shown, due.interrupt_id);
  if (snapshot.config.checkpoint_id != due.checkpoint_id || interrupt == nullptr) {
    // The thread moved on without a decision here: what it shows now is what is pending.
    reviews_->supersede_others(due.thread_id, snapshot.config.checkpoint_id,
                               interrupt_ids_of(shown));
    return;
  }

  std::vector<ReviewRecord> records;
  for (ReviewRecord& r : reviews_->at_checkpoint(due.thread_id, due.checkpoint_id)) {
    if (r.interrupt_id == due.interrupt_id) records.push_back(std::move(r));
  }
  const Json value = interrupt->value("value", Json());
  const Json* actions = find_either(value, "action_requests", "actionRequests");
  const std::size_t count = actions != nullptr && actions->is_array() ? actions->size() : 1;
  Json decisions = Json::array();
  for (std::size_t i = 0; i < count; ++i)
    decisions.push_back(timeout_decision(records, static_cast<int>(i), now));

  RunRequest request;
  request.thread_id = due.thread_id;
  request.assistant_id = metadata.value("assistant_id", "");
  if (request.assistant_id.empty()) {
    const std::vector<RunRecord> newest = store_.list_runs_page(due.thread_id, 1, 0);
    if (!newest.empty()) request.assistant_id = newest.front().assistant_id;
  }
  request.command = Json{{"resume", {{due.interrupt_id, {{"decisions", decisions}}}}}};
  request.checkpoint_id = due.checkpoint_id;
  request.set_actors(Identity::system("timeout"),  // kTimeoutIdentity
                     latest_run_starter(store_, due.thread_id));
  // review.expired is stored with the run that applies the expiry.
  std::vector<QueuedNotification> notices;
  if (notifications_ != nullptr) {
    notices.push_back(notifications_->review_expired_notice(
        ReviewFacts{due.thread_id, request.assistant_id, due.checkpoint_id, due.interrupt_id, value},
        std::string(kTimeoutIdentity), decision_outcome(Json{{"decisions", decisions}})));
  }
  const RunRecord run = submit(request, std::move(notices));  // throws when it cannot be now

  if (!expiry_listener_) return;
  ReviewExpiry expiry{due.thread_id,
                      run.assistant_id,
                      due.checkpoint_id,
                      due.interrupt_id,
                      run.run_id,
                      decisions,
                      value,
                      now};
  try {
    expiry_listener_(expiry);
  } catch (const std::exception& e) {
    log_error("the expiry of interrupt " + due.interrupt_id +
              " was applied; its listener failed: " + e.what());
  }
}

}  // namespace tollgate::server

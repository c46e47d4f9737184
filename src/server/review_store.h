// Review records: the server's own account of every action waiting for a person. When a run
// pauses, each action of each pending interrupt gets a record — what was shown (a digest of
// the tool name and exact arguments), where (thread, checkpoint, interrupt), since when — and
// a decision moves the records it answers from pending to decided with a conditional update,
// so that of two decisions sent for the same action only one can win.
//
//   pending     waiting for a decision
//   decided     a decision was accepted for it (its run is `run_id`, its reviewer `decided_by`)
//   superseded  its interrupt is no longer pending without a decision here (the thread was
//               answered another way, resumed from elsewhere, or its state was written)
//   expired     its deadline passed: the server answered it (identity "system:timeout", its
//               run is `run_id`) with the action's on_timeout, the other actions of the
//               interrupt with a rejection (review_timeout.h)
//   refused     reserved
// A decision refused before it changed anything (a 409/422) puts its records back to pending;
// so does a refused expiry, which also drops the records' deadline (a person decides then).
//
// A reviewer may claim the pending records of an interrupt (an advisory lock that says "alice
// is looking at this"): the claim lives on the records until its expiry, and a decision, an
// expiry or a supersession of the records ends it.
//
// An action whose policy requires N > 1 approvals collects them here one by one (who, when);
// the decision of the Nth distinct reviewer is the one that claims the records and runs.
//
// The interface knows no SQL: SqlReviewStore keeps the records in the server's database,
// SQLite or PostgreSQL (sql_review_store.h).
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

struct ReviewRecord {
  std::string review_id;  // a uuid7
  std::string thread_id;
  std::string checkpoint_id;  // the paused checkpoint
  std::string interrupt_id;
  int action_index = 0;       // position in the interrupt's action_requests
  std::string tool_call_id;   // the AI message's tool call under review ("" when unknown)
  std::string digest;         // SHA-256 hex of {"name", "args"} of the action as shown
  std::int64_t created_at = 0;
  ReviewStatus status = ReviewStatus::kPending;
  std::string decided_by;     // the identity whose decision was accepted
  std::string run_id;         // the run carrying that decision
  std::int64_t decided_at = 0;
  // The deadline shown in the action's review config (milliseconds since the epoch; 0: none)
  // and what answers it then ({"type": "reject" | "respond", "message"}; null: none given).
  std::int64_t expires_at = 0;
  Json on_timeout;

  Json to_json() const;
};

// One reviewer's approval of one action of a pending interrupt.
struct ReviewApproval {
  std::string interrupt_id;
  int action_index = 0;
  std::string approved_by;
  std::int64_t approved_at = 0;
};

// A reviewer's live claim of the pending review of one interrupt.
struct ReviewClaim {
  std::string thread_id;
  std::string interrupt_id;
  std::string claimed_by;
  std::int64_t claimed_at = 0;  // milliseconds since the epoch
  std::int64_t expires_at = 0;

  // {thread_id, interrupt_id, claimed_by, claimed_at, expires_at} (ISO 8601 times).
  Json to_json() const;
};

class ReviewStore {
 public:
  virtual ~ReviewStore() = default;

  // Stores the records that are new; one already kept for the same (thread, checkpoint,
  // interrupt, action) is left as it is.
  virtual void add_pending(const std::vector<ReviewRecord>& records) = 0;
  // The thread's records, oldest first.
  virtual std::vector<ReviewRecord> list(const std::string& thread_id) = 0;
  // pending -> decided for the records of the interrupt at the checkpoint; returns how many
  // moved (0: none was pending — another decision won, or the review is over).
  virtual std::size_t decide(const std::string& thread_id, const std::string& checkpoint_id,
                             const std::string& interrupt_id, const std::string& decided_by,
                             const std::string& run_id, std::int64_t at) = 0;
  // decided or expired -> pending for the records the run claimed (its decision was refused).
  virtual void reopen(const std::string& run_id) = 0;
  // Drops the deadline of the records the run claimed (an expiry that was refused must not
  // fire again).
  virtual void disarm(const std::string& run_id) = 0;
  // The thread's records at the checkpoint, by interrupt and action.
  virtual std::vector<ReviewRecord> at_checkpoint(const std::string& thread_id,
                                                  const std::string& checkpoint_id) = 0;

  // Review deadlines. The earliest deadline of a pending record (nullopt: none is timed).
  virtual std::optional<std::int64_t> next_expiry() = 0;
  // The pending records whose deadline is at or before `now`, earliest first.
  virtual std::vector<ReviewRecord> due(std::int64_t now) = 0;
  // pending -> expired for the records of the interrupt at the checkpoint, claimed by
  // `run_id` as `decided_by`; returns how many moved (0: a decision or another expiry won).
  virtual std::size_t expire(const std::string& thread_id, const std::string& checkpoint_id,
                             const std::string& interrupt_id, const std::string& decided_by,
                             const std::string& run_id, std::int64_t at) = 0;
  // pending -> superseded for the thread's records that are not of `interrupt_ids` at
  // `checkpoint_id` (what is pending now).
  virtual void supersede_others(const std::string& thread_id, const std::string& checkpoint_id,
                                const std::vector<std::string>& interrupt_ids) = 0;

  // Records `approval` of the interrupt at `checkpoint_id`; false (nothing stored) when the
  // same reviewer already approved that action there.
  virtual bool add_approval(const std::string& thread_id, const std::string& checkpoint_id,
                            const ReviewApproval& approval) = 0;
  // The approvals recorded at the checkpoint, oldest first.
  virtual std::vector<ReviewApproval> approvals(const std::string& thread_id,
                                                const std::string& checkpoint_id) = 0;

  // Claims. Claims the thread's pending records of `interrupt_id` for `claimed_by` until
  // `expires_at`, unless another identity's claim of them is live at `now` (its expiry after
  // `now`); the holder claiming again extends its claim. Returns the claim that holds after
  // the call, one per interrupt (another identity's when it was refused; nullopt: none of
  // those records is pending).
  virtual std::optional<ReviewClaim> take_claim(const std::string& thread_id,
                                                const std::string& interrupt_id,
                                                const std::string& claimed_by, std::int64_t now,
                                                std::int64_t expires_at) = 0;
  // Ends the claim of the thread's pending records of `interrupt_id` when it is live at `now`
  // and held by `held_by` ("": by anyone); returns the claim that ended.
  virtual std::optional<ReviewClaim> release_claim(const std::string& thread_id,
                                                   const std::string& interrupt_id,
                                                   const std::string& held_by,
                                                   std::int64_t now) = 0;
  // The claims live at `now` of the pending records of `thread_ids`, one per interrupt.
  virtual std::vector<ReviewClaim> live_claims(const std::vector<std::string>& thread_ids,
                                               std::int64_t now) = 0;
};

}  // namespace tollgate::server

// ReviewClaims: a reviewer says "I am looking at this" so that two reviewers do not work on one
// card (docs/console.md, docs/config.md `claim_ttl`). A claim is advisory: it is shown to every
// reader of the thread (in each review config: claimed_by, claimed_at, claim_expires_at) and
// told on GET /reviews/stream (review.claimed, review.released), but a decision by another
// allowed reviewer still applies — and ends the claim, as an expiry or a new pause does.
//
// Only an identity the reviewer rules allow to decide a review may claim it (review_rules.h);
// only its holder or an admin may release it; it lapses `ttl` after it was last taken.
// Thread-safety: every method may be called from any thread (the store's calls are atomic).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "server/identity.h"
#include "server/review_store.h"
#include "server/store.h"
#include "tollgate/clock.h"
#include "tollgate/json.h"

namespace tollgate::server {

class Notifications;

class ReviewClaims {
 public:
  // `store`, `notifications` (may be null) and `clock` must outlive this.
  ReviewClaims(ReviewStore& store, Notifications* notifications, std::chrono::milliseconds ttl,
               const Clock& clock = system_clock());

  // Claims the review of `interrupt_id` ("": of every interrupt the thread waits on) for `who`.
  // Error(kPermissionDenied) naming the rule when `who` may not decide it; Error(kConflict)
  // naming the holder when another identity's claim is live, or when nothing of it is pending.
  // Returns the claims taken (one per interrupt).
  std::vector<ReviewClaim> claim(const ThreadRecord& thread, const std::string& interrupt_id,
                                 const Identity& who);
  // Releases `who`'s claims (anyone's for an admin) of `interrupt_id` ("": of every interrupt).
  // Error(kPermissionDenied) naming the holder when another identity holds one and `who` is no
  // admin. Returns the claims that ended.
  std::vector<ReviewClaim> release(const ThreadRecord& thread, const std::string& interrupt_id,
                                   const Identity& who);
  // Writes the live claims into the review configs of the interrupts of each thread JSON
  // (thread_to_json form): "claimed_by", "claimed_at", "claim_expires_at".
  void show(std::vector<Json*> threads);

 private:
  // The pending interrupts of the thread ({id, value}) that `interrupt_id` names ("": all);
  // Error(kConflict) when it names none.
  std::vector<Json> targets(const ThreadRecord& thread, const std::string& interrupt_id) const;

  ReviewStore& store_;
  Notifications* notifications_;
  std::chrono::milliseconds ttl_;
  const Clock& clock_;
};

}  // namespace tollgate::server

// Who may decide a review: the reviewer rules a pending interrupt declares in its review
// configs (written by the HITL middleware only when they differ from the defaults):
//   reviewers           ["owner", "role:<role>", "user:<id>"]; default
//                       ["owner", "role:reviewer", "role:admin"]
//   self_approval       false: the thread's owner may not approve or edit its own action
//   approvals_required  N distinct allowed reviewers approve before the call runs (default 1);
//                       approvals are not collected one by one yet, so an approval of such an
//                       action is refused (fail closed) — it can only be rejected or answered
// The local user of a server without authentication passes the reviewer rules (single-user
// mode).
#pragma once

#include <string>
#include <vector>

#include "server/identity.h"
#include "server/store.h"
#include "tollgate/json.h"

namespace tollgate::server {

// The owner of a thread ("" when it has none). The one place that knows where it is kept.
std::string thread_owner(const ThreadRecord& thread);

// The rules of one action of a review.
struct ReviewerRules {
  std::string action_name;
  std::vector<std::string> reviewers;
  bool self_approval = true;
  int approvals_required = 1;
};

// The rules of each action of an interrupt value (a HITL request); one default entry for an
// interrupt that is not one.
std::vector<ReviewerRules> reviewer_rules_of(const Json& interrupt_value);

// Throws Error(kPermissionDenied) with a message naming the rule when `who` may not give
// `answer` (a HITL response, or any resume value) to the interrupt `interrupt_value` of a
// thread owned by `owner`.
void check_reviewer(const Json& interrupt_value, const Json& answer, const Identity& who,
                    const std::string& owner);

}  // namespace tollgate::server

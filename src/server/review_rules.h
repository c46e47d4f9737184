// Who may decide a review: the reviewer rules a pending interrupt declares in its review
// configs (written by the HITL middleware only when they differ from the defaults):
//   reviewers           ["owner", "role:<role>", "user:<id>"]; default
//                       ["owner", "role:reviewer", "role:admin"]
//   self_approval       false: the thread's owner may not approve or edit its own action
//   approvals_required  N distinct allowed reviewers approve before the call runs (default 1);
//                       the server collects the approvals one by one (RunManager, review_store.h)
// The local user of a server without authentication passes the reviewer rules (single-user
// mode).
#pragma once

#include <string>
#include <vector>

#include "server/identity.h"
#include "server/store.h"
#include "tollgate/json.h"

namespace tollgate::server {

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

// An approval in `answer` of an action whose rules require more than one.
struct CountedApproval {
  int action_index = 0;
  int required = 1;
  std::string action_name;
};
std::vector<CountedApproval> counted_approvals(const Json& interrupt_value, const Json& answer);

}  // namespace tollgate::server

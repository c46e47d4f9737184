#include "server/review_rules.h"

#include <algorithm>

#include "server/review_records.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

const std::vector<std::string>& default_reviewers() {
  static const std::vector<std::string> kDefault = {"owner", "role:reviewer", "role:admin"};
  return kDefault;
}

bool matches(const std::string& rule, const Identity& who, const std::string& owner) {
  if (rule == "owner") return !owner.empty() && who.id == owner;
  if (rule.rfind("role:", 0) == 0) return who.has_role(rule.substr(5));
  if (rule.rfind("user:", 0) == 0) return who.id == rule.substr(5);
  return false;
}

std::string listed(const std::vector<std::string>& rules) {
  return Json(rules).dump();
}

// The decision type the answer gives action `index` ("" when it does not say).
std::string decision_type(const Json& answer, std::size_t index) {
  const Json* decisions = find_either(answer, "decisions", "decisions");
  if (decisions == nullptr || !decisions->is_array() || index >= decisions->size()) return "";
  return (*decisions)[index].is_object() ? (*decisions)[index].value("type", "") : "";
}

}  // namespace

std::vector<ReviewerRules> reviewer_rules_of(const Json& interrupt_value) {
  std::vector<ReviewerRules> out;
  const Json* configs = find_either(interrupt_value, "review_configs", "reviewConfigs");
  if (configs == nullptr || !configs->is_array() || configs->empty()) {
    out.push_back(ReviewerRules{"", default_reviewers(), true, 1});
    return out;
  }
  for (const Json& config : *configs) {
    ReviewerRules rules;
    const Json* name = find_either(config, "action_name", "actionName");
    if (name != nullptr && name->is_string()) rules.action_name = name->get<std::string>();
    const Json* reviewers = find_either(config, "reviewers", "reviewers");
    if (reviewers != nullptr && reviewers->is_array()) {
      for (const Json& rule : *reviewers) {
        if (rule.is_string()) rules.reviewers.push_back(rule.get<std::string>());
      }
    } else {
      rules.reviewers = default_reviewers();
    }
    const Json* self = find_either(config, "self_approval", "selfApproval");
    if (self != nullptr && self->is_boolean()) rules.self_approval = self->get<bool>();
    const Json* required = find_either(config, "approvals_required", "approvalsRequired");
    if (required != nullptr && required->is_number_integer()) {
      rules.approvals_required = std::max(1, required->get<int>());
    }
    out.push_back(std::move(rules));
  }
  return out;
}

void check_reviewer(const Json& interrupt_value, const Json& answer, const Identity& who,
                    const std::string& owner) {
  const std::vector<ReviewerRules> all = reviewer_rules_of(interrupt_value);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const ReviewerRules& rules = all[i];
    const std::string what = rules.action_name.empty() ? "this review" : rules.action_name;
    if (!who.authenticated) continue;  // the local user of a server without authentication
    const bool allowed = std::any_of(rules.reviewers.begin(), rules.reviewers.end(),
                                     [&](const std::string& rule) { return matches(rule, who, owner); });
    if (!allowed) {
      throw Error::PermissionDenied("'" + who.id + "' may not decide " + what +
                                    ": rule reviewers " + listed(rules.reviewers) +
                                    " does not include them");
    }
    const std::string type = decision_type(answer, i);
    if (!rules.self_approval && !owner.empty() && who.id == owner &&
        (type == "approve" || type == "edit")) {
      throw Error::PermissionDenied("'" + who.id + "' may not " + type + " " + what +
                                    ": rule self_approval false (the thread's owner may not "
                                    "approve or edit its own action; it may reject it)");
    }
  }
}

std::vector<CountedApproval> counted_approvals(const Json& interrupt_value, const Json& answer) {
  std::vector<CountedApproval> out;
  const std::vector<ReviewerRules> all = reviewer_rules_of(interrupt_value);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].approvals_required > 1 && decision_type(answer, i) == "approve") {
      out.push_back(CountedApproval{static_cast<int>(i), all[i].approvals_required,
                                    all[i].action_name});
    }
  }
  return out;
}

}  // namespace tollgate::server

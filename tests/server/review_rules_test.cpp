// Who may decide: the reviewer rules an interrupt declares, checked against the identity.
#include "server/review_rules.h"
#include "server/thread_access.h"

#include <gtest/gtest.h>

#include "tollgate/error.h"

namespace tollgate::server {
namespace {

Identity user(const std::string& id, std::vector<std::string> roles = {"user"}) {
  return Identity{id, "", std::move(roles), true};
}

Json review(Json config_extra = Json::object()) {
  Json config{{"action_name", "write_file"}, {"allowed_decisions", {"approve", "reject"}}};
  config.update(config_extra);
  return Json{{"action_requests", {{{"name", "write_file"}, {"args", {{"path", "a.txt"}}}}}},
              {"review_configs", {config}}};
}

Json decision(const std::string& type) {
  return Json{{"decisions", {{{"type", type}}}}};
}

std::string refusal(const Json& value, const Json& answer, const Identity& who,
                    const std::string& owner) {
  try {
    check_reviewer(value, answer, who, owner);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kPermissionDenied);
    return e.what();
  }
  return "";
}

TEST(ReviewRules, ByDefaultTheOwnerReviewersAndAdminsMayDecide) {
  EXPECT_EQ(refusal(review(), decision("approve"), user("olga"), "olga"), "");
  EXPECT_EQ(refusal(review(), decision("approve"), user("rita", {"reviewer"}), "olga"), "");
  EXPECT_EQ(refusal(review(), decision("approve"), user("adam", {"admin"}), "olga"), "");
}

TEST(ReviewRules, AnyoneElseIsRefusedNamingTheRule) {
  EXPECT_EQ(refusal(review(), decision("approve"), user("mallory"), "olga"),
            "'mallory' may not decide write_file: rule reviewers "
            "[\"owner\",\"role:reviewer\",\"role:admin\"] does not include them");
}

TEST(ReviewRules, DeclaredReviewersReplaceTheDefaults) {
  const Json value = review({{"reviewers", {"user:alice"}}});
  EXPECT_EQ(refusal(value, decision("approve"), user("alice"), "olga"), "");
  EXPECT_NE(refusal(value, decision("approve"), user("olga"), "olga"), "");
  EXPECT_NE(refusal(value, decision("approve"), user("adam", {"admin"}), "olga"), "");
}

TEST(ReviewRules, WithoutSelfApprovalTheOwnerMayNotApproveOrEdit) {
  const Json value = review({{"self_approval", false}});
  EXPECT_EQ(refusal(value, decision("approve"), user("olga"), "olga"),
            "'olga' may not approve write_file: rule self_approval false (the thread's owner may "
            "not approve or edit its own action; it may reject it)");
  EXPECT_NE(refusal(value, decision("edit"), user("olga"), "olga"), "");
}

TEST(ReviewRules, WithoutSelfApprovalTheOwnerMayStillReject) {
  EXPECT_EQ(refusal(review({{"self_approval", false}}), decision("reject"), user("olga"), "olga"),
            "");
}

TEST(ReviewRules, TheLocalUserOfAServerWithoutAuthenticationMayDecideEverything) {
  EXPECT_EQ(refusal(review({{"reviewers", {"user:alice"}}}), decision("approve"),
                    Identity::local(), ""),
            "");
}

TEST(ReviewRules, AnInterruptThatIsNoHitlRequestHasTheDefaultRules) {
  EXPECT_NE(refusal(Json("what is your name?"), Json("Ada"), user("mallory"), "olga"), "");
  EXPECT_EQ(refusal(Json("what is your name?"), Json("Ada"), user("olga"), "olga"), "");
}

TEST(ReviewRules, AnApprovalOfAnActionNeedingSeveralIsCounted) {
  const Json value = review({{"approvals_required", 2}});
  const std::vector<CountedApproval> counted = counted_approvals(value, decision("approve"));
  ASSERT_EQ(counted.size(), 1u);
  EXPECT_EQ(counted[0].action_index, 0);
  EXPECT_EQ(counted[0].required, 2);
  EXPECT_EQ(counted[0].action_name, "write_file");
}

TEST(ReviewRules, ARejectionOrASingleApprovalRuleCountsNothing) {
  EXPECT_TRUE(counted_approvals(review({{"approvals_required", 2}}), decision("reject")).empty());
  EXPECT_TRUE(counted_approvals(review(), decision("approve")).empty());
}

TEST(ReviewRules, TheRulesOfEachActionAreRead) {
  const auto rules = reviewer_rules_of(review({{"approvals_required", 2}, {"selfApproval", false}}));
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0].approvals_required, 2);
  EXPECT_FALSE(rules[0].self_approval);
}

TEST(ReviewRules, TheOwnerIsReadFromTheThreadsMetadata) {
  ThreadRecord thread;
  thread.metadata = Json{{"owner", "olga"}};
  EXPECT_EQ(thread_owner(thread), "olga");
  EXPECT_EQ(thread_owner(ThreadRecord{}), "");
}

}  // namespace
}  // namespace tollgate::server

// Policy files (`tollgate chat --policy`): the declared interrupt_on with its `when` rules, and
// one test per refused mistake, each checking the field the error names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tollgate/agent_config.h"
#include "tollgate/error.h"
#include "tollgate/messages.h"

namespace tollgate {
namespace {

TEST(PolicyFile, ParsesRulesAndTemplates) {
  const Json file = Json::parse(R"({
    "interrupt_on": {
      "execute_sql": {"allowed_decisions": ["approve", "reject"], "when": {"sql_writes": true}},
      "send_email": {"when": {"arg": "to", "not_matches": ".*@example\\.com$"},
                     "description": "Send mail to {to}?"},
      "delete_file": true}})");
  HitlPolicy policy(parse_policy(file));
  const Json inside = make_tool_call("send_email", {{"to", "a@example.com"}}, "a");
  const Json outside = make_tool_call("send_email", {{"to", "a@evil.com"}}, "b");
  EXPECT_FALSE(policy.review_for({inside, nullptr, nullptr}).has_value());
  EXPECT_EQ(policy.review_for({outside, nullptr, nullptr})->size(), 4U);
  EXPECT_EQ(policy.describe({outside, nullptr, nullptr}), "Send mail to a@evil.com?");
  const Json write = make_tool_call("execute_sql", {{"query", "DROP TABLE x"}}, "c");
  EXPECT_EQ(policy.review_for({write, nullptr, nullptr})->size(), 2U);
}

TEST(PolicyFile, AnyRuleReviewsWhenOneMatches) {
  HitlPolicy policy(parse_policy(Json::parse(
      R"({"write_file": {"when": {"any": [{"arg": "path", "starts_with": "etc/"},
                                          {"arg": "path", "contains": "secret"}]}}})")));
  EXPECT_TRUE(policy.review_for(
      {make_tool_call("write_file", {{"path", "a/secret"}}, "a"), nullptr, nullptr}));
  EXPECT_FALSE(
      policy.review_for({make_tool_call("write_file", {{"path", "a/b"}}, "b"), nullptr, nullptr}));
}

void expect_policy_error(const char* json, const std::string& fragment,
                         const PolicyContext& context = {}) {
  try {
    parse_policy(Json::parse(json), context);
    ADD_FAILURE() << "no error for " << json;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(PolicyFile, UnknownDecisionNamesTool) {
  expect_policy_error(R"({"interrupt_on": {"send_email": {"allowed_decisions": ["aprove"]}}})",
                      "'send_email'");
}

TEST(PolicyFile, EmptyDecisionsFailClosed) {
  expect_policy_error(R"({"send_email": {"allowed_decisions": []}})", "allowed_decisions");
}

TEST(PolicyFile, UnknownConfigKeyNamesField) {
  expect_policy_error(R"({"send_email": {"alowed_decisions": ["approve"]}})",
                      "interrupt_on.send_email: unknown key 'alowed_decisions'");
}

TEST(PolicyFile, UnknownWhenOperatorNamesField) {
  expect_policy_error(R"({"send_email": {"when": {"arg": "to", "ends_with": "x"}}})",
                      "interrupt_on.send_email.when: unknown key 'ends_with'");
}

TEST(PolicyFile, BadRegexNamesField) {
  expect_policy_error(R"({"send_email": {"when": {"arg": "to", "matches": "(("}}})",
                      "interrupt_on.send_email.when: 'matches' is not a valid regular expression");
}

TEST(PolicyFile, SqlWritesMustBeBoolean) {
  expect_policy_error(R"({"execute_sql": {"when": {"sql_writes": "yes"}}})",
                      "interrupt_on.execute_sql.when: 'sql_writes' must be true or false");
}

TEST(PolicyFile, EntryMustBeBoolOrObject) {
  expect_policy_error(R"({"interrupt_on": {"send_email": "yes"}})",
                      "interrupt_on.send_email: must be true, false or an object");
}

TEST(PolicyFile, UnknownTopLevelKeyIsRefused) {
  expect_policy_error(R"({"interrupt_on": {}, "interupt_mode": "x"})",
                      "unknown key 'interupt_mode'");
}

TEST(PolicyFile, MissingFileIsReported) {
  try {
    load_policy_file("/nonexistent/policy.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/policy.json"), std::string::npos);
  }
}

TEST(PolicyFile, APolicyForAToolTheAgentLacksIsRefusedNamingTheKnownOnes) {
  PolicyContext context;
  context.tools = std::vector<std::string>{"send_email", "delete_file"};
  expect_policy_error(R"({"interrupt_on": {"delete_fle": true}})",
                      "interrupt_on.delete_fle: unknown tool 'delete_fle' (the agent's tools: "
                      "delete_file, send_email)",
                      context);
}

TEST(PolicyFile, ANumberPastADoublesRangeIsRefusedAsNotJson) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("tollgate-policy-range-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << R"({"interrupt_on": {}, "x": 1e999999})";
  try {
    load_policy_file(file);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()).rfind("policy file " + file.string() + ": not valid JSON", 0),
              0u)
        << e.what();
  }
  std::filesystem::remove(file);
}

TEST(PolicyFile, LoadErrorsNameTheFile) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("tollgate-policy-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << R"({"send_email": {"when": {"arg": "to", "ends_with": "x"}}})";
  try {
    load_policy_file(file);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind(
            "policy file " + file.string() + ": interrupt_on.send_email.when: unknown key", 0),
        0u)
        << e.what();
  }
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace tollgate

// Review policy: interrupt_on parsing and fail-closed resolution.
#include <gtest/gtest.h>

#include "agent/python_format.h"
#include "tollgate/error.h"
#include "tollgate/human_in_the_loop.h"

namespace tollgate {
namespace {

HumanInTheLoopOptions options_from(const Json& interrupt_on) {
  HumanInTheLoopOptions options;
  options.interrupt_on = parse_interrupt_on(interrupt_on);
  return options;
}

Json call(const std::string& name, Json args) {
  return Json{{"id", "call_1"}, {"name", name}, {"args", std::move(args)}};
}

std::optional<std::vector<DecisionType>> review(const HitlPolicy& policy, const Json& tool_call) {
  return policy.review_for(ToolCallReview{tool_call, nullptr, nullptr});
}

std::string construction_error(const Json& interrupt_on) {
  try {
    HitlPolicy policy(options_from(interrupt_on));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

TEST(HitlPolicy, TrueAllowsAllFourDecisions) {
  HitlPolicy policy(options_from({{"send_email", true}}));
  const auto allowed = review(policy, call("send_email", Json::object()));
  ASSERT_TRUE(allowed);
  EXPECT_EQ(*allowed, (std::vector<DecisionType>{DecisionType::kApprove, DecisionType::kEdit,
                                                 DecisionType::kReject, DecisionType::kRespond}));
}

TEST(HitlPolicy, FalseMeansNoReview) {
  HitlPolicy policy(options_from({{"get_weather", false}}));
  EXPECT_FALSE(review(policy, call("get_weather", {{"city", "Paris"}})));
  EXPECT_FALSE(policy.gates_tool("get_weather"));
}

TEST(HitlPolicy, UnlistedToolIsAutoApproved) {
  HitlPolicy policy(options_from({{"send_email", true}}));
  EXPECT_FALSE(review(policy, call("get_weather", Json::object())));
}

TEST(HitlPolicy, ConfigKeepsItsAllowedDecisionsInOrderGiven) {
  HitlPolicy policy(
      options_from({{"delete_file", {{"allowed_decisions", {"reject", "approve"}}}}}));
  EXPECT_EQ(*review(policy, call("delete_file", Json::object())),
            (std::vector<DecisionType>{DecisionType::kReject, DecisionType::kApprove}));
}

TEST(HitlPolicy, CamelCaseConfigKeysAreAccepted) {
  HitlPolicy policy(options_from({{"delete_file", {{"allowedDecisions", {"approve"}}}}}));
  EXPECT_EQ(*review(policy, call("delete_file", Json::object())),
            (std::vector<DecisionType>{DecisionType::kApprove}));
}

TEST(HitlPolicy, MissingAllowedDecisionsFailsClosed) {
  EXPECT_EQ(construction_error({{"delete_file", {{"description", "Delete?"}}}}),
            "Invalid `interrupt_on` config for tool 'delete_file': `allowed_decisions` must be a "
            "non-empty list of decision types (e.g. ['approve', 'reject']). Got config with keys "
            "['description'] and allowed_decisions=None.");
}

TEST(HitlPolicy, EmptyAllowedDecisionsFailsClosed) {
  EXPECT_EQ(construction_error(
                {{"delete_file", {{"allowed_decisions", Json::array()}, {"description", "x"}}}}),
            "Invalid `interrupt_on` config for tool 'delete_file': `allowed_decisions` must be a "
            "non-empty list of decision types (e.g. ['approve', 'reject']). Got config with keys "
            "['allowed_decisions', 'description'] and allowed_decisions=[].");
}

TEST(HitlPolicy, UnknownDecisionTypeFailsClosed) {
  EXPECT_EQ(construction_error({{"delete_file", {{"allowed_decisions", {"approve", "ignore"}}}}}),
            "Invalid `interrupt_on` config for tool 'delete_file': `allowed_decisions` must be a "
            "non-empty list of decision types (e.g. ['approve', 'reject']). Got config with keys "
            "['allowed_decisions'] and allowed_decisions=['approve', 'ignore'].");
}

TEST(HitlPolicy, MisspelledAllowedDecisionsKeyFailsClosed) {
  const std::string error =
      construction_error({{"delete_file", {{"allowed_decision", {"approve"}}}}});
  EXPECT_NE(error.find("Got config with keys ['allowed_decision'] and allowed_decisions=None."),
            std::string::npos)
      << error;
}

TEST(HitlPolicy, CppConfigWithoutDecisionsFailsClosed) {
  HumanInTheLoopOptions options;
  InterruptOnConfig config;
  config.description = "Delete?";
  options.interrupt_on["delete_file"] = ToolReviewPolicy::with(config);
  try {
    HitlPolicy policy(std::move(options));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("keys ['description'] and allowed_decisions=None"),
              std::string::npos)
        << e.what();
  }
}

TEST(HitlPolicy, NonBooleanNonObjectEntryIsRefusedNamingTheTool) {
  EXPECT_EQ(construction_error({{"send_email", "yes"}}),
            "interrupt_on.send_email: must be true, false or an object with allowed_decisions");
}

TEST(HitlPolicy, WhenStartsWithGatesOnlyMatchingCalls) {
  HitlPolicy policy(options_from({{"delete_file",
                                   {{"allowed_decisions", {"approve", "reject"}},
                                    {"when", {{"arg", "path"}, {"starts_with", "/etc"}}}}}}));
  EXPECT_TRUE(review(policy, call("delete_file", {{"path", "/etc/passwd"}})));
  EXPECT_FALSE(review(policy, call("delete_file", {{"path", "/tmp/cache.txt"}})));
}

TEST(HitlPolicy, WhenMatchesUsesARegularExpression) {
  HitlPolicy policy(
      options_from({{"execute_sql",
                     {{"allowed_decisions", {"approve"}},
                      {"when", {{"arg", "query"}, {"matches", "(?:DROP|DELETE)\\b.*"}}}}}}));
  EXPECT_TRUE(review(policy, call("execute_sql", {{"query", "DELETE FROM users"}})));
  EXPECT_FALSE(review(policy, call("execute_sql", {{"query", "SELECT 1"}})));
}

TEST(HitlPolicy, WhenMatchesNeedsTheWholeText) {
  HitlPolicy policy(
      options_from({{"execute_sql",
                     {{"allowed_decisions", {"approve"}},
                      {"when", {{"arg", "query"}, {"matches", "(?:DROP|DELETE)"}}}}}}));
  EXPECT_TRUE(review(policy, call("execute_sql", {{"query", "DELETE"}})));
  EXPECT_FALSE(review(policy, call("execute_sql", {{"query", "DELETE FROM users"}})));
}

TEST(HitlPolicy, WhenRuleWithAMissingArgumentReviewsTheCall) {
  HitlPolicy policy(options_from({{"delete_file",
                                   {{"allowed_decisions", {"approve", "reject"}},
                                    {"when", {{"arg", "path"}, {"starts_with", "/etc"}}}}}}));
  EXPECT_TRUE(review(policy, call("delete_file", Json::object())));
}

TEST(HitlPolicy, WhenRuleWithUnknownConditionIsRefused) {
  EXPECT_EQ(construction_error({{"delete_file",
                                 {{"allowed_decisions", {"approve"}},
                                  {"when", {{"arg", "path"}, {"prefix", "/"}}}}}}),
            "interrupt_on.delete_file.when: unknown key 'prefix' (expected equals, not_equals, "
            "starts_with, contains, matches, not_matches, path_glob or path_under)");
}

TEST(HitlPolicy, AJsonPolicyForAnUnknownToolIsRefusedWhenTheToolsAreKnown) {
  PolicyContext context;
  context.tools = std::vector<std::string>{"send_email", "delete_file"};
  try {
    parse_interrupt_on({{"send_emial", true}}, context);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_STREQ(e.what(),
                 "interrupt_on.send_emial: unknown tool 'send_emial' (the agent's tools: "
                 "delete_file, send_email)");
  }
}

TEST(HitlPolicy, CheckToolsRefusesAnUnknownToolOfACppPolicy) {
  HumanInTheLoopOptions options;
  options.interrupt_on["pay"] = ToolReviewPolicy::review_all();
  HitlPolicy policy(std::move(options));
  EXPECT_NO_THROW(policy.check_tools({"pay", "refund"}));
  EXPECT_THROW(policy.check_tools({"refund"}), Error);
}

TEST(HitlPolicy, CppWhenPredicateSeesTheToolCall) {
  HumanInTheLoopOptions options;
  InterruptOnConfig config;
  config.allowed_decisions = {"approve"};
  config.when = [](const ToolCallReview& c) {
    return c.tool_call["args"].value("amount", 0) > 100;
  };
  options.interrupt_on["pay"] = ToolReviewPolicy::with(config);
  HitlPolicy policy(std::move(options));
  EXPECT_TRUE(review(policy, call("pay", {{"amount", 500}})));
  EXPECT_FALSE(review(policy, call("pay", {{"amount", 5}})));
}

TEST(HitlPolicy, DefaultDescriptionShowsPrefixToolAndIndentedArgs) {
  HitlPolicy policy(options_from({{"send_email", true}}));
  const Json tool_call = call("send_email", {{"to", "alice@example.com"}});
  EXPECT_EQ(policy.describe(ToolCallReview{tool_call, nullptr, nullptr}),
            "Tool execution requires approval\n\nTool: send_email\nArgs: {\n  \"to\": "
            "\"alice@example.com\"\n}");
}

TEST(HitlPolicy, DescriptionPrefixIsConfigurable) {
  HumanInTheLoopOptions options = options_from({{"send_email", true}});
  options.description_prefix = "Needs sign-off";
  HitlPolicy policy(std::move(options));
  const Json tool_call = call("send_email", Json::object());
  EXPECT_EQ(policy.describe(ToolCallReview{tool_call, nullptr, nullptr}),
            "Needs sign-off\n\nTool: send_email\nArgs: {}");
}

TEST(HitlPolicy, TemplateDescriptionFillsArguments) {
  HitlPolicy policy(options_from({{"delete_file",
                                   {{"allowed_decisions", {"approve"}},
                                    {"description", {{"template", "Delete {path}? ({tool})"}}}}}}));
  const Json tool_call = call("delete_file", {{"path", "/etc/passwd"}});
  EXPECT_EQ(policy.describe(ToolCallReview{tool_call, nullptr, nullptr}),
            "Delete /etc/passwd? (delete_file)");
}

TEST(HitlPolicy, StringDescriptionIsUsedVerbatim) {
  HitlPolicy policy(options_from(
      {{"delete_file", {{"allowed_decisions", {"approve"}}, {"description", "Careful {path}"}}}}));
  const Json tool_call = call("delete_file", {{"path", "/x"}});
  EXPECT_EQ(policy.describe(ToolCallReview{tool_call, nullptr, nullptr}), "Careful {path}");
}

TEST(PythonFormat, ReprRendersLikePython) {
  EXPECT_EQ(python_repr(Json{{"a", {1, true, nullptr, "it's"}}, {"b", "x"}}),
            "{'a': [1, True, None, \"it's\"], 'b': 'x'}");
}

TEST(PythonFormat, JsonDumpsUsesPythonSeparators) {
  EXPECT_EQ(python_json_dumps(Json{{"to", "bob"}, {"n", {1, 2}}}),
            "{\"n\": [1, 2], \"to\": \"bob\"}");
  EXPECT_EQ(python_json_dumps(Json("caf\xc3\xa9")), "\"caf\\u00e9\"");
}

}  // namespace
}  // namespace tollgate

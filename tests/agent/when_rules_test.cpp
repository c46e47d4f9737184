// The `when` rule grammar: what each condition holds for, that rules fail closed, and the errors
// that name the field.
#include "tollgate/when_rules.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_folder.h"
#include "tollgate/error.h"

namespace tollgate {
namespace {
namespace fs = std::filesystem;

// Does `rule` hold for a call with these arguments?
bool holds(const Json& rule, const Json& args, const PolicyContext& context = {}) {
  const WhenFn when = parse_when_rule(rule, "when", context);
  const Json tool_call = {{"id", "c1"}, {"name", "tool"}, {"args", args}};
  return when(ToolCallReview{tool_call, nullptr, nullptr});
}

std::string parse_error(const Json& rule) {
  try {
    parse_when_rule(rule, "interrupt_on.tool.when");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

Json path_rule(const char* condition, const char* operand) {
  return {{"arg", "path"}, {condition, operand}};
}

TEST(WhenRules, EqualsAndNotEqualsCompareTheWholeText) {
  EXPECT_TRUE(holds({{"arg", "to"}, {"equals", "bob"}}, {{"to", "bob"}}));
  EXPECT_FALSE(holds({{"arg", "to"}, {"equals", "bob"}}, {{"to", "bobby"}}));
  EXPECT_TRUE(holds({{"arg", "to"}, {"not_equals", "bob"}}, {{"to", "bobby"}}));
  EXPECT_FALSE(holds({{"arg", "to"}, {"not_equals", "bob"}}, {{"to", "bob"}}));
}

TEST(WhenRules, StartsWithAndContainsLookAtTheText) {
  EXPECT_TRUE(holds({{"arg", "path"}, {"starts_with", "/etc"}}, {{"path", "/etc/passwd"}}));
  EXPECT_FALSE(holds({{"arg", "path"}, {"starts_with", "/etc"}}, {{"path", "/tmp/etc"}}));
  EXPECT_TRUE(holds({{"arg", "path"}, {"contains", "secret"}}, {{"path", "a/secret/b"}}));
  EXPECT_FALSE(holds({{"arg", "path"}, {"contains", "secret"}}, {{"path", "a/b"}}));
}

TEST(WhenRules, MatchesNeedsTheWholeText) {
  const Json rule = {{"arg", "to"}, {"matches", "[a-z]+@example\\.com"}};
  EXPECT_TRUE(holds(rule, {{"to", "bob@example.com"}}));
  EXPECT_FALSE(holds(rule, {{"to", "bob@example.com.evil.org"}}));
  EXPECT_FALSE(holds(rule, {{"to", "x bob@example.com"}}));
}

TEST(WhenRules, NotMatchesHoldsWhenTheWholeTextDoesNotMatch) {
  const Json rule = {{"arg", "to"}, {"not_matches", ".*@example\\.com"}};
  EXPECT_FALSE(holds(rule, {{"to", "bob@example.com"}}));
  EXPECT_TRUE(holds(rule, {{"to", "bob@example.com.evil.org"}}));
}

TEST(WhenRules, AMissingArgumentMakesEveryConditionHold) {
  for (const char* condition : {"equals", "not_equals", "starts_with", "contains", "matches",
                                "not_matches", "path_glob", "path_under"}) {
    EXPECT_TRUE(holds({{"arg", "x"}, {condition, "a"}}, {{"y", "a"}})) << condition;
  }
}

TEST(WhenRules, ANonStringArgumentMakesEveryConditionHold) {
  for (const char* condition : {"equals", "not_equals", "starts_with", "contains", "matches",
                                "not_matches", "path_glob", "path_under"}) {
    EXPECT_TRUE(holds({{"arg", "x"}, {condition, "1"}}, {{"x", 1}})) << condition;
    EXPECT_TRUE(holds({{"arg", "x"}, {condition, "a"}}, {{"x", {"a"}}})) << condition;
  }
}

TEST(WhenRules, ArgumentsThatAreNotAnObjectMakeTheRuleHold) {
  EXPECT_TRUE(holds({{"arg", "to"}, {"equals", "bob"}}, Json("bob")));
}

TEST(WhenRules, SqlWritesHoldsForAWriteOnly) {
  EXPECT_TRUE(holds({{"sql_writes", true}}, {{"query", "DELETE FROM users"}}));
  EXPECT_FALSE(holds({{"sql_writes", true}}, {{"query", "SELECT 1"}}));
  EXPECT_TRUE(holds({{"sql_writes", false}}, {{"query", "SELECT 1"}}));
}

TEST(WhenRules, SqlWritesReadsTheNamedArgument) {
  EXPECT_TRUE(holds({{"sql_writes", true}, {"arg", "sql"}}, {{"sql", "DROP TABLE t"}}));
}

TEST(WhenRules, SqlWritesWithoutAQueryHolds) {
  EXPECT_TRUE(holds({{"sql_writes", true}}, Json::object()));
  EXPECT_TRUE(holds({{"sql_writes", true}}, {{"query", 7}}));
}

TEST(WhenRules, AllHoldsWhenEveryRuleHolds) {
  const Json rule = {{"all",
                      {{{"arg", "to"}, {"not_matches", ".*@example\\.com"}},
                       {{"arg", "subject"}, {"not_equals", "test"}}}}};
  EXPECT_TRUE(holds(rule, {{"to", "eve@evil.com"}, {"subject", "hi"}}));
  EXPECT_FALSE(holds(rule, {{"to", "eve@evil.com"}, {"subject", "test"}}));
}

TEST(WhenRules, AnyHoldsWhenOneRuleHolds) {
  const Json rule = {
      {"any",
       {{{"arg", "path"}, {"starts_with", "etc/"}}, {{"arg", "path"}, {"contains", "secret"}}}}};
  EXPECT_TRUE(holds(rule, {{"path", "a/secret"}}));
  EXPECT_FALSE(holds(rule, {{"path", "a/b"}}));
}

TEST(WhenRules, AMissingArgumentInsideAllStillHolds) {
  const Json rule = {{"all", {{{"arg", "to"}, {"equals", "x"}}, {{"arg", "cc"}, {"equals", "y"}}}}};
  EXPECT_TRUE(holds(rule, Json::object()));
}

TEST(WhenRules, MatchesOnTextThatIsNotUtf8Holds) {
  const std::string text = std::string("DROP \xff") + " TABLE";
  EXPECT_TRUE(holds({{"arg", "q"}, {"matches", "SELECT.*"}}, {{"q", text}}));
  EXPECT_TRUE(holds({{"arg", "q"}, {"not_matches", ".*"}}, {{"q", text}}));
}

TEST(WhenRules, PatternsRunInLinearTimeOnAMegabyte) {
  // A backtracking engine takes exponential time on (a+)+$ against "aaa...b", and std::regex
  // recurses once per character; RE2 answers either way.
  const std::string text = std::string(1 << 20, 'a') + "b";
  EXPECT_FALSE(holds({{"arg", "q"}, {"matches", "(a+)+"}}, {{"q", text}}));
  EXPECT_TRUE(holds({{"arg", "q"}, {"matches", "(a|aa)*b"}}, {{"q", text}}));
}

TEST(WhenRules, PathGlobMatchesEverySpellingOfAPathInTheSandbox) {
  const Json rule = path_rule("path_glob", "secrets/**");
  for (const char* path :
       {"secrets/k", "./secrets/k", "secrets//k", "a/../secrets/k", "secrets/deep/k", "secrets"}) {
    EXPECT_TRUE(holds(rule, {{"path", path}})) << path;
  }
  EXPECT_FALSE(holds(rule, {{"path", "public/k"}}));
  EXPECT_FALSE(holds(rule, {{"path", "secretsx/k"}}));
}

TEST(WhenRules, PathGlobStarStaysInsideOneSegment) {
  const Json rule = path_rule("path_glob", "*.env");
  EXPECT_TRUE(holds(rule, {{"path", "prod.env"}}));
  EXPECT_TRUE(holds(rule, {{"path", "./prod.env"}}));
  EXPECT_FALSE(holds(rule, {{"path", "config/prod.env"}}));
}

TEST(WhenRules, PathGlobLeadingGlobstarMatchesAtAnyDepth) {
  const Json rule = path_rule("path_glob", "**/*.key");
  EXPECT_TRUE(holds(rule, {{"path", "a.key"}}));
  EXPECT_TRUE(holds(rule, {{"path", "x/y/a.key"}}));
  EXPECT_FALSE(holds(rule, {{"path", "x/a.keys"}}));
}

TEST(WhenRules, PathGlobTakesItsOtherCharactersLiterally) {
  const Json rule = path_rule("path_glob", "logs/a+b.(1).txt");
  EXPECT_TRUE(holds(rule, {{"path", "logs/a+b.(1).txt"}}));
  EXPECT_FALSE(holds(rule, {{"path", "logs/aab.(1).txt"}}));
}

TEST(WhenRules, PathUnderHoldsForTheFolderAndEverythingInIt) {
  const Json rule = path_rule("path_under", "secrets");
  for (const char* path : {"secrets", "secrets/k", "./secrets//a/k", "x/../secrets/k"}) {
    EXPECT_TRUE(holds(rule, {{"path", path}})) << path;
  }
  EXPECT_FALSE(holds(rule, {{"path", "secrets-old/k"}}));
  EXPECT_FALSE(holds(rule, {{"path", "public/secrets"}}));
}

TEST(WhenRules, PathRulesHoldForAPathThatEscapesTheSandbox) {
  for (const char* condition : {"path_glob", "path_under"}) {
    for (const char* path : {"../secrets/k", "a/../../secrets/k", "/etc/passwd"}) {
      EXPECT_TRUE(holds(path_rule(condition, "public"), {{"path", path}}))
          << condition << " " << path;
    }
  }
}

class WhenRulesInASandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    context_.sandbox = root_ / "sandbox";
    fs::create_directories(context_.sandbox / "secrets");
    fs::create_directories(context_.sandbox / "public");
  }

  testing::TestFolder folder_{"when"};
  const fs::path root_ = folder_.path();
  PolicyContext context_;
};

TEST_F(WhenRulesInASandbox, AnAbsolutePathInsideTheSandboxMatchesItsRelativeGlob) {
  const std::string path = (context_.sandbox / "secrets" / "k").string();
  EXPECT_TRUE(holds(path_rule("path_glob", "secrets/**"), {{"path", path}}, context_));
  EXPECT_TRUE(holds(path_rule("path_under", "secrets"), {{"path", path}}, context_));
  EXPECT_FALSE(holds(path_rule("path_glob", "public/**"), {{"path", path}}, context_));
}

TEST_F(WhenRulesInASandbox, AnAbsolutePathOutsideTheSandboxHolds) {
  const std::string path = (root_ / "elsewhere" / "k").string();
  EXPECT_TRUE(holds(path_rule("path_glob", "public/**"), {{"path", path}}, context_));
}

TEST_F(WhenRulesInASandbox, ASymlinkIsJudgedByWhereItLeads) {
  fs::create_directory_symlink(context_.sandbox / "secrets", context_.sandbox / "public" / "link");
  EXPECT_TRUE(holds(path_rule("path_glob", "secrets/**"), {{"path", "public/link/k"}}, context_));
}

TEST_F(WhenRulesInASandbox, ASymlinkLeadingOutOfTheSandboxHolds) {
  fs::create_directory_symlink(root_, context_.sandbox / "public" / "out");
  EXPECT_TRUE(holds(path_rule("path_under", "secrets"), {{"path", "public/out/k"}}, context_));
}

TEST(WhenRules, AnUnknownConditionNamesTheFieldAndTheKnownOnes) {
  EXPECT_EQ(parse_error({{"arg", "to"}, {"startswith", "a"}}),
            "interrupt_on.tool.when: unknown key 'startswith' (expected equals, not_equals, "
            "starts_with, contains, matches, not_matches, path_glob or path_under)");
}

TEST(WhenRules, ARuleWithoutArgIsRefused) {
  EXPECT_EQ(parse_error({{"equals", "a"}}),
            "interrupt_on.tool.when: needs \"arg\": the name of the argument to test (or "
            "sql_writes, all, any)");
}

TEST(WhenRules, TwoConditionsInOneRuleAreRefused) {
  EXPECT_EQ(parse_error({{"arg", "to"}, {"equals", "a"}, {"contains", "b"}}),
            "interrupt_on.tool.when: has two conditions ('contains' and 'equals'); use 'all'");
}

TEST(WhenRules, ANonStringOperandIsRefused) {
  EXPECT_EQ(parse_error({{"arg", "n"}, {"equals", 3}}),
            "interrupt_on.tool.when: 'equals' must be a string");
}

TEST(WhenRules, AnInvalidRegularExpressionIsRefused) {
  const std::string error = parse_error({{"arg", "to"}, {"matches", "(("}});
  EXPECT_EQ(error.rfind("interrupt_on.tool.when: 'matches' is not a valid regular expression: ", 0),
            0u)
      << error;
}

TEST(WhenRules, AnEmptyAnyIsRefusedWithItsPath) {
  EXPECT_EQ(parse_error({{"any", Json::array()}}),
            "interrupt_on.tool.when.any: must be a non-empty array");
}

TEST(WhenRules, AnErrorInsideAllNamesItsIndex) {
  EXPECT_EQ(parse_error({{"all", {{{"arg", "a"}, {"equals", "x"}}, "nope"}}}),
            "interrupt_on.tool.when.all[1]: must be an object like {\"arg\": \"path\", "
            "\"starts_with\": \"/etc\"}");
}

TEST(WhenRules, SqlWritesMustBeABoolean) {
  EXPECT_EQ(parse_error({{"sql_writes", "yes"}}),
            "interrupt_on.tool.when: 'sql_writes' must be true or false");
}

TEST(WhenRules, AnAbsolutePathGlobIsRefused) {
  EXPECT_EQ(parse_error(path_rule("path_glob", "/etc/**")),
            "interrupt_on.tool.when: 'path_glob' must be relative to the sandbox");
}

TEST(WhenRules, APathUnderOutsideTheSandboxIsRefused) {
  EXPECT_EQ(parse_error(path_rule("path_under", "../x")),
            "interrupt_on.tool.when: 'path_under' must be a relative path inside the sandbox");
}

}  // namespace
}  // namespace tollgate

// The review core: one batched request per model turn, full validation of the response
// before anything takes effect, and Python-latest decision semantics.
#include "agent/hitl_review.h"

#include <gtest/gtest.h>

#include "tollgate/error.h"

namespace tollgate::hitl {
namespace {

// The reference setup (EXAMPLES.md): send_email reviewed with every decision, get_weather
// auto-approved, delete_file reviewed with approve/reject when the path is under /etc.
Json reference_interrupt_on() {
  return {{"send_email", true},
          {"get_weather", false},
          {"delete_file",
           {{"allowed_decisions", {"approve", "reject"}},
            {"description", {{"template", "Delete {path}?"}}},
            {"when", {{"arg", "path"}, {"starts_with", "/etc"}}}}}};
}

HumanInTheLoopOptions reference_options(KeyStyle style = KeyStyle::kPython) {
  HumanInTheLoopOptions options;
  options.interrupt_on = parse_interrupt_on(reference_interrupt_on());
  options.key_style = style;
  return options;
}

Json tool_call(const std::string& id, const std::string& name, Json args) {
  return Json{{"id", id}, {"name", name}, {"args", std::move(args)}, {"type", "tool_call"}};
}

Json ai_with(Json calls) {
  return Json{{"type", "ai"}, {"id", "ai-1"}, {"content", ""}, {"tool_calls", std::move(calls)}};
}

Json email(const std::string& id, const std::string& to) {
  return tool_call(id, "send_email", {{"to", to}, {"subject", "Hi"}});
}

ToolCatalog catalog() {
  ToolCatalog c;
  c.names = {"send_email", "get_weather", "delete_file"};
  c.validate_args = [](const std::string& tool, const Json& args) {
    std::vector<std::string> errors;
    if (tool == "send_email" && !(args.contains("to") && args["to"].is_string())) {
      errors.emplace_back("to: expected string");
    }
    return errors;
  };
  return c;
}

class HitlReview : public ::testing::Test {
 protected:
  HitlPolicy policy_{reference_options()};
  const State* state_ = nullptr;

  ReviewBatch batch_for(const Json& ai) { return build_review_batch(policy_, ai, state_, nullptr); }
  ReviewOutcome decide(const Json& ai, const Json& response) {
    return apply_decisions(policy_, batch_for(ai), ai, response, catalog(), state_, nullptr);
  }
  // The refusal text for `response`, checking that it is an Unprocessable error.
  std::string refusal(const Json& ai, const Json& response) {
    try {
      decide(ai, response);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnprocessable) << e.what();
      return e.what();
    }
    return "accepted";
  }
};

// ------------------------------------------------------------------------------ request

TEST_F(HitlReview, OneRequestCoversEveryGatedCallOfTheTurnInOrder) {
  const Json ai = ai_with({email("c1", "alice@example.com"),
                           tool_call("c2", "get_weather", {{"city", "Paris"}}),
                           email("c3", "carol@example.com")});
  const ReviewBatch batch = batch_for(ai);
  EXPECT_EQ(batch.indices, (std::vector<std::size_t>{0, 2}));
  ASSERT_EQ(batch.request["action_requests"].size(), 2u);
  EXPECT_EQ(batch.request["action_requests"][0]["args"]["to"], "alice@example.com");
  EXPECT_EQ(batch.request["action_requests"][1]["args"]["to"], "carol@example.com");
  EXPECT_EQ(batch.request["review_configs"][1],
            (Json{{"action_name", "send_email"},
                  {"allowed_decisions", {"approve", "edit", "reject", "respond"}}}));
}

TEST_F(HitlReview, RequestUsesPythonKeysByDefault) {
  const ReviewBatch batch = batch_for(ai_with({email("c1", "a@x")}));
  EXPECT_TRUE(batch.request.contains("action_requests"));
  EXPECT_TRUE(batch.request.contains("review_configs"));
}

TEST(HitlReviewStyle, RequestUsesJsKeysWhenConfigured) {
  HitlPolicy policy(reference_options(KeyStyle::kJs));
  const ReviewBatch batch =
      build_review_batch(policy, ai_with({email("c1", "a@x")}), nullptr, nullptr);
  EXPECT_EQ(batch.request["reviewConfigs"][0],
            (Json{{"actionName", "send_email"},
                  {"allowedDecisions", {"approve", "edit", "reject", "respond"}}}));
  EXPECT_TRUE(batch.request.contains("actionRequests"));
}

TEST_F(HitlReview, WhenPredicateLetsNonMatchingCallsThrough) {
  const Json ai = ai_with({tool_call("t", "delete_file", {{"path", "/tmp/cache.txt"}}),
                           tool_call("e", "delete_file", {{"path", "/etc/passwd"}})});
  const ReviewBatch batch = batch_for(ai);
  EXPECT_EQ(batch.indices, (std::vector<std::size_t>{1}));
  EXPECT_EQ(batch.request["action_requests"][0]["description"], "Delete /etc/passwd?");
  EXPECT_EQ(batch.request["review_configs"][0]["allowed_decisions"], (Json{"approve", "reject"}));
}

TEST_F(HitlReview, TurnWithoutGatedCallsNeedsNoReview) {
  EXPECT_TRUE(batch_for(ai_with({tool_call("c2", "get_weather", {{"city", "Paris"}})})).empty());
  EXPECT_TRUE(batch_for(ai_with(Json::array())).empty());
}

TEST_F(HitlReview, LastAiMessageIsFoundBehindLaterMessages) {
  const Json messages = {Json{{"type", "human"}, {"content", "hi"}}, ai_with(Json::array()),
                         Json{{"type", "tool"}, {"content", "x"}, {"tool_call_id", "c"}}};
  ASSERT_NE(last_ai_message(messages), nullptr);
  EXPECT_EQ(last_ai_message(messages)->value("id", ""), "ai-1");
  EXPECT_EQ(last_ai_message(Json::array({Json{{"type", "human"}}})), nullptr);
}

// ------------------------------------------------------------------------- refusals

TEST_F(HitlReview, DecisionsThatAreNotAnArrayAreRefused) {
  EXPECT_EQ(refusal(ai_with({email("c1", "a@x")}), {{"decisions", "approve"}}),
            "Invalid HITLResponse: decisions must be a non-empty array");
}

TEST_F(HitlReview, ResponseWithoutDecisionsIsRefused) {
  EXPECT_EQ(refusal(ai_with({email("c1", "a@x")}), Json("approve")),
            "Invalid HITLResponse: decisions must be a non-empty array");
}

TEST_F(HitlReview, ResponseWithAnUnknownKeyIsRefused) {
  EXPECT_EQ(
      refusal(ai_with({email("c1", "a@x")}), {{"decisions", {{{"type", "approve"}}}}, {"note", 1}}),
      "Invalid HITLResponse: unexpected key 'note' (only 'decisions' is allowed)");
}

TEST_F(HitlReview, WrongNumberOfDecisionsIsRefused) {
  EXPECT_EQ(refusal(ai_with({email("c1", "a@x")}),
                    {{"decisions", {{{"type", "approve"}}, {{"type", "approve"}}}}}),
            "Number of human decisions (2) does not match number of hanging tool calls (1).");
}

TEST_F(HitlReview, EmptyDecisionsAreACountMismatch) {
  EXPECT_EQ(refusal(ai_with({email("c1", "a@x")}), {{"decisions", Json::array()}}),
            "Number of human decisions (0) does not match number of hanging tool calls (1).");
}

TEST_F(HitlReview, DecisionTypeNotAllowedForTheToolIsRefused) {
  const Json ai = ai_with({tool_call("e", "delete_file", {{"path", "/etc/x"}})});
  EXPECT_EQ(
      refusal(ai,
              {{"decisions",
                {{{"type", "edit"},
                  {"editedAction", {{"name", "delete_file"}, {"args", {{"path", "/etc/y"}}}}}}}}}),
      "Unexpected human decision: {\"editedAction\":{\"args\":{\"path\":\"/etc/y\"},\"name\":"
      "\"delete_file\"},\"type\":\"edit\"}. Decision type 'edit' is not allowed for tool "
      "'delete_file'. Expected one of [\"approve\",\"reject\"] based on the tool's configuration.");
}

TEST_F(HitlReview, UnknownDecisionTypeIsRefused) {
  EXPECT_EQ(
      refusal(ai_with({email("c1", "a@x")}), {{"decisions", {{{"type", "ignore"}}}}}),
      "Unexpected human decision: {\"type\":\"ignore\"}. Decision type 'ignore' is not allowed "
      "for tool 'send_email'. Expected one of [\"approve\",\"edit\",\"reject\",\"respond\"] based "
      "on the tool's configuration.");
}

TEST_F(HitlReview, DecisionWithoutTypeIsRefused) {
  const std::string text =
      refusal(ai_with({email("c1", "a@x")}), {{"decisions", {{{"message", "x"}}}}});
  EXPECT_NE(text.find("Decision type 'None' is not allowed for tool 'send_email'"),
            std::string::npos)
      << text;
}

TEST_F(HitlReview, EditWithoutNameIsRefused) {
  EXPECT_EQ(
      refusal(ai_with({email("c1", "a@x")}),
              {{"decisions", {{{"type", "edit"}, {"edited_action", {{"args", Json::object()}}}}}}}),
      "Invalid edited action for tool \"send_email\": name must be a string");
}

TEST_F(HitlReview, EditWithoutArgsIsRefused) {
  EXPECT_EQ(
      refusal(ai_with({email("c1", "a@x")}),
              {{"decisions", {{{"type", "edit"}, {"editedAction", {{"name", "send_email"}}}}}}}),
      "Invalid edited action for tool \"send_email\": args must be an object");
}

TEST_F(HitlReview, EditWithoutEditedActionIsRefused) {
  EXPECT_EQ(refusal(ai_with({email("c1", "a@x")}), {{"decisions", {{{"type", "edit"}}}}}),
            "Invalid edited action for tool \"send_email\": edited_action must be an object");
}

TEST_F(HitlReview, EditWithArgsViolatingTheSchemaIsRefusedNamingTheField) {
  EXPECT_EQ(refusal(ai_with({email("c1", "a@x")}),
                    {{"decisions",
                      {{{"type", "edit"},
                        {"edited_action", {{"name", "send_email"}, {"args", {{"to", 5}}}}}}}}}),
            "Invalid edited action for tool \"send_email\": args do not match the schema of tool "
            "'send_email': to: expected string");
}

TEST_F(HitlReview, EditToAnUnknownToolIsRefused) {
  EXPECT_EQ(refusal(ai_with({email("c1", "a@x")}),
                    {{"decisions",
                      {{{"type", "edit"},
                        {"edited_action", {{"name", "nope"}, {"args", Json::object()}}}}}}}),
            "Reviewer edited tool call 'c1' to 'nope', which is not an available tool. Available "
            "tools: delete_file, get_weather, send_email.");
}

TEST_F(HitlReview, EditToAnotherReviewedToolIsRefused) {
  const Json ai = ai_with({tool_call("g", "get_weather", {{"city", "Paris"}}),
                           tool_call("e", "delete_file", {{"path", "/etc/x"}})});
  HumanInTheLoopOptions options = reference_options();
  options.interrupt_on["get_weather"] = ToolReviewPolicy::review_all();
  HitlPolicy policy(std::move(options));
  const ReviewBatch batch = build_review_batch(policy, ai, state_, nullptr);
  // Approve get_weather, but try to turn it into an /etc deletion, which needs its own review.
  const Json response = {
      {"decisions",
       {{{"type", "edit"},
         {"edited_action", {{"name", "delete_file"}, {"args", {{"path", "/etc/shadow"}}}}}},
        {{"type", "reject"}}}}};
  try {
    apply_decisions(policy, batch, ai, response, catalog(), state_, nullptr);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnprocessable);
    EXPECT_STREQ(e.what(),
                 "Reviewer edited tool call 'g' to 'delete_file', which requires its own review. "
                 "Reject this call instead and let the model propose a 'delete_file' call.");
  }
}

TEST_F(HitlReview, EditToAnAutoApprovedToolIsAccepted) {
  const ReviewOutcome outcome =
      decide(ai_with({email("c1", "a@x")}),
             {{"decisions",
               {{{"type", "edit"},
                 {"editedAction", {{"name", "get_weather"}, {"args", {{"city", "Rome"}}}}}}}}});
  EXPECT_EQ(outcome.edited,
            (Json{{"c1", {{"name", "get_weather"}, {"args", {{"city", "Rome"}}}}}}));
}

TEST_F(HitlReview, EditToAToolWhoseWhenRuleDoesNotMatchIsAccepted) {
  const ReviewOutcome outcome =
      decide(ai_with({email("c1", "a@x")}),
             {{"decisions",
               {{{"type", "edit"},
                 {"edited_action", {{"name", "delete_file"}, {"args", {{"path", "/tmp/x"}}}}}}}}});
  EXPECT_EQ(outcome.edited["c1"]["name"], "delete_file");
}

TEST_F(HitlReview, RejectMessageThatIsNotAStringIsRefused) {
  EXPECT_EQ(refusal(ai_with({email("c1", "a@x")}),
                    {{"decisions", {{{"type", "reject"}, {"message", 5}}}}}),
            "Tool call response for \"send_email\" must be a string, got number");
}

TEST_F(HitlReview, RespondWithoutAMessageIsRefused) {
  EXPECT_EQ(refusal(ai_with({email("c1", "a@x")}), {{"decisions", {{{"type", "respond"}}}}}),
            "Tool call response for \"send_email\" must be a string, got undefined");
}

TEST_F(HitlReview, DecisionWithAnUnknownKeyIsRefused) {
  EXPECT_EQ(
      refusal(ai_with({email("c1", "a@x")}),
              {{"decisions", {{{"type", "approve"}, {"message", "ok"}}}}}),
      "Unexpected key 'message' in human decision for tool 'send_email': a 'approve' decision "
      "has only 'type'.");
}

TEST_F(HitlReview, OneInvalidDecisionRefusesTheWholeResponse) {
  const Json ai = ai_with({email("c1", "a@x"), email("c2", "b@x")});
  EXPECT_EQ(
      refusal(ai, {{"decisions", {{{"type", "reject"}}, {{"type", "respond"}, {"message", 1}}}}}),
      "Tool call response for \"send_email\" must be a string, got number");
}

// ---------------------------------------------------------------------------- effects

TEST_F(HitlReview, ApproveLeavesTheCallToRun) {
  const ReviewOutcome outcome =
      decide(ai_with({email("c1", "a@x")}), {{"decisions", {{{"type", "approve"}}}}});
  EXPECT_TRUE(outcome.tool_messages.empty());
  EXPECT_TRUE(outcome.edited.empty());
}

TEST_F(HitlReview, RejectWithoutMessageTellsTheModelNotToRetry) {
  const ReviewOutcome outcome =
      decide(ai_with({email("c1", "a@x")}), {{"decisions", {{{"type", "reject"}}}}});
  EXPECT_EQ(
      outcome.tool_messages,
      (Json{{{"type", "tool"},
             {"content",
              "User rejected the tool call for `send_email` with id c1. The tool was not "
              "executed. Do not retry this tool call unless the user explicitly requests it."},
             {"name", "send_email"},
             {"tool_call_id", "c1"},
             {"status", "error"}}}));
}

TEST_F(HitlReview, RejectWithMessageFramesTheReason) {
  const ReviewOutcome outcome =
      decide(ai_with({email("c1", "a@x")}),
             {{"decisions", {{{"type", "reject"}, {"message", "not now"}}}}});
  EXPECT_EQ(outcome.tool_messages[0]["content"],
            "User rejected the tool call for `send_email` with reason: not now");
  EXPECT_EQ(outcome.tool_messages[0]["status"], "error");
}

TEST_F(HitlReview, RejectWithEmptyMessageUsesTheDefaultText) {
  const ReviewOutcome outcome = decide(ai_with({email("c1", "a@x")}),
                                       {{"decisions", {{{"type", "reject"}, {"message", ""}}}}});
  EXPECT_EQ(outcome.tool_messages[0]["content"].get<std::string>().rfind(
                "User rejected the tool call for `send_email` with id c1.", 0),
            0u);
}

TEST_F(HitlReview, RespondBecomesASuccessfulToolResult) {
  const ReviewOutcome outcome = decide(
      ai_with({email("c1", "a@x")}), {{"decisions", {{{"type", "respond"}, {"message", "blue"}}}}});
  EXPECT_EQ(outcome.tool_messages[0]["content"], "blue");
  EXPECT_EQ(outcome.tool_messages[0]["status"], "success");
  EXPECT_EQ(outcome.tool_messages[0]["tool_call_id"], "c1");
}

TEST_F(HitlReview, EditIsRecordedNotWrittenIntoTheAiMessage) {
  const ReviewOutcome outcome =
      decide(ai_with({email("c1", "a@x")}),
             {{"decisions",
               {{{"type", "edit"},
                 {"edited_action", {{"name", "send_email"}, {"args", {{"to", "bob@x"}}}}}}}}});
  EXPECT_EQ(outcome.edited, (Json{{"c1", {{"name", "send_email"}, {"args", {{"to", "bob@x"}}}}}}));
  EXPECT_TRUE(outcome.tool_messages.empty());
}

TEST_F(HitlReview, MixedDecisionsProduceToolMessagesInToolCallOrder) {
  const Json ai = ai_with({email("c1", "a@x"), tool_call("w", "get_weather", {{"city", "Paris"}}),
                           email("c2", "b@x"), email("c3", "c@x")});
  const ReviewOutcome outcome = decide(
      ai,
      {{"decisions",
        {{{"type", "respond"}, {"message", "one"}}, {{"type", "approve"}}, {{"type", "reject"}}}}});
  ASSERT_EQ(outcome.tool_messages.size(), 2u);
  EXPECT_EQ(outcome.tool_messages[0]["tool_call_id"], "c1");
  EXPECT_EQ(outcome.tool_messages[1]["tool_call_id"], "c3");
}

// ------------------------------------------------------------------------ edit execution

TEST(HitlEditExecution, ExecutedCallTakesTheReviewersNameAndArgs) {
  const Json call = tool_call("c1", "send_email", {{"to", "a@x"}});
  const Json executed =
      executed_call(call, {{"c1", {{"name", "get_weather"}, {"args", {{"city", "Rome"}}}}}});
  EXPECT_EQ(executed["name"], "get_weather");
  EXPECT_EQ(executed["args"], (Json{{"city", "Rome"}}));
  EXPECT_EQ(executed["id"], "c1");
  EXPECT_EQ(executed_call(call, Json::object()), call);
}

TEST(HitlEditExecution, RecordedEditIsFoundByCallIdOnly) {
  const Json call = tool_call("c1", "send_email", {{"to", "a@x"}});
  const Json edited{{"c2", {{"name", "get_weather"}, {"args", Json::object()}}}};
  EXPECT_EQ(recorded_edit(call, edited), nullptr);
  EXPECT_EQ(recorded_edit(call, Json()), nullptr);
  const Json* edit = recorded_edit(tool_call("c2", "send_email", Json::object()), edited);
  ASSERT_NE(edit, nullptr);
  EXPECT_EQ((*edit)["name"], "get_weather");
}

const std::string kNotice =
    "Note: a human reviewer replaced this tool call before it ran. The call recorded in your "
    "message is the one you produced, not the one that executed. This was intentional and "
    "authorized. Do not re-issue your original call.";

TEST(HitlEditExecution, NoticeIsPrependedToTheToolResult) {
  const Json result =
      annotate_edited_result(Json{{"type", "tool"}, {"content", "sent to bob"}},
                             Json{{"name", "send_email"}, {"args", {{"to", "bob"}}}}, kNotice);
  EXPECT_EQ(result["content"], kNotice +
                                   " Executed instead: send_email with arguments {\"to\": "
                                   "\"bob\"}.\n\nTool response:\nsent to bob");
}

TEST(HitlEditExecution, NoticeOnEmptyResultHasNoResponseHeader) {
  const Json result =
      annotate_edited_result(Json{{"type", "tool"}, {"content", ""}},
                             Json{{"name", "t"}, {"args", Json::object()}}, kNotice);
  EXPECT_EQ(result["content"], kNotice + " Executed instead: t with arguments {}.");
}

TEST(HitlEditExecution, NoticeIsAddedOnlyOnce) {
  const Json executed = {{"name", "t"}, {"args", {{"a", 1}}}};
  const Json once = annotate_edited_result(Json{{"content", "ok"}}, executed, kNotice);
  EXPECT_EQ(annotate_edited_result(once, executed, kNotice), once);
}

TEST(HitlEditExecution, NoticeOnBlockContentIsATextBlock) {
  const Json result =
      annotate_edited_result(Json{{"content", {{{"type", "text"}, {"text", "ok"}}}}},
                             Json{{"name", "t"}, {"args", Json::object()}}, kNotice);
  ASSERT_EQ(result["content"].size(), 2u);
  EXPECT_EQ(result["content"][0]["type"], "text");
  EXPECT_EQ(result["content"][1]["text"], "ok");
}

TEST(HitlEditExecution, EmptyNoticeDisablesTheAnnotation) {
  const Json message = {{"content", "ok"}};
  EXPECT_EQ(annotate_edited_result(message, Json{{"name", "t"}, {"args", Json::object()}}, ""),
            message);
}

TEST(HitlSameReview, TheSameActionsAndConfigsMatch) {
  const HitlPolicy policy(reference_options());
  const Json ai = ai_with({email("c1", "a@x"), email("c2", "b@x")});
  const Json shown = build_review_batch(policy, ai, nullptr, nullptr).request;
  EXPECT_NO_THROW(check_same_review(shown, build_review_batch(policy, ai, nullptr, nullptr).request));
}

TEST(HitlSameReview, ChangedArgumentsAreRefusedNamingTheAction) {
  const HitlPolicy policy(reference_options());
  const Json shown = build_review_batch(policy, ai_with({email("c1", "a@x")}), nullptr, nullptr).request;
  const Json rebuilt =
      build_review_batch(policy, ai_with({email("c1", "eve@x")}), nullptr, nullptr).request;
  try {
    check_same_review(shown, rebuilt);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kConflict);
    EXPECT_NE(std::string(e.what()).find(
                  "action 0 was shown as send_email {\"subject\":\"Hi\",\"to\":\"a@x\"}, it "
                  "would run as send_email {\"subject\":\"Hi\",\"to\":\"eve@x\"}"),
              std::string::npos)
        << e.what();
  }
}

TEST(HitlSameReview, ChangedReviewConfigsAreRefused) {
  const Json ai = ai_with({email("c1", "a@x")});
  const Json shown =
      build_review_batch(HitlPolicy(reference_options()), ai, nullptr, nullptr).request;
  HumanInTheLoopOptions narrower;
  narrower.interrupt_on = parse_interrupt_on({{"send_email", {{"allowed_decisions", {"reject"}}}}});
  const Json rebuilt = build_review_batch(HitlPolicy(narrower), ai, nullptr, nullptr).request;
  EXPECT_THROW(check_same_review(shown, rebuilt), Error);
}

Json review_config_for(const Json& interrupt_on, KeyStyle style = KeyStyle::kPython) {
  HumanInTheLoopOptions options;
  options.interrupt_on = parse_interrupt_on(interrupt_on);
  options.key_style = style;
  const Json request =
      build_review_batch(HitlPolicy(options), ai_with({email("c1", "a@x")}), nullptr, nullptr)
          .request;
  return request[style == KeyStyle::kPython ? "review_configs" : "reviewConfigs"][0];
}

TEST(HitlReviewerRules, DefaultRulesAddNothingToTheReviewConfig) {
  EXPECT_EQ(review_config_for({{"send_email", {{"allowed_decisions", {"approve", "reject"}}}}}),
            (Json{{"action_name", "send_email"}, {"allowed_decisions", {"approve", "reject"}}}));
}

TEST(HitlReviewerRules, RulesThatDifferFromTheDefaultsAreWrittenIntoTheReviewConfig) {
  const Json config = review_config_for({{"send_email",
                                          {{"allowed_decisions", {"approve", "reject"}},
                                           {"reviewers", {"user:alice", "role:reviewer"}},
                                           {"self_approval", false},
                                           {"approvals_required", 2}}}});
  EXPECT_EQ(config["reviewers"], (Json{"user:alice", "role:reviewer"}));
  EXPECT_EQ(config["self_approval"], false);
  EXPECT_EQ(config["approvals_required"], 2);
}

TEST(HitlReviewerRules, JsKeyStyleSpellsTheRulesInCamelCase) {
  const Json config = review_config_for(
      {{"send_email", {{"allowed_decisions", {"approve"}}, {"selfApproval", false}, {"approvalsRequired", 3}}}},
      KeyStyle::kJs);
  EXPECT_EQ(config["selfApproval"], false);
  EXPECT_EQ(config["approvalsRequired"], 3);
}

TEST(HitlReviewerRules, SeveralApprovalsWithEditFailClosedWhenThePolicyIsBuilt) {
  HumanInTheLoopOptions options;
  options.interrupt_on = parse_interrupt_on(
      {{"send_email", {{"allowed_decisions", {"approve", "edit"}}, {"approvals_required", 2}}}});
  try {
    HitlPolicy policy(options);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "interrupt_on.send_email: approvals_required 2 with 'edit' allowed: an edited call "
              "would run on one reviewer's word (remove 'edit' from allowed_decisions)");
  }
}

TEST(HitlReviewerRules, AMalformedReviewerIsRefusedNamingIt) {
  HumanInTheLoopOptions options;
  options.interrupt_on = parse_interrupt_on(
      {{"send_email", {{"allowed_decisions", {"approve"}}, {"reviewers", {"owner", "alice"}}}}});
  try {
    HitlPolicy policy(options);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("interrupt_on.send_email.reviewers[1]: 'alice'"),
              std::string::npos)
        << e.what();
  }
}

TEST(HitlReviewerRules, TheConfigFileParserAcceptsTheRulesAndChecksThem) {
  const Json declared{{"send_email",
                       {{"allowed_decisions", {"approve", "edit"}}, {"approvals_required", 2}}}};
  try {
    parse_declared_interrupt_on(declared, "agents.mail.interrupt_on");
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("agents.mail.interrupt_on.send_email: approvals_required 2", 0), 0u)
        << e.what();
  }
}

}  // namespace
}  // namespace tollgate::hitl

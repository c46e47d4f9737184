// Review deadlines in the policy: `timeout` and `on_timeout` from config files and C++, what
// is refused when the policy is built, and what a paused review shows.
#include <gtest/gtest.h>

#include <chrono>

#include "agent/hitl_review.h"
#include "tollgate/error.h"
#include "tollgate/human_in_the_loop.h"
#include "tollgate/iso_time.h"
#include "tollgate/review_timeout.h"

namespace tollgate::hitl {
namespace {

using std::chrono::milliseconds;

InterruptOn declared(const Json& send_email) {
  return parse_declared_interrupt_on(Json{{"send_email", send_email}}, "agents.mail.interrupt_on");
}

// The refusal of a declared send_email policy, or "no error".
std::string declared_error(const Json& send_email) {
  try {
    declared(send_email);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

// The refusal of a C++ policy built from `config`, or "no error".
std::string built_error(InterruptOnConfig config) {
  HumanInTheLoopOptions options;
  options.interrupt_on["send_email"] = ToolReviewPolicy::with(std::move(config));
  try {
    HitlPolicy policy(std::move(options));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

InterruptOnConfig timed(std::optional<milliseconds> timeout, DecisionType on_timeout) {
  InterruptOnConfig config;
  config.allowed_decisions = {"approve", "edit", "reject", "respond"};
  config.timeout = timeout;
  config.on_timeout.type = on_timeout;
  return config;
}

Json email_turn() {
  return Json{{"type", "ai"},
              {"id", "ai-1"},
              {"content", ""},
              {"tool_calls",
               {{{"id", "call_1"}, {"name", "send_email"}, {"args", {{"to", "bob"}}}},
                {{"id", "call_2"}, {"name", "delete_file"}, {"args", {{"path", "a"}}}}}}};
}

TEST(HitlDeadline, EachUnitOfATimeoutIsRead) {
  const std::pair<const char*, milliseconds> cases[] = {{"90s", milliseconds(90'000)},
                                                        {"15m", milliseconds(900'000)},
                                                        {"2h", milliseconds(7'200'000)},
                                                        {"1d", milliseconds(86'400'000)}};
  for (const auto& [text, expected] : cases) {
    const InterruptOn policy = declared(Json{{"timeout", text}});
    ASSERT_TRUE(policy.at("send_email").config.timeout) << text;
    EXPECT_EQ(*policy.at("send_email").config.timeout, expected) << text;
  }
}

TEST(HitlDeadline, OnTimeoutDefaultsToRejectWithTheDefaultMessage) {
  const InterruptOnConfig config = declared(Json{{"timeout", "15m"}}).at("send_email").config;
  EXPECT_EQ(config.on_timeout.type, DecisionType::kReject);
  EXPECT_EQ(config.on_timeout.message, "");
}

TEST(HitlDeadline, OnTimeoutRespondKeepsItsMessage) {
  const InterruptOnConfig config =
      declared(
          Json{{"timeout", "2h"}, {"on_timeout", {{"type", "respond"}, {"message", "Later."}}}})
          .at("send_email")
          .config;
  EXPECT_EQ(config.on_timeout.type, DecisionType::kRespond);
  EXPECT_EQ(config.on_timeout.message, "Later.");
}

TEST(HitlDeadline, ABadTimeoutIsRefusedNamingTheToolAndField) {
  for (const Json& bad : {Json("15 minutes"), Json("0s"), Json("15"), Json("m"), Json(900)}) {
    EXPECT_EQ(declared_error(Json{{"timeout", bad}})
                  .rfind("agents.mail.interrupt_on.send_email.timeout: ", 0),
              0u)
        << bad.dump() << ": " << declared_error(Json{{"timeout", bad}});
  }
}

TEST(HitlDeadline, ApproveOnTimeoutIsRefusedInAConfigFile) {
  const std::string error =
      declared_error(Json{{"timeout", "15m"}, {"on_timeout", {{"type", "approve"}}}});
  EXPECT_EQ(error.rfind("agents.mail.interrupt_on.send_email.on_timeout.type: 'approve'", 0), 0u)
      << error;
  EXPECT_NE(error.find("an unattended gate must not open"), std::string::npos) << error;
}

TEST(HitlDeadline, ApproveOrEditOnTimeoutIsRefusedWhenACppPolicyIsBuilt) {
  EXPECT_NE(built_error(timed(milliseconds(1000), DecisionType::kApprove))
                .find("interrupt_on.send_email.on_timeout.type: 'approve' on timeout is refused"),
            std::string::npos);
  EXPECT_NE(built_error(timed(milliseconds(1000), DecisionType::kEdit))
                .find("interrupt_on.send_email.on_timeout.type: 'edit' on timeout is refused"),
            std::string::npos);
}

TEST(HitlDeadline, ANonPositiveCppTimeoutIsRefused) {
  EXPECT_EQ(built_error(timed(milliseconds(0), DecisionType::kReject)),
            "interrupt_on.send_email.timeout: must be positive");
}

TEST(HitlDeadline, AnOnTimeoutTheToolDoesNotAllowIsRefused) {
  const std::string error = declared_error(Json{{"allowed_decisions", {"approve", "reject"}},
                                                {"timeout", "15m"},
                                                {"on_timeout", {{"type", "respond"}}}});
  EXPECT_NE(error.find("on_timeout.type: 'respond' is not in the tool's allowed_decisions"),
            std::string::npos)
      << error;
}

TEST(HitlDeadline, OnTimeoutWithoutATimeoutIsRefused) {
  const std::string error = declared_error(Json{{"on_timeout", {{"type", "reject"}}}});
  EXPECT_EQ(error.rfind("agents.mail.interrupt_on.send_email.on_timeout: set without a timeout", 0),
            0u)
      << error;
}

TEST(HitlDeadline, AnUnknownOnTimeoutKeyIsRefused) {
  const std::string error =
      declared_error(Json{{"timeout", "15m"}, {"on_timeout", {{"kind", "reject"}}}});
  EXPECT_NE(error.find("on_timeout: unknown key 'kind'"), std::string::npos) << error;
}

TEST(HitlDeadline, APausedReviewShowsItsDeadlineFromTheClockAndItsOnTimeout) {
  ManualClock clock(std::chrono::system_clock::time_point(milliseconds(1'800'000'000'000)));
  HumanInTheLoopOptions options;
  options.interrupt_on = declared(Json{{"timeout", "90s"}});
  options.interrupt_on["delete_file"] = ToolReviewPolicy::review_all();
  options.clock = &clock;
  HitlPolicy policy(std::move(options));
  const Json request = build_review_batch(policy, email_turn(), nullptr, nullptr).request;
  const Json& config = request["review_configs"][0];
  EXPECT_EQ(config["expires_at"], iso_utc_millis(1'800'000'090'000));
  EXPECT_EQ(config["on_timeout"],
            (Json{{"type", "reject"}, {"message", std::string(kReviewTimeoutMessage)}}));
  // An untimed action shows no deadline.
  EXPECT_FALSE(request["review_configs"][1].contains("expires_at"));
}

TEST(HitlDeadline, AReviewRebuiltLaterStillMatchesTheOneShownAtThePause) {
  ManualClock clock(std::chrono::system_clock::time_point(milliseconds(1'800'000'000'000)));
  HumanInTheLoopOptions options;
  options.interrupt_on = declared(Json{{"timeout", "90s"}});
  options.interrupt_on["delete_file"] = ToolReviewPolicy::review_all();
  options.clock = &clock;
  HitlPolicy policy(std::move(options));
  const Json shown = build_review_batch(policy, email_turn(), nullptr, nullptr).request;
  clock.advance(std::chrono::minutes(5));
  const Json rebuilt = build_review_batch(policy, email_turn(), nullptr, nullptr).request;
  ASSERT_NE(shown["review_configs"][0]["expires_at"], rebuilt["review_configs"][0]["expires_at"]);
  EXPECT_NO_THROW(check_same_review(shown, rebuilt));
}

TEST(IsoTime, ATimeReadsBackAsWritten) {
  EXPECT_EQ(iso_utc_millis(1'764'470'619'194), "2025-11-30T02:43:39.194Z");
  EXPECT_EQ(parse_iso_utc_millis("2025-11-30T02:43:39.194Z"), 1'764'470'619'194);
  EXPECT_EQ(parse_iso_utc_millis("2025-11-30T02:43:39Z"), 1'764'470'619'000);
}

TEST(IsoTime, TextThatIsNoUtcTimeIsNotRead) {
  for (const char* bad :
       {"", "2025-11-30", "2025-11-30T02:43:39", "2025-11-30T02:43:39+01:00",
        "2025-13-30T02:43:39Z", "2025-02-30T02:43:39Z", "2025-11-30T02:43:39.Z"}) {
    EXPECT_EQ(parse_iso_utc_millis(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace tollgate::hitl

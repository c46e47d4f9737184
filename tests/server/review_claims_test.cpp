// Review claims: a reviewer claims a pending review, another sees who holds it, the reviewer
// rules decide who may claim, only the holder or an admin releases, a decision by another
// reviewer still applies (claims are advisory) — over real HTTP on 127.0.0.1 with API-key
// identities; and the claim events of the review stream.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/sha256.h"
#include "server/http_test_client.h"
#include "server/notifications.h"
#include "server/review_claims.h"
#include "server/review_records.h"
#include "server/sql_review_store.h"
#include "tollgate/error.h"
#include "tollgate/iso_time.h"
#include "tollgate/memory_saver.h"
#include "tollgate/server.h"

namespace tollgate::server {
namespace {

using testing::http_call;

// A HITL request of one write_file call; `reviewers` empty: the default rules.
Json review_request(const std::vector<std::string>& reviewers) {
  Json config{{"action_name", "write_file"}, {"allowed_decisions", {"approve", "reject"}}};
  if (!reviewers.empty()) config["reviewers"] = reviewers;
  return Json{{"action_requests", {{{"name", "write_file"}, {"args", {{"path", "a.txt"}}}}}},
              {"review_configs", {config}}};
}

// "gate": reviewed by the default rules; "rita_only": by user rita alone.
GraphRegistry review_graphs() {
  GraphRegistry registry;
  for (const char* name : {"gate", "rita_only"}) {
    const bool rita_only = std::string(name) == "rita_only";
    registry.add(name, [rita_only](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
      StateGraph g;
      g.add_node("review", [rita_only](const State&, Runtime& rt) -> NodeResult {
        Json answer = rt.interrupt(review_request(rita_only ? std::vector<std::string>{"user:rita"}
                                                            : std::vector<std::string>{}));
        return Json{{"decision", answer}, {"decided_by", rt.decided_by().id}};
      });
      g.add_edge(START, "review").add_edge("review", END);
      CompileOptions options;
      options.checkpointer = std::move(saver);
      return g.compile(options);
    });
  }
  return registry;
}

AuthUser user(std::string id, std::vector<std::string> roles) {
  return AuthUser{id, "", std::move(roles), core::sha256_hex("key-" + id)};
}

class ReviewClaimsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = std::filesystem::temp_directory_path() /
          ("tollgate_claims_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    remove_db();
  }
  void TearDown() override {
    server_.reset();
    remove_db();
  }
  void remove_db() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_.string() + suffix);
  }
  void start(std::chrono::milliseconds claim_ttl = std::chrono::minutes(5)) {
    ServerOptions options;
    options.port = 0;
    options.db_path = db_.string();
    options.checkpointer = make_memory_saver();
    options.heartbeat_seconds = 0;
    options.claim_ttl = claim_ttl;
    options.auth.users = {user("alice", {"user"}), user("rita", {"reviewer"}),
                          user("rob", {"reviewer"}), user("ada", {"admin"})};
    server_ = std::make_unique<Server>(std::move(options), review_graphs());
    server_->start();
  }
  testing::ClientResponse call(const std::string& who, const std::string& method,
                               const std::string& target, const Json& body = Json()) {
    return http_call(server_->port(), method, target, body.is_null() ? "" : body.dump(),
                     {{"x-api-key", "key-" + who}});
  }
  // A thread of alice paused on the review of `graph`.
  std::string paused_thread(const std::string& graph = "gate") {
    auto created = call("alice", "POST", "/threads", Json::object());
    EXPECT_EQ(created.status, 200) << created.body;
    const std::string thread = created.json()["thread_id"].get<std::string>();
    auto run = call("alice", "POST", "/threads/" + thread + "/runs/wait",
                    {{"assistant_id", graph}, {"input", Json::object()}});
    EXPECT_EQ(run.status, 200) << run.body;
    return thread;
  }
  // The first review config of the thread's pending interrupt, as `who` reads the thread.
  Json review_config(const std::string& who, const std::string& thread) {
    Json t = call(who, "GET", "/threads/" + thread).json();
    for (const auto& [task, interrupts] : t["interrupts"].items())
      return interrupts[0]["value"]["review_configs"][0];
    return Json();
  }

  std::filesystem::path db_;
  std::unique_ptr<Server> server_;
};

TEST_F(ReviewClaimsTest, AReviewerClaimsAPendingReviewWithAnExpiry) {
  start(std::chrono::seconds(90));
  const std::string thread = paused_thread();
  auto claimed = call("rita", "POST", "/threads/" + thread + "/claim", Json::object());
  ASSERT_EQ(claimed.status, 200) << claimed.body;
  const Json body = claimed.json();
  EXPECT_EQ(body["claimed_by"], "rita");
  const auto at = parse_iso_utc_millis(body["claimed_at"].get<std::string>());
  const auto until = parse_iso_utc_millis(body["expires_at"].get<std::string>());
  ASSERT_TRUE(at && until);
  EXPECT_EQ(*until - *at, 90000);
}

TEST_F(ReviewClaimsTest, TheClaimIsShownInTheReviewConfigEveryReaderGets) {
  start();
  const std::string thread = paused_thread();
  ASSERT_EQ(call("rita", "POST", "/threads/" + thread + "/claim").status, 200);
  const Json config = review_config("rob", thread);
  EXPECT_EQ(config["claimed_by"], "rita");
  EXPECT_TRUE(config["claim_expires_at"].is_string());
  const Json found = call("rob", "POST", "/threads/search", {{"status", "interrupted"}}).json();
  ASSERT_EQ(found.size(), 1u);
  bool shown = false;
  for (const auto& [task, interrupts] : found[0]["interrupts"].items())
    shown = interrupts[0]["value"]["review_configs"][0].value("claimed_by", "") == "rita";
  EXPECT_TRUE(shown);
}

TEST_F(ReviewClaimsTest, AClaimByAnotherIdentityIs409NamingTheHolder) {
  start();
  const std::string thread = paused_thread();
  ASSERT_EQ(call("rita", "POST", "/threads/" + thread + "/claim").status, 200);
  auto refused = call("rob", "POST", "/threads/" + thread + "/claim");
  EXPECT_EQ(refused.status, 409);
  EXPECT_NE(refused.json()["detail"].get<std::string>().find("'rita' has claimed"), std::string::npos)
      << refused.body;
}

TEST_F(ReviewClaimsTest, TheClaimerIsTheCredentialsIdentityNeverTheBody) {
  start();
  const std::string thread = paused_thread();
  auto claimed = call("rita", "POST", "/threads/" + thread + "/claim", {{"claimed_by", "ada"}});
  ASSERT_EQ(claimed.status, 200) << claimed.body;
  EXPECT_EQ(claimed.json()["claimed_by"], "rita");
}

TEST_F(ReviewClaimsTest, AnIdentityTheReviewerRulesDoNotAllowIs403NamingTheRule) {
  start();
  const std::string thread = paused_thread("rita_only");
  auto refused = call("rob", "POST", "/threads/" + thread + "/claim");
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.json()["detail"].get<std::string>().find("rule reviewers [\"user:rita\"]"),
            std::string::npos)
      << refused.body;
  EXPECT_EQ(call("rita", "POST", "/threads/" + thread + "/claim").status, 200);
}

TEST_F(ReviewClaimsTest, AnUnknownInterruptIdIs409NamingIt) {
  start();
  const std::string thread = paused_thread();
  auto refused = call("rita", "POST", "/threads/" + thread + "/claim", {{"interrupt_id", "nope"}});
  EXPECT_EQ(refused.status, 409);
  EXPECT_NE(refused.body.find("interrupt_id: nope is not pending"), std::string::npos) << refused.body;
}

TEST_F(ReviewClaimsTest, OnlyTheHolderOrAnAdminReleasesAClaim) {
  start();
  const std::string thread = paused_thread();
  ASSERT_EQ(call("rita", "POST", "/threads/" + thread + "/claim").status, 200);
  auto refused = call("rob", "DELETE", "/threads/" + thread + "/claim");
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body.find("only its holder or an admin may"), std::string::npos) << refused.body;
  auto released = call("ada", "DELETE", "/threads/" + thread + "/claim");
  ASSERT_EQ(released.status, 200) << released.body;
  EXPECT_EQ(released.json()["released"][0]["claimed_by"], "rita");
  EXPECT_FALSE(review_config("rob", thread).contains("claimed_by"));
}

TEST_F(ReviewClaimsTest, TheHolderReleasesItsClaimAndAnotherReviewerMayClaim) {
  start();
  const std::string thread = paused_thread();
  ASSERT_EQ(call("rita", "POST", "/threads/" + thread + "/claim").status, 200);
  ASSERT_EQ(call("rita", "DELETE", "/threads/" + thread + "/claim").status, 200);
  auto claimed = call("rob", "POST", "/threads/" + thread + "/claim");
  ASSERT_EQ(claimed.status, 200) << claimed.body;
  EXPECT_EQ(claimed.json()["claimed_by"], "rob");
}

TEST_F(ReviewClaimsTest, ADecisionByAnotherReviewerStillAppliesAndEndsTheClaim) {
  start();
  const std::string thread = paused_thread();
  ASSERT_EQ(call("rita", "POST", "/threads/" + thread + "/claim").status, 200);
  auto decided = call("rob", "POST", "/threads/" + thread + "/runs/wait",
                      {{"assistant_id", "gate"},
                       {"command", {{"resume", {{"decisions", {{{"type", "approve"}}}}}}}}});
  ASSERT_EQ(decided.status, 200) << decided.body;
  EXPECT_EQ(decided.json()["decided_by"], "rob");
  // Nothing is left to claim: an admin (who sees every thread) is told so; rita no longer sees
  // the thread at all, since it waits for no review.
  auto again = call("ada", "POST", "/threads/" + thread + "/claim");
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_NE(again.body.find("has no pending review to claim"), std::string::npos) << again.body;
  EXPECT_EQ(call("rita", "POST", "/threads/" + thread + "/claim").status, 404);
}

// ------------------------------------------------------------------ the review stream

class ReviewClaimEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("tollgate_claim_events_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    remove();
    store_ = std::make_unique<SqliteReviewStore>(path_.string());
    notifications_ = std::make_unique<Notifications>(std::vector<WebhookOptions>{}, nullptr);
    claims_ = std::make_unique<ReviewClaims>(*store_, notifications_.get(), std::chrono::minutes(5));
    thread_.thread_id = "t1";
    thread_.metadata = Json{{"owner", "alice"}, {"assistant_id", "gate"}};
    thread_.interrupts = Json{{"task-1", {{{"id", "i-1"}, {"value", review_request({})}}}}};
    store_->add_pending(review_records_for("t1", "cp-1", thread_.interrupts, Json()));
  }
  void TearDown() override {
    claims_.reset();
    notifications_.reset();
    store_.reset();
    remove();
  }
  void remove() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + suffix);
  }
  std::vector<NotificationEvent> events() {
    std::vector<NotificationEvent> out;
    for (const FeedEntryPtr& e : notifications_->feed()->read_after(0)) out.push_back(e->event);
    return out;
  }

  std::filesystem::path path_;
  std::unique_ptr<SqliteReviewStore> store_;
  std::unique_ptr<Notifications> notifications_;
  std::unique_ptr<ReviewClaims> claims_;
  ThreadRecord thread_;
  const Identity rita_{"rita", "", {"reviewer"}, true};
};

TEST_F(ReviewClaimEventsTest, AClaimIsToldAsReviewClaimedWithItsHolder) {
  claims_->claim(thread_, "", rita_);
  const auto told = events();
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].type, "review.claimed");
  EXPECT_EQ(told[0].data["claimed_by"], "rita");
  EXPECT_EQ(told[0].data["interrupt_id"], "i-1");
  EXPECT_EQ(told[0].data["assistant_id"], "gate");
}

TEST_F(ReviewClaimEventsTest, AReleaseIsToldAsReviewReleasedWithWhoReleased) {
  claims_->claim(thread_, "i-1", rita_);
  claims_->release(thread_, "i-1", rita_);
  const auto told = events();
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[1].type, "review.released");
  EXPECT_EQ(told[1].data["claimed_by"], "rita");
  EXPECT_EQ(told[1].data["released_by"], "rita");
}

TEST_F(ReviewClaimEventsTest, ReleasingWhenNothingIsClaimedTellsNothing) {
  EXPECT_TRUE(claims_->release(thread_, "", rita_).empty());
  EXPECT_TRUE(events().empty());
}

TEST_F(ReviewClaimEventsTest, ShowWritesTheLiveClaimIntoEachReviewConfig) {
  claims_->claim(thread_, "", rita_);
  Json t{{"thread_id", "t1"}, {"interrupts", thread_.interrupts}};
  claims_->show({&t});
  const Json& config = t["interrupts"]["task-1"][0]["value"]["review_configs"][0];
  EXPECT_EQ(config["claimed_by"], "rita");
  EXPECT_TRUE(config["claimed_at"].is_string());
  EXPECT_TRUE(config["claim_expires_at"].is_string());
}

}  // namespace
}  // namespace tollgate::server

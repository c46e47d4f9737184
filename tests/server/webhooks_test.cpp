// Notifications: the `webhooks` config, the signature, the retry schedule, the delivery queue
// in SQLite, and a real server delivering to a real receiver on 127.0.0.1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "core/sha256.h"
#include "server/http_server.h"
#include "server/http_test_client.h"
#include "server/notifications.h"
#include "server/router.h"
#include "server/sql_webhook_queue.h"
#include "server/webhook_receiver.h"
#include "server/webhook_sender.h"
#include "sql/sqlite_connection.h"
#include "tollgate/error.h"
#include "tollgate/memory_saver.h"
#include "tollgate/server.h"

namespace tollgate::server {
namespace {

using testing::http_call;

constexpr const char* kSecretEnv = "TOLLGATE_TEST_WEBHOOK_SECRET";
constexpr const char* kSecret = "whsec_0123456789abcdef";

std::string refusal_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::filesystem::path temp_db(const std::string& what) {
  return std::filesystem::temp_directory_path() /
         ("tollgate_webhooks_" + what + "_" + std::to_string(::getpid()) + "_" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
}

void remove_db(const std::filesystem::path& db) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
}

// ------------------------------------------------------------------ config

TEST(WebhookConfig, AnUnknownEventIsRefusedNamingTheField) {
  const Json section = Json::parse(
      R"([{"url": "http://127.0.0.1:9/hook", "secret_env": "S", "events": ["review.requested", "review.done"]}])");
  EXPECT_NE(refusal_of([&] { parse_webhook_options(section); })
                .find("webhooks[0].events[1]: unknown event 'review.done'"),
            std::string::npos);
}

TEST(WebhookConfig, AUrlThatIsNotHttpIsRefused) {
  const Json section =
      Json::parse(R"([{"url": "ftp://example.com/hook", "secret_env": "S", "events": ["run.failed"]}])");
  EXPECT_NE(refusal_of([&] { parse_webhook_options(section); })
                .find("webhooks[0].url: must be an http:// or https:// URL"),
            std::string::npos);
}

TEST(WebhookConfig, AMissingSecretEnvIsRefused) {
  const Json section = Json::parse(R"([{"url": "https://example.com/hook", "events": ["run.failed"]}])");
  EXPECT_NE(refusal_of([&] { parse_webhook_options(section); }).find("webhooks[0].secret_env: required"),
            std::string::npos);
}

TEST(WebhookConfig, AnUnknownKeyIsRefused) {
  const Json section = Json::parse(
      R"([{"url": "https://example.com/hook", "secret_env": "S", "events": ["run.failed"], "secret": "x"}])");
  EXPECT_NE(refusal_of([&] { parse_webhook_options(section); }).find("webhooks[0]: unknown key 'secret'"),
            std::string::npos);
}

TEST(WebhookConfig, AnUnsetSecretVariableStopsTheServerNamingIt) {
  ::unsetenv("TOLLGATE_TEST_UNSET_SECRET");
  ServerOptions options;
  options.port = 0;
  options.db_path = ":memory:";
  options.checkpointer = make_memory_saver();
  options.webhooks = {WebhookOptions{"http://127.0.0.1:9/hook", "TOLLGATE_TEST_UNSET_SECRET",
                                     {"run.finished"}}};
  Server server(options, GraphRegistry{});
  EXPECT_NE(refusal_of([&] { server.start(); })
                .find("webhooks[0].secret_env: environment variable TOLLGATE_TEST_UNSET_SECRET "
                      "is not set"),
            std::string::npos);
}

// ------------------------------------------------------------------ signature and schedule

TEST(WebhookSignature, IsHmacSha256OfTheTimestampDotTheBody) {
  // Python: hmac.new(b"whsec_test", b'1700000000.{"id":"x"}', hashlib.sha256).hexdigest()
  EXPECT_EQ(webhook_signature("whsec_test", 1700000000, R"({"id":"x"})"),
            "t=1700000000,v1=80e8d098018f757aa814ab1abb924f35d304affa1d93d29611a54696207eb7c3");
}

TEST(WebhookRetry, EachDelayDoublesTheOneBefore) {
  WebhookOptions options;
  options.first_retry_seconds = 30;
  options.jitter = 0;
  EXPECT_EQ(retry_delay_millis(options, 1, 0.5), 30000);
  EXPECT_EQ(retry_delay_millis(options, 2, 0.5), 60000);
  EXPECT_EQ(retry_delay_millis(options, 7, 0.5), 30000 * 64);
}

TEST(WebhookRetry, TheDefaultEightTriesSpanAboutAnHour) {
  const WebhookOptions options;
  std::int64_t total = 0;
  for (int failed = 1; failed < options.max_attempts; ++failed)
    total += retry_delay_millis(options, failed, 0.5);
  EXPECT_EQ(options.max_attempts, 8);
  EXPECT_GE(total, 55 * 60 * 1000);
  EXPECT_LE(total, 70 * 60 * 1000);
}

TEST(WebhookRetry, JitterScalesADelayWithinItsBounds) {
  WebhookOptions options;
  options.first_retry_seconds = 10;
  options.jitter = 0.2;
  EXPECT_EQ(retry_delay_millis(options, 1, 0.0), 8000);
  EXPECT_EQ(retry_delay_millis(options, 1, 1.0), 12000);
}

// ------------------------------------------------------------------ the queue

class WebhookQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = temp_db("queue");
    remove_db(db_);
    queue_ = std::make_unique<SqliteWebhookQueue>(db_.string());
  }
  void TearDown() override {
    queue_.reset();
    remove_db(db_);
  }
  static NotificationEvent event(const std::string& id) {
    return NotificationEvent{id, "run.finished", 1000, Json{{"thread_id", "t"}}};
  }
  std::filesystem::path db_;
  std::unique_ptr<SqliteWebhookQueue> queue_;
};

TEST_F(WebhookQueueTest, AnEventIsStoredAndQueuedOnce) {
  EXPECT_TRUE(queue_->add(event("e1"), {"http://a/"}));
  EXPECT_FALSE(queue_->add(event("e1"), {"http://a/"}));
  EXPECT_EQ(queue_->list(std::nullopt, 10).size(), 1u);
}

TEST_F(WebhookQueueTest, AnEventNoReceiverSubscribesToIsKeptOnceWithoutItsBody) {
  EXPECT_TRUE(queue_->add(event("e1"), {}));
  EXPECT_FALSE(queue_->add(event("e1"), {}));
  EXPECT_FALSE(queue_->add(event("e1"), {"http://a/"}));  // told before: not queued now
  EXPECT_TRUE(queue_->add(event("e2"), {"http://a/"}));
  sql::SqliteConnection file(db_.string());
  auto rows = file.prepare("SELECT event_id, type, body FROM server_webhook_events ORDER BY 1");
  ASSERT_TRUE(rows->step());
  EXPECT_EQ(rows->text(0), "e1");
  EXPECT_EQ(rows->text(1), "run.finished");
  EXPECT_EQ(rows->text(2), "");
  ASSERT_TRUE(rows->step());
  EXPECT_EQ(Json::parse(rows->text(2)), event("e2").to_json());
  EXPECT_FALSE(rows->step());
  ASSERT_EQ(queue_->list(std::nullopt, 10).size(), 1u);
  EXPECT_EQ(queue_->list(std::nullopt, 10)[0].event_id, "e2");
}

// ------------------------------------------------------------------ what is stored

// Rows of server_webhook_events in the file at `db`.
std::int64_t stored_events(const std::filesystem::path& db) {
  sql::SqliteConnection file(db.string());
  auto rows = file.prepare("SELECT count(*) FROM server_webhook_events");
  EXPECT_TRUE(rows->step());
  return rows->integer(0);
}

// review.requested of one review on thread t1, as the run manager builds it.
std::vector<QueuedNotification> review_requested(const Notifications& notifications) {
  const Json interrupts = Json::parse(
      R"({"task-1": [{"id": "i-1", "value": {"action_requests": [], "review_configs": []}}]})");
  return notifications.review_requested_notices("t1", "gate", "cp-1", interrupts);
}

std::size_t told_on_stream(const Notifications& notifications) {
  return notifications.feed()->read_after(0).size();
}

TEST_F(WebhookQueueTest, ALoneServerWithoutWebhooksStoresNoEventAndTellsItOnTheStream) {
  Notifications notifications({}, queue_.get(), /*queue_in_store_database=*/true,
                              /*queue_shared=*/false);
  EXPECT_FALSE(notifications.stores_events());
  EXPECT_FALSE(notifications.stored_with_facts());
  notifications.tell(review_requested(notifications));
  EXPECT_EQ(stored_events(db_), 0);
  EXPECT_EQ(told_on_stream(notifications), 1u);
}

TEST_F(WebhookQueueTest, ASharedQueueStoresEventsWithoutWebhooksSoAFactIsToldOnce) {
  Notifications notifications({}, queue_.get(), /*queue_in_store_database=*/true,
                              /*queue_shared=*/true);
  EXPECT_TRUE(notifications.stored_with_facts());
  notifications.tell(review_requested(notifications));
  notifications.tell(review_requested(notifications));  // told again (another process, say)
  EXPECT_EQ(stored_events(db_), 1);
  EXPECT_EQ(told_on_stream(notifications), 1u);
}

TEST_F(WebhookQueueTest, ANoticeTheStoreFedIsNotRelayedAgain) {
  Notifications notifications({}, queue_.get(), /*queue_in_store_database=*/true,
                              /*queue_shared=*/true);
  std::size_t relayed = 0;
  notifications.set_feed_relay(
      [&](const std::vector<NotificationEvent>& events) { relayed += events.size(); });
  std::vector<QueuedNotification> notices = review_requested(notifications);
  notices.push_back(notices.front());
  notices[0].event.id = "fed";
  notices[0].fresh = true;
  notices[0].in_feed = true;  // appended with its fact by the store
  notices[1].event.id = "not-fed";
  notices[1].fresh = true;
  notifications.told(notices);
  EXPECT_EQ(relayed, 1u);
}

TEST_F(WebhookQueueTest, EachReceiverGetsOnlyItsOldestPendingDeliveryTried) {
  queue_->add(event("e1"), {"http://a/", "http://b/"});
  queue_->add(event("e2"), {"http://a/"});
  auto heads = queue_->heads();
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_EQ(heads[0].event_id, "e1");
  EXPECT_EQ(heads[1].event_id, "e1");
  queue_->delivered(heads[0].delivery_id, 200, 2000);
  heads = queue_->heads();
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_EQ(heads[0].url, "http://b/");
  EXPECT_EQ(heads[1].event_id, "e2");
}

TEST_F(WebhookQueueTest, AFailedTryKeepsTheDeliveryPendingUntilItsNextTry) {
  queue_->add(event("e1"), {"http://a/"});
  ASSERT_TRUE(queue_->lease(queue_->heads()[0], "sender-a", 1000, 31000));
  queue_->attempt_failed(queue_->heads()[0].delivery_id, "sender-a", "HTTP 500", 500, 5000, false);
  const WebhookDelivery d = queue_->heads().at(0);
  EXPECT_EQ(d.status, DeliveryStatus::kPending);
  EXPECT_EQ(d.attempts, 1);
  EXPECT_EQ(d.next_attempt_at, 5000);
  EXPECT_EQ(d.last_error, "HTTP 500");
  EXPECT_EQ(d.last_status, 500);
}

TEST_F(WebhookQueueTest, GivingUpMarksTheDeliveryFailedAndFreesTheReceiversNext) {
  queue_->add(event("e1"), {"http://a/"});
  queue_->add(event("e2"), {"http://a/"});
  ASSERT_TRUE(queue_->lease(queue_->heads()[0], "sender-a", 1000, 31000));
  queue_->attempt_failed(queue_->heads()[0].delivery_id, "sender-a", "timed out", 0, 0, true);
  EXPECT_EQ(queue_->list(DeliveryStatus::kFailed, 10).at(0).event_id, "e1");
  EXPECT_EQ(queue_->heads().at(0).event_id, "e2");
}

TEST_F(WebhookQueueTest, ALeasedDeliveryIsRefusedToAnotherSenderUntilTheLeaseLapses) {
  queue_->add(event("e1"), {"http://a/"});
  const WebhookDelivery head = queue_->heads().at(0);
  ASSERT_TRUE(queue_->lease(head, "sender-a", 1000, 31000));
  EXPECT_FALSE(queue_->lease(head, "sender-b", 30999, 61000));
  EXPECT_TRUE(queue_->lease(head, "sender-b", 31000, 61000));
  EXPECT_EQ(queue_->heads().at(0).leased_by, "sender-b");
}

TEST_F(WebhookQueueTest, ASenderTakesBackItsOwnLeaseBeforeItLapses) {
  // A process alone on its queue, restarted after a crash mid-try, under the same holder id.
  queue_->add(event("e1"), {"http://a/"});
  ASSERT_TRUE(queue_->lease(queue_->heads().at(0), kOnlySenderId, 1000, 31000));
  EXPECT_TRUE(queue_->lease(queue_->heads().at(0), kOnlySenderId, 2000, 32000));
}

TEST_F(WebhookQueueTest, AReceiversNextDeliveryCannotBeLeasedWhileAnOlderOneIsPending) {
  queue_->add(event("e1"), {"http://a/"});
  queue_->add(event("e2"), {"http://a/"});
  WebhookDelivery second = queue_->list(std::nullopt, 10).at(0);
  ASSERT_EQ(second.event_id, "e2");
  EXPECT_FALSE(queue_->lease(second, "sender-a", 1000, 31000));
}

TEST_F(WebhookQueueTest, ADeliveryReadBeforeAnotherSendersFailedTryCannotBeLeased) {
  queue_->add(event("e1"), {"http://a/"});
  const WebhookDelivery read_before = queue_->heads().at(0);
  ASSERT_TRUE(queue_->lease(read_before, "sender-a", 1000, 31000));
  queue_->attempt_failed(read_before.delivery_id, "sender-a", "HTTP 500", 500, 1000, false);
  EXPECT_FALSE(queue_->lease(read_before, "sender-b", 2000, 32000));
  EXPECT_TRUE(queue_->lease(queue_->heads().at(0), "sender-b", 2000, 32000));
}

TEST_F(WebhookQueueTest, AFailedTryOfASenderWhoseLeaseWasTakenOverChangesNothing) {
  queue_->add(event("e1"), {"http://a/"});
  const WebhookDelivery head = queue_->heads().at(0);
  ASSERT_TRUE(queue_->lease(head, "sender-a", 1000, 31000));
  ASSERT_TRUE(queue_->lease(head, "sender-b", 40000, 70000));
  queue_->attempt_failed(head.delivery_id, "sender-a", "timed out", 0, 0, true);
  const WebhookDelivery after = queue_->heads().at(0);
  EXPECT_EQ(after.status, DeliveryStatus::kPending);
  EXPECT_EQ(after.attempts, 0);
  EXPECT_EQ(after.leased_by, "sender-b");
}

TEST_F(WebhookQueueTest, PendingDeliveriesSurviveReopeningTheFile) {
  queue_->add(event("e1"), {"http://a/"});
  queue_.reset();
  queue_ = std::make_unique<SqliteWebhookQueue>(db_.string());
  auto heads = queue_->heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(Json::parse(heads[0].body)["id"], "e1");
}

TEST_F(WebhookQueueTest, PruningDeletesMoreThanOneBatch) {
  {
    sql::SqliteConnection file(db_.string());
    file.exec(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500) "
        "INSERT INTO server_webhook_events (event_id, type, body, created_at) "
        "SELECT 'old-' || i, 'run.finished', '', i FROM n");
  }
  ASSERT_TRUE(queue_->add(NotificationEvent{"new", "run.finished", 9000, Json::object()}, {}));
  EXPECT_EQ(queue_->prune(3000), 2500u);
  EXPECT_FALSE(queue_->add(NotificationEvent{"new", "run.finished", 9000, Json::object()}, {}));
  EXPECT_TRUE(queue_->add(NotificationEvent{"old-7", "run.finished", 7, Json::object()}, {}));
}

// ------------------------------------------------------------------ a server and a receiver

using Receiver = testing::WebhookReceiver;

GraphRegistry review_graph() {
  GraphRegistry registry;
  registry.add("gate", [](std::shared_ptr<Saver> saver) -> std::shared_ptr<const CompiledGraph> {
    StateGraph g;
    g.add_node("review", [](const State&, Runtime& rt) -> NodeResult {
      Json answer = rt.interrupt(Json{
          {"action_requests", {{{"name", "send_email"}, {"args", {{"to", "bob@example.com"}}}}}},
          {"review_configs",
           {{{"action_name", "send_email"}, {"allowed_decisions", {"approve", "reject"}}}}}});
      return Json{{"decision", answer}};
    });
    g.add_edge(START, "review").add_edge("review", END);
    CompileOptions options;
    options.checkpointer = std::move(saver);
    options.name = "gate";
    return g.compile(options);
  });
  return registry;
}

class WebhookServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv(kSecretEnv, kSecret, 1);
    db_ = temp_db("server");
    remove_db(db_);
    saver_ = make_memory_saver();
  }
  void TearDown() override {
    server_.reset();
    remove_db(db_);
  }
  void start(const std::vector<std::string>& events = {"review.requested", "review.decided",
                                                       "run.finished", "run.failed"},
             double first_retry_seconds = 0.02, int max_attempts = 4) {
    WebhookOptions hook{receiver_.url(), kSecretEnv, events};
    hook.first_retry_seconds = first_retry_seconds;
    hook.jitter = 0;
    hook.max_attempts = max_attempts;
    start_with({hook});
  }
  void start_with(std::vector<WebhookOptions> webhooks) {
    ServerOptions options;
    options.port = 0;
    options.db_path = db_.string();
    options.checkpointer = saver_;
    options.heartbeat_seconds = 0;
    options.webhooks = std::move(webhooks);
    server_ = std::make_unique<Server>(options, review_graph());
    server_->start();
  }
  testing::ClientResponse call(const std::string& method, const std::string& target,
                               const Json& body = Json()) {
    return http_call(server_->port(), method, target, body.is_null() ? "" : body.dump());
  }
  // The delivery log once its one delivery is stored as delivered: the sender writes the outcome
  // after the receiver answered, so a log read at once may still say pending.
  Json delivered_log() {
    Json log;
    for (int i = 0; i < 2000; ++i) {
      log = call("GET", "/webhooks/deliveries").json();
      if (log.size() == 1 && log[0]["status"] == "delivered") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return log;
  }
  // A thread paused on the send_email review.
  std::string pause() {
    const std::string thread_id = call("POST", "/threads", Json::object()).json()["thread_id"];
    auto run = call("POST", "/threads/" + thread_id + "/runs/wait",
                    {{"assistant_id", "gate"}, {"input", Json::object()}});
    EXPECT_EQ(run.status, 200) << run.body;
    return thread_id;
  }
  void approve(const std::string& thread_id) {
    auto run = call("POST", "/threads/" + thread_id + "/runs/wait",
                    {{"assistant_id", "gate"},
                     {"command", {{"resume", {{"decisions", {{{"type", "approve"}}}}}}}}});
    EXPECT_EQ(run.status, 200) << run.body;
  }
  static std::vector<std::string> types(const std::vector<Receiver::Delivery>& deliveries) {
    std::vector<std::string> out;
    for (const auto& d : deliveries) out.push_back(d.json()["type"]);
    return out;
  }

  Receiver receiver_;
  std::filesystem::path db_;
  std::shared_ptr<Saver> saver_;
  std::unique_ptr<Server> server_;
};

TEST_F(WebhookServerTest, APauseIsDeliveredAsReviewRequestedWithItsActions) {
  start({"review.requested"});
  const std::string thread_id = pause();
  auto got = receiver_.wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  const Json event = got[0].json();
  EXPECT_EQ(event["type"], "review.requested");
  EXPECT_EQ(event["data"]["thread_id"], thread_id);
  EXPECT_EQ(event["data"]["action_requests"][0]["name"], "send_email");
  EXPECT_EQ(event["data"]["review_configs"][0]["action_name"], "send_email");
  EXPECT_TRUE(event["data"]["interrupt_id"].is_string());
  EXPECT_TRUE(event["data"]["decided_by"].is_null());
  EXPECT_NE(event["data"]["console_url"].get<std::string>().find("/#/t/" + thread_id),
            std::string::npos);
}

TEST_F(WebhookServerTest, EachDeliveryCarriesAValidSignatureOfItsBody) {
  start({"review.requested"});
  pause();
  auto got = receiver_.wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  const std::string& signature = got[0].signature;
  const auto comma = signature.find(',');
  ASSERT_EQ(signature.rfind("t=", 0), 0u) << signature;
  ASSERT_NE(comma, std::string::npos) << signature;
  const std::string t = signature.substr(2, comma - 2);
  EXPECT_EQ(signature.substr(comma + 1), "v1=" + core::hmac_sha256_hex(kSecret, t + "." + got[0].body));
}

TEST_F(WebhookServerTest, ReviewRequestedComesBeforeReviewDecidedAndTheRunsEnd) {
  start();
  const std::string thread_id = pause();
  approve(thread_id);
  auto got = receiver_.wait_for(4);
  EXPECT_EQ(types(got), (std::vector<std::string>{"review.requested", "run.finished",
                                                  "review.decided", "run.finished"}));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[1].json()["data"]["outcome"], "paused");
  EXPECT_EQ(got[2].json()["data"]["decided_by"], "local");
  EXPECT_EQ(got[2].json()["data"]["outcome"], "approve");
  EXPECT_EQ(got[2].json()["data"]["interrupt_id"], got[0].json()["data"]["interrupt_id"]);
  EXPECT_EQ(got[3].json()["data"]["outcome"], "completed");
}

TEST_F(WebhookServerTest, FailedTriesAreRetriedUntilTheReceiverAnswers2xx) {
  receiver_.fail_next(2);
  start({"review.requested"});
  pause();
  auto got = receiver_.wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(receiver_.tries(), 3);
  const Json log = delivered_log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["status"], "delivered");
  EXPECT_EQ(log[0]["attempts"], 3);
  EXPECT_EQ(log[0]["last_status"], 204);
}

TEST_F(WebhookServerTest, TheDeliveryLogShowsAGivenUpDeliveryWithItsLastError) {
  receiver_.fail_next(100);
  start({"review.requested"});
  pause();
  for (int i = 0; i < 2000 && receiver_.tries() < 4; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  Json log;
  for (int i = 0; i < 2000; ++i) {
    log = call("GET", "/webhooks/deliveries?status=failed").json();
    if (!log.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["attempts"], 4);
  EXPECT_EQ(log[0]["last_error"], "HTTP 500");
  EXPECT_EQ(receiver_.tries(), 4);
}

TEST_F(WebhookServerTest, ARestartKeepsAPendingDeliveryAndSendsItOnSchedule) {
  // Every try fails while the first process runs (8 tries from 0.5 s on: about a minute).
  receiver_.fail_next(1000);
  start({"review.requested"}, 0.5, 8);
  const std::string thread_id = pause();
  for (int i = 0; i < 2000 && receiver_.tries() < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  server_.reset();
  EXPECT_TRUE(receiver_.received().empty());
  receiver_.fail_next(0);
  start({"review.requested"}, 0.5, 8);
  auto got = receiver_.wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].json()["data"]["thread_id"], thread_id);
  const Json log = delivered_log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["status"], "delivered");
  EXPECT_GE(log[0]["attempts"].get<int>(), 2);
}

TEST_F(WebhookServerTest, AnEventTypeNoWebhookSubscribedToIsNotSent) {
  start({"run.failed"});
  pause();
  auto log = call("GET", "/webhooks/deliveries").json();
  EXPECT_TRUE(log.empty()) << log.dump();
  // Kept by its id (a webhook is configured): review.requested and run.finished.
  EXPECT_EQ(stored_events(db_), 2);
}

TEST_F(WebhookServerTest, AServerWithoutWebhooksStoresNoNotificationEvent) {
  start_with({});
  approve(pause());
  EXPECT_EQ(stored_events(db_), 0);
  auto log = call("GET", "/webhooks/deliveries").json();
  EXPECT_TRUE(log.empty()) << log.dump();
}

}  // namespace
}  // namespace tollgate::server

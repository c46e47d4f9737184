// LISTEN/NOTIFY between sessions of a real server (label postgres): PostgresListener, notify()
// and channel_name().
#include "sql/postgres_listener.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sql/postgres_connection.h"
#include "sql/sql_test_util.h"
#include "support/postgres_test_server.h"

namespace tollgate::sql {
namespace {

using testing::ScratchSchema;
using testing::test_postgres_url;

// Generous: the tests wait for what must happen, never for what must not.
constexpr std::chrono::seconds kPatience{60};

// What a listener's callbacks were given, for the test thread to wait on.
class Inbox {
 public:
  void received(const Notification& notification) {
    std::lock_guard lock(mutex_);
    payloads_.push_back(notification.payload);
    senders_.push_back(notification.sender_pid);
    changed_.notify_all();
  }
  void reconnected() {
    std::lock_guard lock(mutex_);
    ++reconnects_;
    changed_.notify_all();
  }
  void problem(const std::string& message) {
    std::lock_guard lock(mutex_);
    problems_.push_back(message);
  }
  // False when `count` payloads did not arrive in time.
  bool wait_for_payloads(std::size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kPatience, [&] { return payloads_.size() >= count; });
  }
  bool wait_for_reconnect() {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kPatience, [&] { return reconnects_ > 0; });
  }
  std::vector<std::string> payloads() {
    std::lock_guard lock(mutex_);
    return payloads_;
  }
  std::vector<int> senders() {
    std::lock_guard lock(mutex_);
    return senders_;
  }
  std::vector<std::string> problems() {
    std::lock_guard lock(mutex_);
    return problems_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> payloads_;
  std::vector<int> senders_;
  std::vector<std::string> problems_;
  int reconnects_ = 0;
};

// True when `done` holds within kPatience (looking every 10 ms).
bool eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

class PostgresListenerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TOLLGATE_REQUIRE_POSTGRES();
    schema_ = std::make_unique<ScratchSchema>();
    channel_ = channel_name(schema_->name(), "runs");
    sender_ = std::make_unique<PostgresConnection>(test_postgres_url());
  }
  void TearDown() override {
    listener_.reset();
    sender_.reset();
    schema_.reset();
  }
  PostgresListenerOptions options() {
    return {.on_notification = [this](const Notification& n) { inbox_.received(n); },
            .on_reconnect = [this] { inbox_.reconnected(); },
            .on_problem = [this](const std::string& message) { inbox_.problem(message); }};
  }
  // A started listener on this test's channel.
  PostgresListener& start(PostgresListenerOptions options) {
    listener_ = std::make_unique<PostgresListener>(test_postgres_url(), std::move(options));
    listener_->listen(channel_);
    listener_->start();
    return *listener_;
  }
  void send(const std::string& payload) { notify(*sender_, channel_, payload); }
  // Ends the listener's session from another one, as an administrator or a failover would.
  void terminate_listener_session() {
    PostgresConnection admin(test_postgres_url());
    PostgresStatement kill(admin, "SELECT pg_terminate_backend($1, 10000)");
    kill.bind(1, std::int64_t{listener_->backend_pid()});
    ASSERT_TRUE(kill.step());
  }

  std::unique_ptr<ScratchSchema> schema_;
  std::string channel_;
  std::unique_ptr<PostgresConnection> sender_;
  Inbox inbox_;
  std::unique_ptr<PostgresListener> listener_;
};

TEST_F(PostgresListenerTest, NotificationsArriveInTheOrderSent) {
  start(options());
  std::vector<std::string> sent;
  for (int i = 0; i < 100; ++i) {
    sent.push_back(std::to_string(i));
    send(sent.back());
  }
  ASSERT_TRUE(inbox_.wait_for_payloads(sent.size()));
  EXPECT_EQ(inbox_.payloads(), sent);
}

TEST_F(PostgresListenerTest, ANotificationNamesTheServerProcessOfItsSender) {
  start(options());
  PostgresConnection other(test_postgres_url());
  send("first");
  notify(other, channel_, "second");
  ASSERT_TRUE(inbox_.wait_for_payloads(2));
  EXPECT_NE(sender_->backend_pid(), other.backend_pid());
  EXPECT_EQ(inbox_.senders(), (std::vector<int>{sender_->backend_pid(), other.backend_pid()}));
}

TEST_F(PostgresListenerTest, NotificationInATransactionArrivesOnlyAfterTheCommit) {
  start(options());
  Transaction transaction(*sender_, TransactionKind::kWrite);
  send("inside");
  PostgresConnection other(test_postgres_url());
  notify(other, channel_, "marker");  // what came before it has arrived before it
  ASSERT_TRUE(inbox_.wait_for_payloads(1));
  EXPECT_EQ(inbox_.payloads(), std::vector<std::string>{"marker"});
  transaction.commit();
  ASSERT_TRUE(inbox_.wait_for_payloads(2));
  EXPECT_EQ(inbox_.payloads(), (std::vector<std::string>{"marker", "inside"}));
}

TEST_F(PostgresListenerTest, NotificationOfARolledBackTransactionNeverArrives) {
  start(options());
  {
    Transaction transaction(*sender_, TransactionKind::kWrite);
    send("rolled back");
  }
  send("marker");
  ASSERT_TRUE(inbox_.wait_for_payloads(1));
  EXPECT_EQ(inbox_.payloads(), std::vector<std::string>{"marker"});
}

TEST_F(PostgresListenerTest, TopicOfAnotherSchemaIsNotHeard) {
  start(options());
  notify(*sender_, channel_name(schema_->name() + "_other", "runs"), "other schema");
  send("own schema");
  ASSERT_TRUE(inbox_.wait_for_payloads(1));
  EXPECT_EQ(inbox_.payloads(), std::vector<std::string>{"own schema"});
}

TEST_F(PostgresListenerTest, ChannelListenedAfterStartIsHeard) {
  start(options());
  const std::string later = channel_name(schema_->name(), "cancels");
  listener_->listen(later);
  notify(*sender_, later, "cancel");
  ASSERT_TRUE(inbox_.wait_for_payloads(1));
  EXPECT_EQ(inbox_.payloads(), std::vector<std::string>{"cancel"});
}

TEST_F(PostgresListenerTest, TerminatedSessionReconnectsAndHearsLaterNotifications) {
  start(options());
  terminate_listener_session();
  ASSERT_TRUE(inbox_.wait_for_reconnect());
  EXPECT_TRUE(listener_->is_connected());
  send("after");
  ASSERT_TRUE(inbox_.wait_for_payloads(1));
  EXPECT_EQ(inbox_.payloads(), std::vector<std::string>{"after"});
}

TEST_F(PostgresListenerTest, StopDuringARetryPauseReturnsPromptly) {
  PostgresListenerOptions slow_retries = options();
  slow_retries.first_retry_delay = slow_retries.max_retry_delay = std::chrono::minutes(10);
  start(std::move(slow_retries));
  terminate_listener_session();
  ASSERT_TRUE(eventually([&] { return !listener_->is_connected(); }));
  std::future<void> stopped = std::async(std::launch::async, [&] { listener_->stop(); });
  EXPECT_EQ(stopped.wait_for(kPatience), std::future_status::ready) << "stop() slept the pause";
}

TEST_F(PostgresListenerTest, ThrowingHandlerIsReportedAndLaterNotificationsArrive) {
  PostgresListenerOptions throwing = options();
  throwing.on_notification = [this](const Notification& n) {
    if (n.payload == "boom") throw std::runtime_error("handler failed");
    inbox_.received(n);
  };
  start(std::move(throwing));
  send("boom");
  send("after");
  ASSERT_TRUE(inbox_.wait_for_payloads(1));
  EXPECT_EQ(inbox_.payloads(), std::vector<std::string>{"after"});
  ASSERT_EQ(inbox_.problems().size(), 1u);
  EXPECT_NE(inbox_.problems()[0].find("handler failed"), std::string::npos);
}

TEST_F(PostgresListenerTest, PayloadJustUnderTheLimitArrivesWhole) {
  start(options());
  const std::string payload(kNotificationPayloadLimit - 1, 'x');
  send(payload);
  ASSERT_TRUE(inbox_.wait_for_payloads(1));
  EXPECT_EQ(inbox_.payloads(), std::vector<std::string>{payload});
}

TEST_F(PostgresListenerTest, PayloadOfTheLimitIsRefused) {
  EXPECT_EQ(code_of([&] { send(std::string(kNotificationPayloadLimit, 'x')); }),
            ErrorCode::kInvalidArgument);
}

TEST(PostgresListenerStart, UnreachableServerIsUnavailableAndNamesIt) {
  PostgresListenerOptions options;
  options.on_notification = [](const Notification&) {};
  PostgresListener listener("postgres://u@127.0.0.1:1/db", std::move(options));
  const Error error = error_of([&] { listener.start(); });
  EXPECT_EQ(error.code(), ErrorCode::kUnavailable);
  EXPECT_NE(std::string(error.what()).find("127.0.0.1:1/db"), std::string::npos) << error.what();
}

TEST(PostgresChannelName, IsALowercaseIdentifierOfAtMost63Bytes) {
  const std::string name = channel_name("Some Schema \"with\" quotes", std::string(40, 'a'));
  EXPECT_LE(name.size(), 63u);
  for (char c : name) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  EXPECT_EQ(name.substr(0, 9), "tollgate_");
}

TEST(PostgresChannelName, DiffersPerSchemaAndPerTopicAndIsStable) {
  EXPECT_NE(channel_name("a", "runs"), channel_name("b", "runs"));
  EXPECT_NE(channel_name("a", "runs"), channel_name("a", "cancels"));
  EXPECT_EQ(channel_name("a", "runs"), channel_name("a", "runs"));
}

}  // namespace
}  // namespace tollgate::sql

// Two server replicas on one database: each test opens a part twice on one database (two
// connections, as two processes would have) and uses both at once. The audit log keeps one
// chain, each webhook delivery is sent once and in order, a review deadline fires once and
// reaches a replica that did not store it, and no replica serves a stale assistant. Runs on
// SQLite (server_test) and on PostgreSQL (server_postgres_test), where replicas are meant to
// share a database.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/audit_log.h"
#include "server/ids.h"
#include "server/review_timer.h"
#include "server/sql_review_store.h"
#include "server/sql_store.h"
#include "server/sql_webhook_queue.h"
#include "server/storage.h"
#include "server/store_backend.h"
#include "server/webhook_receiver.h"
#include "server/webhook_sender.h"
#include "sql/postgres_listener.h"

namespace tollgate::server {
namespace {

using namespace std::chrono_literals;

class SharedDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override { TOLLGATE_REQUIRE_STORE_BACKEND(); }

  tollgate::testing::StoreBackend db_{"shared"};
};

// Polls `done` (a bounded number of short sleeps); true once it holds.
template <class Done>
bool eventually(Done done) {
  for (int i = 0; i < 4000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

// ------------------------------------------------------------------ the audit log

AuditEntry decision(const std::string& thread_id) {
  AuditEntry entry;
  entry.thread_id = thread_id;
  entry.run_id = "run-" + thread_id;
  entry.graph_id = "agent";
  entry.checkpoint_id = "cp-1";
  entry.decided = Json{{"decisions", {{{"type", "approve"}}}}};
  return entry;
}

TEST_F(SharedDatabaseTest, TwoAuditLogsAppendingAndSettlingAtOnceKeepOneChain) {
  AuditLog first(db_.connect());
  AuditLog second(db_.connect());
  constexpr int kThreadsPerLog = 3;
  constexpr int kDecisionsPerThread = 15;
  std::mutex mutex;  // guards ids and failures
  std::vector<std::int64_t> ids;
  std::vector<std::string> failures;
  std::vector<std::thread> threads;
  for (AuditLog* log : {&first, &second}) {
    for (int t = 0; t < kThreadsPerLog; ++t) {
      threads.emplace_back([&, log, t] {
        for (int i = 0; i < kDecisionsPerThread; ++i) {
          try {
            const std::int64_t id = log->append(decision("t" + std::to_string(t)));
            log->settle(id, "applied");
            std::lock_guard lock(mutex);
            ids.push_back(id);
          } catch (const std::exception& e) {
            std::lock_guard lock(mutex);
            failures.push_back(e.what());
          }
        }
      });
    }
  }
  for (std::thread& thread : threads) thread.join();

  EXPECT_TRUE(failures.empty()) << failures.size() << " failed, the first: " << failures[0];
  EXPECT_EQ(std::set<std::int64_t>(ids.begin(), ids.end()).size(),
            std::size_t{2 * kThreadsPerLog * kDecisionsPerThread});
  const AuditVerification verified = first.verify();
  EXPECT_TRUE(verified.intact) << "entry " << verified.broken_id << ": " << verified.reason;
  EXPECT_EQ(verified.entries, std::size_t{2 * 2 * kThreadsPerLog * kDecisionsPerThread});
}

// ------------------------------------------------------------------ notifications

TEST_F(SharedDatabaseTest, AStoresNotificationNamesTheSessionTheStoreSentItFrom) {
  if (!tollgate::testing::StoreBackend::postgres()) GTEST_SKIP() << "notifications: PostgreSQL";
  // Database-wide: a name of this test's own.
  const std::string channel = sql::channel_name(db_.schema() + new_uuid7(), "events");
  SqlStore store(db_.connect(), AssistantWriters::kSeveralProcesses);
  StoreChannels channels;
  channels.events = channel;
  store.set_channels(channels);
  std::mutex mutex;  // guards received
  std::vector<sql::Notification> received;
  sql::PostgresListenerOptions options;
  options.on_notification = [&](const sql::Notification& n) {
    std::lock_guard lock(mutex);
    received.push_back(n);
  };
  sql::PostgresListener listener(db_.url(), std::move(options));
  listener.listen(channel);
  listener.start();
  EXPECT_EQ(store.notifying_pid(), 0);

  LogEntry e;
  e.seq = 1;
  e.event = "values";
  e.data = "{}";
  store.append_thread_event("t1", e);
  store.append_run_event("r1", e);
  store.flush_events();
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(mutex);
    return received.size() >= 2;
  }));
  std::lock_guard lock(mutex);
  ASSERT_EQ(received.size(), 2u);  // one statement sent both
  EXPECT_NE(store.notifying_pid(), 0);
  EXPECT_NE(store.notifying_pid(), listener.backend_pid());
  for (const sql::Notification& n : received) EXPECT_EQ(n.sender_pid, store.notifying_pid());
  EXPECT_EQ(received[0].payload, "t:t1");
  EXPECT_EQ(received[1].payload, "r:r1");
}

// ------------------------------------------------------------------ webhooks

constexpr const char* kSecretEnv = "TOLLGATE_TEST_SHARED_WEBHOOK_SECRET";

WebhookSender::Receiver receiver_of(const std::string& url) {
  WebhookOptions options{url, kSecretEnv, {"run.finished"}};
  options.first_retry_seconds = 0.02;
  options.jitter = 0;
  return WebhookSender::Receiver{options, "whsec_shared"};
}

std::vector<std::string> event_ids(const std::vector<testing::WebhookReceiver::Delivery>& got) {
  std::vector<std::string> ids;
  for (const auto& delivery : got) ids.push_back(delivery.json()["id"]);
  return ids;
}

TEST_F(SharedDatabaseTest, TwoSendersDeliverEachEventOnceAndInOrderToEachReceiver) {
  // Slow answers keep each try in flight long enough for a second sender to be seen trying too.
  testing::WebhookReceiver flaky(10ms);
  testing::WebhookReceiver steady(10ms);
  flaky.fail_next(2);
  const std::map<std::string, WebhookSender::Receiver> receivers{
      {flaky.url(), receiver_of(flaky.url())}, {steady.url(), receiver_of(steady.url())}};
  SqlWebhookQueue first_queue(db_.connect());
  SqlWebhookQueue second_queue(db_.connect());
  WebhookSender first(first_queue, receivers, new_uuid7());
  WebhookSender second(second_queue, receivers, new_uuid7());
  first.start();
  second.start();

  constexpr int kEvents = 12;
  std::vector<std::string> queued;
  for (int i = 0; i < kEvents; ++i) {
    // Each replica stores some of the events, and wakes both senders (the other one would
    // otherwise find them at its next poll).
    SqlWebhookQueue& queue = i % 2 == 0 ? first_queue : second_queue;
    const std::string id = "event-" + std::to_string(100 + i);
    queue.add(NotificationEvent{id, "run.finished", 1000 + i, Json{{"run", i}}},
              {flaky.url(), steady.url()});
    queued.push_back(id);
    first.wake();
    second.wake();
  }
  const bool all_delivered = eventually([&] {
    return first_queue.list(DeliveryStatus::kDelivered, 100).size() == std::size_t{2 * kEvents};
  });
  EXPECT_TRUE(all_delivered) << first_queue.list(DeliveryStatus::kPending, 100).size()
                             << " still pending";
  first.stop();
  second.stop();

  EXPECT_EQ(event_ids(flaky.received()), queued);
  EXPECT_EQ(event_ids(steady.received()), queued);
  EXPECT_EQ(flaky.most_in_flight(), 1);
  EXPECT_EQ(steady.most_in_flight(), 1);
}

TEST_F(SharedDatabaseTest, PruningDeletesEndedDeliveriesAndLoneEventsButNoPendingDelivery) {
  SqlWebhookQueue queue(db_.connect());
  const auto event = [](const std::string& id, std::int64_t at) {
    return NotificationEvent{id, "run.finished", at, Json{{"at", at}}};
  };
  ASSERT_TRUE(queue.add(event("delivered", 1000), {"http://a/"}));
  ASSERT_TRUE(queue.add(event("pending", 1000), {"http://b/"}));
  ASSERT_TRUE(queue.add(event("unsubscribed", 1000), {}));
  ASSERT_TRUE(queue.add(event("recent", 5000), {"http://a/"}));
  queue.delivered(queue.heads().at(0).delivery_id, 200, 1500);  // http://a/'s oldest
  ASSERT_EQ(queue.list(DeliveryStatus::kDelivered, 10).at(0).event_id, "delivered");
  for (const WebhookDelivery& head : queue.heads()) {
    if (head.event_id == "recent") queue.delivered(head.delivery_id, 200, 6000);  // ended, newer
  }
  ASSERT_EQ(queue.list(DeliveryStatus::kDelivered, 10).size(), 2u);

  // The delivered one and its event, and the event no receiver subscribed to.
  EXPECT_EQ(queue.prune(2000), 3u);
  std::vector<std::string> left;
  for (const WebhookDelivery& d : queue.list(std::nullopt, 10)) left.push_back(d.event_id);
  EXPECT_EQ(left, (std::vector<std::string>{"recent", "pending"}));
  EXPECT_EQ(queue.heads().at(0).event_id, "pending");
  // Told again, a deleted event is new; a kept one is not.
  EXPECT_TRUE(queue.add(event("unsubscribed", 1000), {}));
  EXPECT_FALSE(queue.add(event("pending", 1000), {"http://b/"}));
  EXPECT_FALSE(queue.add(event("recent", 5000), {"http://a/"}));
  EXPECT_EQ(queue.prune(2000), 1u);  // "unsubscribed" again
}

// ------------------------------------------------------------------ review deadlines

ReviewRecord timed_review(const std::string& thread_id, std::int64_t expires_at) {
  ReviewRecord record;
  record.review_id = new_uuid7();
  record.thread_id = thread_id;
  record.checkpoint_id = "cp-1";
  record.interrupt_id = "i-1";
  record.expires_at = expires_at;
  record.on_timeout = Json{{"type", "reject"}};
  return record;
}

// What the server's fire does, as far as exactly-once goes: claims the records as expired.
ReviewTimer::Fire expire_into(ReviewStore& reviews, std::atomic<std::size_t>& expired) {
  return [&reviews, &expired](const ReviewRecord& due) {
    expired += reviews.expire(due.thread_id, due.checkpoint_id, due.interrupt_id, "system:timeout",
                              "run-" + new_uuid7(), now_millis());
  };
}

TEST_F(SharedDatabaseTest, TwoTimersFireOneDeadlineOnce) {
  SqlReviewStore first_reviews(db_.connect());
  SqlReviewStore second_reviews(db_.connect());
  first_reviews.add_pending({timed_review("t1", now_millis() - 1)});
  std::atomic<std::size_t> expired{0};
  ReviewTimer first(first_reviews, system_clock(), expire_into(first_reviews, expired));
  ReviewTimer second(second_reviews, system_clock(), expire_into(second_reviews, expired));

  std::barrier together(2);
  auto passes = [&together](ReviewTimer& timer) {
    together.arrive_and_wait();
    for (int i = 0; i < 3; ++i) timer.fire_due();
  };
  std::thread first_thread(passes, std::ref(first));
  std::thread second_thread(passes, std::ref(second));
  first_thread.join();
  second_thread.join();

  EXPECT_EQ(expired.load(), 1u);
  EXPECT_EQ(second_reviews.list("t1").at(0).status, ReviewStatus::kExpired);
}

TEST_F(SharedDatabaseTest, ADeadlineAnotherReplicaStoredFiresWithinThePollInterval) {
  SqlReviewStore own_reviews(db_.connect());
  SqlReviewStore other_reviews(db_.connect());
  // A deadline of its own that has passed: once it fired, the timer found nothing timed left and
  // sleeps (before the fix, until a rearm() or a minute later).
  own_reviews.add_pending({timed_review("own", now_millis() - 1)});
  std::atomic<std::size_t> expired{0};
  ReviewTimer timer(own_reviews, system_clock(), expire_into(own_reviews, expired), 50ms);
  timer.start();
  ASSERT_TRUE(eventually([&] { return expired.load() == 1; }));
  std::this_thread::sleep_for(50ms);  // the pass after the fire read the (then) empty schedule

  other_reviews.add_pending({timed_review("other", now_millis() + 100)});

  EXPECT_TRUE(eventually([&] { return expired.load() == 2; }));
  EXPECT_EQ(other_reviews.list("other").at(0).status, ReviewStatus::kExpired);
}

// ------------------------------------------------------------------ assistants

AssistantRecord assistant(const std::string& name) {
  AssistantRecord a;
  a.assistant_id = "a-1";
  a.graph_id = "agent";
  a.name = name;
  a.created_at = a.updated_at = 1000;
  return a;
}

class SharedAssistantsTest : public SharedDatabaseTest {
 protected:
  void SetUp() override {
    SharedDatabaseTest::SetUp();
    if (IsSkipped()) return;
    reader_ = std::make_unique<SqlStore>(db_.connect(), AssistantWriters::kSeveralProcesses);
    writer_ = std::make_unique<SqlStore>(db_.connect(), AssistantWriters::kSeveralProcesses);
  }
  void TearDown() override {
    reader_.reset();
    writer_.reset();
  }
  std::unique_ptr<SqlStore> reader_;  // a replica that reads the assistant
  std::unique_ptr<SqlStore> writer_;  // another that changes it
};

TEST_F(SharedAssistantsTest, AnAssistantAnotherReplicaChangedIsReadAsChanged) {
  writer_->put_assistant(assistant("before"));
  ASSERT_EQ(reader_->get_assistant("a-1")->name, "before");
  AssistantRecord changed = assistant("after");
  changed.version = 2;
  writer_->put_assistant(changed);
  EXPECT_EQ(reader_->get_assistant("a-1")->name, "after");
}

TEST_F(SharedAssistantsTest, AnAssistantAnotherReplicaDeletedIsGone) {
  writer_->put_assistant(assistant("doomed"));
  ASSERT_TRUE(reader_->get_assistant("a-1").has_value());
  writer_->delete_assistant("a-1");
  EXPECT_FALSE(reader_->get_assistant("a-1").has_value());
}

TEST_F(SharedAssistantsTest, AnAssistantAnotherReplicaCreatedIsFound) {
  ASSERT_FALSE(reader_->get_assistant("a-1").has_value());
  writer_->put_assistant(assistant("new"));
  EXPECT_TRUE(reader_->get_assistant("a-1").has_value());
}

// ------------------------------------------------------------------ the switch

TEST_F(SharedDatabaseTest, OpenStorageTellsWhetherOtherProcessesMayShareTheDatabase) {
  const Storage storage = open_storage(db_.url(), db_.schema());
  EXPECT_EQ(storage.shared, tollgate::testing::StoreBackend::postgres());
}

}  // namespace
}  // namespace tollgate::server

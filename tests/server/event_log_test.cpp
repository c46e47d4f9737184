#include "server/event_log.h"

#include <gtest/gtest.h>

#include "server/log_stream_body.h"

namespace tollgate::server {
namespace {

LogEntry entry(std::string event, std::string data, std::string id = "") {
  LogEntry e;
  e.event = std::move(event);
  e.data = std::move(data);
  e.id = std::move(id);
  return e;
}

TEST(SseFormatTest, WritesEventDataIdAndBlankLine) {
  EXPECT_EQ(format_sse(entry("metadata", R"({"run_id":"r","attempt":1})", "0")),
            "event: metadata\ndata: {\"run_id\":\"r\",\"attempt\":1}\nid: 0\n\n");
}

TEST(SseFormatTest, OmitsTheIdLineWhenThereIsNoId) {
  EXPECT_EQ(format_sse(entry("values", "{}")), "event: values\ndata: {}\n\n");
}

TEST(EventLogTest, ReadReturnsEntriesFromTheCursorAndClosedOnlyAtTheEnd) {
  EventLog log;
  log.append(entry("a", "1"));
  log.append(entry("b", "2"));
  log.close();
  bool closed = false;
  auto first = log.read(0, 1, &closed);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0]->event, "a");
  EXPECT_FALSE(closed);
  auto rest = log.read(1, 10, &closed);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_TRUE(closed);
}

TEST(EventLogTest, AppendAfterCloseIsIgnored) {
  EventLog log;
  log.close();
  log.append(entry("a", "1"));
  EXPECT_EQ(log.size(), 0u);
}

TEST(EventLogTest, SubscribersAreWokenOnAppendUntilUnsubscribed) {
  EventLog log;
  int wakes = 0;
  int token = log.subscribe([&] { ++wakes; });
  log.append(entry("a", "1"));
  log.unsubscribe(token);
  log.append(entry("b", "2"));
  EXPECT_EQ(wakes, 1);
}

TEST(EventLogTest, ASubscriberWaitingForTheEndIsWokenOnlyWhenTheLogCloses) {
  EventLog log;
  int end_wakes = 0;
  int every_wakes = 0;
  log.subscribe([&] { ++end_wakes; }, /*on_close_only=*/true);
  log.subscribe([&] { ++every_wakes; });
  log.append(entry("a", "1"));
  log.append(entry("b", "2"));
  EXPECT_EQ(end_wakes, 0);
  log.close();
  EXPECT_EQ(end_wakes, 1);
  EXPECT_EQ(every_wakes, 3);
}

TEST(LogStreamBodyTest, ABodyWaitingForTheEndSubscribesForTheCloseOnly) {
  auto log = std::make_shared<EventLog>();
  LogStreamBody::Options options;
  options.until_close_only = true;
  LogStreamBody body(log, options);
  int wakes = 0;
  body.set_waker([&] { ++wakes; });
  log->append(entry("values", "{}", "1"));
  EXPECT_EQ(wakes, 0);
  log->close();
  EXPECT_EQ(wakes, 1);
}

TEST(LogStreamBodyTest, StreamsFromTheStartIndexAndEndsWhenTheLogCloses) {
  auto log = std::make_shared<EventLog>();
  log->append(entry("metadata", "{}", "0"));
  log->append(entry("values", "{}", "1"));
  LogStreamBody::Options options;
  options.start = 1;
  LogStreamBody body(log, options);
  std::string out;
  EXPECT_EQ(body.poll(out), StreamBody::Poll::kWait);
  EXPECT_EQ(out, "event: values\ndata: {}\nid: 1\n\n");
  log->close();
  out.clear();
  EXPECT_EQ(body.poll(out), StreamBody::Poll::kDone);
  EXPECT_TRUE(out.empty());
}

TEST(LogStreamBodyTest, FilterDropsEntries) {
  auto log = std::make_shared<EventLog>();
  log->append(entry("values", "{}"));
  log->append(entry("updates", "{}"));
  LogStreamBody::Options options;
  options.filter = [](const LogEntry& e) { return e.event == "updates"; };
  LogStreamBody body(log, options);
  std::string out;
  body.poll(out);
  EXPECT_EQ(out, "event: updates\ndata: {}\n\n");
}

TEST(LogStreamBodyTest, HeartbeatIsAnSseComment) {
  LogStreamBody body(std::make_shared<EventLog>(), LogStreamBody::Options());
  EXPECT_EQ(body.heartbeat(), ": heartbeat\n\n");
}

}  // namespace
}  // namespace tollgate::server

// The text frame of a thread's stored events (event_batch.h): what is framed reads back as it
// was, whatever bytes its fields hold, and a frame that does not add up is an error.
#include "server/event_batch.h"

#include <gtest/gtest.h>

#include "server/log_entry_testing.h"
#include "tollgate/error.h"

namespace tollgate::server {
namespace {

LogEntry entry(std::int64_t seq, std::string data, std::vector<std::string> ns = {}) {
  LogEntry e;
  e.seq = seq;
  e.event = "messages";
  e.data = std::move(data);
  e.id = "synth:run:" + std::to_string(seq);
  e.channel = "custom:my channel";
  e.ns = std::move(ns);
  return e;
}

std::vector<LogEntry> read_all(const std::string& batch, std::int64_t after = 0) {
  std::vector<LogEntry> out;
  read_event_batch(batch, after, "thread t", out);
  return out;
}

TEST(EventBatchTest, FramedEventsReadBackAsTheyWere) {
  const std::vector<LogEntry> events = {entry(1, "{\"a\":\"x y\\n\"}\n12 3 4\n"),
                                        entry(2, "", {"agent:1", "tools|2"}),
                                        entry(10, std::string(5000, 'z'), {"\xc3\xa9"})};
  std::string batch;
  for (const LogEntry& e : events) append_event_frame(batch, e);
  testing::expect_same_events(read_all(batch), events);
}

TEST(EventBatchTest, EventsAtOrBelowTheGivenSeqAreSkipped) {
  std::string batch;
  for (std::int64_t seq = 1; seq <= 5; ++seq) append_event_frame(batch, entry(seq, "{}"));
  const std::vector<LogEntry> read = read_all(batch, 3);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].seq, 4);
  EXPECT_EQ(read[1].seq, 5);
}

TEST(EventBatchTest, ATruncatedBatchIsAnErrorNamingWhatItHeld) {
  std::string batch;
  append_event_frame(batch, entry(1, "{\"long\":\"enough\"}"));
  for (std::size_t cut : {batch.size() - 1, std::size_t{3}, std::size_t{1}}) {
    try {
      read_all(batch.substr(0, cut));
      ADD_FAILURE() << "no error at " << cut;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "server store: the stored events of thread t are malformed");
    }
  }
}

TEST(EventBatchTest, ANamespaceThatIsNotAListOfStringsIsAnError) {
  const std::string batch = "1 1 2 1 1 5\nx{}1c[1,2]";
  EXPECT_THROW(read_all(batch), Error);
}

}  // namespace
}  // namespace tollgate::server

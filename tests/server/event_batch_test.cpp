// The text frame of a thread's stored events (event_batch.h): what is framed reads back as it
// was, whatever bytes its fields hold, and a frame that does not add up is an error.
#include "server/event_batch.h"

#include <gtest/gtest.h>

#include "server/event_envelope.h"
#include "server/log_entry_testing.h"
#include "server/state_refs.h"
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

// A thread stream event as ThreadStreams makes it: its data is its envelope around `data`.
LogEntry enveloped(std::int64_t seq, std::string id, std::string method, std::string_view data,
                   std::vector<std::string> ns = {}) {
  LogEntry e;
  e.seq = seq;
  e.event = std::move(method);
  e.id = std::move(id);
  e.channel = e.event;
  e.ns = std::move(ns);
  append_envelope_head(e.data, e.id, e.event);
  e.envelope_head = static_cast<std::uint32_t>(e.data.size());
  e.data += data;
  e.data += R"(,"namespace":[],"node":"model","timestamp":1796590993873})";
  const std::size_t tail_at = e.data.size();
  append_envelope_tail(e.data, seq);
  e.envelope_tail = static_cast<std::uint32_t>(e.data.size() - tail_at);
  return e;
}

std::string envelope_batch(const std::vector<LogEntry>& events) {
  std::string batch;
  begin_event_batch(batch, BatchFormat::kEnvelopes);
  for (const LogEntry& e : events) append_event_frame(batch, e, BatchFormat::kEnvelopes);
  return batch;
}

TEST(EventBatchTest, AThreadEventIsKeptWithoutItsEnvelopesHeadAndTailAndReadsBackWhole) {
  const std::vector<LogEntry> events = {
      enveloped(7, "7", "updates", R"({"model":{"messages":["café"]}})"),
      enveloped(8, "synth:run-1:8", "lifecycle", R"({"event":"running"})", {"agent:1"}),
      enveloped(12, "an \"escaped\" id", "caf\xC3\xA9", "[]")};
  const std::string batch = envelope_batch(events);
  EXPECT_EQ(batch.find("event_id"), std::string::npos) << batch;
  EXPECT_EQ(batch.find("\"type\":\"event\""), std::string::npos) << batch;
  std::string plain;
  for (const LogEntry& e : events) append_event_frame(plain, e);
  // Each frame is shorter by its head and tail (and a digit of its data's size, at most), and
  // longer by its flag; the batch by its first line.
  std::size_t left_out = 0;
  for (const LogEntry& e : events) {
    std::string head;
    append_envelope_head(head, e.id, e.event);
    std::string tail;
    append_envelope_tail(tail, e.seq);
    left_out += head.size() + tail.size() - std::string(" 1").size();
  }
  EXPECT_LE(batch.size() + left_out, plain.size() + std::string("e\n").size());
  EXPECT_GE(batch.size() + left_out + events.size(), plain.size() + std::string("e\n").size());
  testing::expect_same_events(read_all(batch), events);
  testing::expect_same_events(read_all(batch, 7), {events[1], events[2]});
}

TEST(EventBatchTest, AThreadEventStoredWithoutItsStateKeepsItsReferenceAtItsPlace) {
  constexpr std::string_view kState = R"({"messages":[{"content":"hi"}]})";
  LogEntry e = enveloped(3, "3", "values", kState);
  StateRef ref;
  ref.graph_id = "agent";
  ref.checkpoint_id = "cp-1";
  const std::size_t at = e.data.find(kState);
  e.stored = stored_with_state_ref(e.data, at, kState.size(), ref);
  const std::vector<LogEntry> read = read_all(envelope_batch({e}));
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].data, e.stored);
  // Written back from the checkpoint, it is the event as it was sent.
  std::vector<LogEntry> resolved = read;
  resolve_state_refs(
      resolved, "t",
      [&](const std::string&, const std::string& graph_id, const std::string& checkpoint_id,
          StateView) -> std::optional<std::string> {
        if (graph_id != "agent" || checkpoint_id != "cp-1") return std::nullopt;
        return std::string(kState);
      });
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_EQ(resolved[0].data, e.data);
}

TEST(EventBatchTest, AnEventWithoutAnEnvelopeIsKeptAsItIs) {
  // Read from a batch written before, an event's envelope is not told apart from its data.
  LogEntry read_before = enveloped(4, "4", "tasks", "{}");
  read_before.envelope_head = 0;
  read_before.envelope_tail = 0;
  const std::vector<LogEntry> events = {entry(1, R"({"a":1})"), read_before};
  const std::string batch = envelope_batch(events);
  EXPECT_NE(batch.find(R"({"event_id":"4")"), std::string::npos);
  EXPECT_EQ(batch.find(" 1\n"), std::string::npos) << batch;
  testing::expect_same_events(read_all(batch), events);
}

TEST(EventBatchTest, AThreadBatchWrittenBeforeEnvelopesWereLeftOutReadsAsItWas) {
  const LogEntry e = enveloped(2, "2", "updates", "null");
  std::string batch;
  append_event_frame(batch, e);  // as schema 13 wrote it
  testing::expect_same_events(read_all(batch), {e});
}

TEST(EventBatchTest, AnEnvelopeBatchWithABadFlagOrReferenceIsAnError) {
  const std::string good = envelope_batch({enveloped(1, "1", "values", "{}")});
  ASSERT_NE(good.find(" 1\n"), std::string::npos);
  std::string bad_flag = good;
  bad_flag.replace(bad_flag.find(" 1\n"), 3, " 2\n");
  EXPECT_THROW(read_all(bad_flag), Error);
  std::string no_flag = good;
  no_flag.replace(no_flag.find(" 1\n"), 3, "\n");
  EXPECT_THROW(read_all(no_flag), Error);
  // Kept without its envelope, a data that starts like a reference but is none.
  const std::string bad_ref = "e\n1 6 4 1 6 0 1\nvalues\x01cp\x011values";
  EXPECT_THROW(read_all(bad_ref), Error);
}

}  // namespace
}  // namespace tollgate::server

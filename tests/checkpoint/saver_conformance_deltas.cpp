// Delta storage, as every saver must do it: a list channel given as a ListDelta costs the
// same bytes per step at message 100 and at message 10,000, and every checkpoint of the
// history (including forks) reads back exactly.
#include <algorithm>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/saver_conformance.h"
#include "checkpoint/saver_test_util.h"

namespace tollgate::testing {
namespace {

Json prefix(const Json& list, std::size_t n) {
  return Json(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(n));
}

Json messages_at(Saver& saver, const CheckpointConfig& config) {
  auto tuple = saver.get_tuple(config);
  if (!tuple) return Json("missing");
  return *tuple->checkpoint.channel_values.at("messages");
}

TEST_P(SaverConformanceTest, EveryCheckpointOfADeltaChannelReconstructsExactly) {
  MessageThread thread(*saver_, "t");
  std::vector<CheckpointConfig> configs;
  for (int i = 0; i < 300; ++i) configs.push_back(thread.append(message(i)));
  for (std::size_t i = 0; i < configs.size(); ++i) {
    ASSERT_EQ(messages_at(*saver_, configs[i]), prefix(thread.messages(), i + 1)) << "step " << i;
  }
}

TEST_P(SaverConformanceTest, ACheckpointDeepInALongHistoryReconstructsExactly) {
  MessageThread thread(*saver_, "t");
  std::vector<CheckpointConfig> configs;
  for (int i = 0; i < 3000; ++i) configs.push_back(thread.append(message(i)));
  for (std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{1234}, std::size_t{2047},
                        std::size_t{2048}, std::size_t{2999}}) {
    EXPECT_EQ(messages_at(*saver_, configs[i]), prefix(thread.messages(), i + 1)) << "step " << i;
  }
  ListQuery query;
  query.thread_id = "t";
  query.before = configs[1500].checkpoint_id;
  query.limit = 1;
  auto listed = saver_->list(query);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(*listed[0].checkpoint.channel_values.at("messages"), prefix(thread.messages(), 1500));
}

TEST_P(SaverConformanceTest, ListSharesOneListAmongCheckpointsThatDidNotChangeIt) {
  MessageThread thread(*saver_, "t");
  for (int i = 0; i < 20; ++i) thread.append(message(i));
  thread.touch();
  thread.touch();
  ListQuery query;
  query.thread_id = "t";
  query.limit = 3;
  const auto listed = saver_->list(query);
  ASSERT_EQ(listed.size(), 3u);
  const JsonPtr& newest = listed[0].checkpoint.channel_values.at("messages");
  EXPECT_EQ(*newest, thread.messages());
  EXPECT_EQ(listed[1].checkpoint.channel_values.at("messages").get(), newest.get());
  EXPECT_EQ(listed[2].checkpoint.channel_values.at("messages").get(), newest.get());
}

TEST_P(SaverConformanceTest, ForkReconstructsBothBranches) {
  MessageThread main(*saver_, "t");
  std::vector<CheckpointConfig> configs;
  for (int i = 0; i < 60; ++i) configs.push_back(main.append(message(i)));
  const Json main_messages = main.messages();

  MessageThread fork(*saver_, "t");
  fork.fork_from(configs[20], prefix(main_messages, 21));
  CheckpointConfig fork_tip;
  // The first fork step replaces the last message (an edit by id), then appends.
  fork_tip = fork.step(20, message(20, "fork"));
  for (int i = 21; i < 80; ++i) fork_tip = fork.append(message(i, "fork"));

  EXPECT_EQ(messages_at(*saver_, configs.back()), main_messages);
  EXPECT_EQ(messages_at(*saver_, configs[20]), prefix(main_messages, 21));
  EXPECT_EQ(messages_at(*saver_, fork_tip), fork.messages());
  EXPECT_EQ(fork.messages().size(), 80u);
  EXPECT_EQ(fork.messages()[19], main_messages[19]);
  EXPECT_EQ(fork.messages()[20], message(20, "fork"));
  EXPECT_EQ(messages_at(*saver_, {"t", "", ""}), fork.messages());  // the fork is the latest
}

TEST_P(SaverConformanceTest, ADeltaThatDoesNotFitItsParentIsStoredWhole) {
  MessageThread thread(*saver_, "t");
  CheckpointConfig parent = thread.append(message(0));
  Checkpoint checkpoint =
      make_checkpoint(1, {{"messages", Json::array({"x", "y", "z"})}}, {{"messages", 5}});
  // keep=2 exceeds the parent's single message: the saver must not trust it.
  CheckpointConfig config = saver_->put(parent, checkpoint, Json::object(), {{"messages", 5}},
                                        {{"messages", ListDelta{2, Json::array({"z"})}}});
  EXPECT_EQ(messages_at(*saver_, config), Json::array({"x", "y", "z"}));
}

TEST_P(SaverConformanceTest, InterleavedThreadsEachReconstructExactly) {
  // Puts of several threads in turn: each step's parent is its own thread's last put, never
  // the saver's last one.
  std::vector<MessageThread> threads;
  for (const char* id : {"a", "b", "c"}) threads.emplace_back(*saver_, id);
  std::vector<std::vector<CheckpointConfig>> configs(threads.size());
  for (int i = 0; i < 40; ++i) {
    for (std::size_t t = 0; t < threads.size(); ++t) {
      configs[t].push_back(threads[t].append(message(i, std::to_string(t))));
    }
  }
  for (std::size_t t = 0; t < threads.size(); ++t) {
    for (std::size_t i = 0; i < configs[t].size(); ++i) {
      ASSERT_EQ(messages_at(*saver_, configs[t][i]), prefix(threads[t].messages(), i + 1))
          << "thread " << t << " step " << i;
    }
  }
}

TEST_P(SaverConformanceTest, AStepAfterItsThreadWasDeletedIsStoredWhole) {
  MessageThread thread(*saver_, "t");
  thread.append(message(0, std::string(2000, 'x')));  // a long first message: room for deltas
  thread.append(message(1));                          // a delta of the first
  saver_->delete_thread("t");
  // Its parent is gone: the step cannot be stored as a delta of it.
  const CheckpointConfig config = thread.append(message(5));
  EXPECT_EQ(messages_at(*saver_, config), thread.messages());
}

TEST_P(SaverConformanceTest, AStepWhoseParentIsNotTheThreadsLastPutIsADeltaOfItsParent) {
  MessageThread main(*saver_, "t");
  const CheckpointConfig first = main.append(message(0));
  main.step(0, message(1, "edited"));  // the thread's last put no longer starts with message 0
  MessageThread branch(*saver_, "t");
  branch.fork_from(first, Json::array({message(0)}));
  const CheckpointConfig config = branch.append(message(2));
  EXPECT_EQ(messages_at(*saver_, config), Json::array({message(0), message(2)}));
}

TEST_P(SaverConformanceTest, ThreadsPutFromManyThreadsAtOnceEachReconstructExactly) {
  constexpr int kThreads = 6;
  constexpr int kSteps = 30;
  std::vector<MessageThread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(*saver_, "t" + std::to_string(t));
  std::vector<std::vector<CheckpointConfig>> configs(kThreads);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < kSteps; ++i) {
        configs[t].push_back(threads[t].append(message(i, std::to_string(t))));
        if (i % 7 == 6) threads[t].touch();
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  for (int t = 0; t < kThreads; ++t) {
    for (std::size_t i = 0; i < configs[t].size(); ++i) {
      ASSERT_EQ(messages_at(*saver_, configs[t][i]), prefix(threads[t].messages(), i + 1))
          << "thread " << t << " step " << i;
    }
  }
}

TEST_P(SaverConformanceTest, BytesWrittenPerStepStayFlatAsTheThreadGrows) {
  constexpr int kSteps = 10000;
  MessageThread thread(*saver_, "t");
  std::vector<std::uint64_t> step_bytes;
  std::uint64_t message_bytes = 0;
  step_bytes.reserve(kSteps);
  std::uint64_t before = factory_->bytes_written(*saver_);
  for (int i = 0; i < kSteps; ++i) {
    Json item = message(i);
    message_bytes += Json::to_msgpack(item).size();
    thread.append(item);
    const std::uint64_t after = factory_->bytes_written(*saver_);
    step_bytes.push_back(after - before);
    before = after;
  }
  auto median = [&](int from, int to) {
    std::vector<std::uint64_t> window(step_bytes.begin() + from, step_bytes.begin() + to);
    std::nth_element(window.begin(), window.begin() + window.size() / 2, window.end());
    return window[window.size() / 2];
  };
  const std::uint64_t early = median(90, 111), late = median(kSteps - 21, kSteps);
  RecordProperty("bytes_per_step_at_100", std::to_string(early));
  RecordProperty("bytes_per_step_at_10000", std::to_string(late));
  // A typical step stores one message plus a constant header, at 100 and at 10,000 messages
  // (numbers in the message, metadata and references gain a few bytes).
  EXPECT_LE(late, early + early / 5) << "early " << early << " late " << late;
  // Occasional full copies stay amortised O(1): everything stored is a small multiple of the
  // messages themselves (deltas + geometrically spaced snapshots) plus the per-step header.
  const std::uint64_t total =
      std::accumulate(step_bytes.begin(), step_bytes.end(), std::uint64_t{0});
  EXPECT_LE(total, 4 * message_bytes + kSteps * (early + early / 5))
      << "messages " << message_bytes;
  EXPECT_EQ(messages_at(*saver_, {"t", "", ""}), thread.messages());
}

}  // namespace
}  // namespace tollgate::testing

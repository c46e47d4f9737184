// ReviewFeed: the notification events of the last minutes, in memory, for GET /reviews/stream.
// One bounded list for every subscriber (nothing is kept per subscriber but its cursor); a
// subscriber that falls more than kKept events behind skips the ones it missed. The webhook
// queue, not the feed, is the durable record.
//
// ReviewFeedBody streams the feed as SSE from the moment it is opened (or from after the event
// named by Last-Event-ID, while the feed still holds it), each event passing `visible`.
//
// Thread-safety: every ReviewFeed method may be called from any thread; one mutex guards the
// events, the sequence counter and the subscribers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/http_types.h"
#include "server/replica_store.h"
#include "server/webhook_queue.h"

namespace tollgate::server {

struct FeedEntry {
  std::int64_t seq = 0;
  NotificationEvent event;
};
using FeedEntryPtr = std::shared_ptr<const FeedEntry>;

class ReviewFeed {
 public:
  static constexpr std::size_t kKept = 1024;

  // Appends and wakes the subscribers.
  void publish(NotificationEvent event);
  // Appends an event numbered elsewhere (several replicas: the store numbers them, FeedFollower);
  // one numbered at or below the last is already here and ignored.
  void publish(NotificationEvent event, std::int64_t seq);
  // Entries with seq > `after`, oldest first.
  std::vector<FeedEntryPtr> read_after(std::int64_t after) const;
  // The seq of the newest entry (0: none yet).
  std::int64_t last_seq() const;

  int subscribe(std::function<void()> wake);
  void unsubscribe(int token);

 private:
  mutable std::mutex mutex_;
  std::deque<FeedEntryPtr> entries_;
  std::int64_t last_seq_ = 0;
  int next_token_ = 1;
  std::map<int, std::function<void()>> subscribers_;
};

// Several replicas share one review stream: each replica's events are appended to the store
// (ReplicaStore::append_feed, through Notifications::set_feed_relay), and every replica's feed
// is filled from there, in the store's order, by its FeedFollower — so an event id
// (Last-Event-ID) means the same event on every replica.
//
// Thread-safety: every method may be called from any thread; one catch-up runs at a time.
class FeedFollower {
 public:
  FeedFollower(ReplicaStore& store, std::shared_ptr<ReviewFeed> feed);
  // Starts after what is stored now (a new replica tells what happens from its start on).
  void start();
  // Publishes what was appended since: first what this replica's store appended
  // (ReplicaStore::take_own_feed) as far as it continues what was published, then what the
  // store holds after that, unless `told` (a notification's last number, 0 if none) is
  // published already. Now and then forgets what is older than the feed keeps.
  void catch_up(std::int64_t told = 0);

 private:
  ReplicaStore& store_;
  std::shared_ptr<ReviewFeed> feed_;
  std::mutex mutex_;  // guards last_seq_, next_prune_; one catch-up at a time
  std::int64_t last_seq_ = 0;
  std::int64_t next_prune_ = 0;
};

// An event as the feed's table keeps it, and back (nullopt: not one).
std::string feed_event_text(const NotificationEvent& event);
std::optional<NotificationEvent> feed_event_of(const std::string& text);

class ReviewFeedBody : public StreamBody {
 public:
  // `after`: the seq of the last event the client has (ReviewFeed::last_seq() for "from now").
  ReviewFeedBody(std::shared_ptr<ReviewFeed> feed, std::int64_t after,
                 std::function<bool(const NotificationEvent&)> visible);
  ~ReviewFeedBody() override;

  bool head_ready(HttpResponse&) override { return true; }
  Poll poll(std::string& out) override;
  void set_waker(std::function<void()> wake) override;
  std::string heartbeat() const override { return ": heartbeat\n\n"; }

 private:
  std::shared_ptr<ReviewFeed> feed_;
  std::int64_t cursor_;
  std::function<bool(const NotificationEvent&)> visible_;
  int token_ = 0;
};

}  // namespace tollgate::server

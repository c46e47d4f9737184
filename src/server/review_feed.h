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
#include <string>
#include <vector>

#include "server/http_types.h"
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

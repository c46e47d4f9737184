#include "server/review_feed.h"

#include "server/event_log.h"

namespace tollgate::server {

void ReviewFeed::publish(NotificationEvent event) {
  std::vector<std::function<void()>> wakers;
  {
    std::lock_guard lock(mutex_);
    entries_.push_back(std::make_shared<const FeedEntry>(FeedEntry{++last_seq_, std::move(event)}));
    if (entries_.size() > kKept) entries_.pop_front();
    for (const auto& [token, wake] : subscribers_) wakers.push_back(wake);
  }
  for (const auto& wake : wakers) wake();
}

std::vector<FeedEntryPtr> ReviewFeed::read_after(std::int64_t after) const {
  std::lock_guard lock(mutex_);
  std::vector<FeedEntryPtr> out;
  for (const FeedEntryPtr& entry : entries_) {
    if (entry->seq > after) out.push_back(entry);
  }
  return out;
}

std::int64_t ReviewFeed::last_seq() const {
  std::lock_guard lock(mutex_);
  return last_seq_;
}

int ReviewFeed::subscribe(std::function<void()> wake) {
  std::lock_guard lock(mutex_);
  const int token = next_token_++;
  subscribers_[token] = std::move(wake);
  return token;
}

void ReviewFeed::unsubscribe(int token) {
  std::lock_guard lock(mutex_);
  subscribers_.erase(token);
}

ReviewFeedBody::ReviewFeedBody(std::shared_ptr<ReviewFeed> feed, std::int64_t after,
                               std::function<bool(const NotificationEvent&)> visible)
    : feed_(std::move(feed)), cursor_(after), visible_(std::move(visible)) {}

ReviewFeedBody::~ReviewFeedBody() {
  if (token_ != 0) feed_->unsubscribe(token_);
}

StreamBody::Poll ReviewFeedBody::poll(std::string& out) {
  for (const FeedEntryPtr& entry : feed_->read_after(cursor_)) {
    cursor_ = entry->seq;
    if (visible_ && !visible_(entry->event)) continue;
    LogEntry sse;
    sse.event = entry->event.type;
    sse.data = entry->event.to_json().dump();
    sse.id = std::to_string(entry->seq);
    out += format_sse(sse);
  }
  return Poll::kWait;
}

void ReviewFeedBody::set_waker(std::function<void()> wake) {
  token_ = feed_->subscribe(std::move(wake));
}

}  // namespace tollgate::server

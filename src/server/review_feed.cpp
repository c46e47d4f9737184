#include "server/review_feed.h"

#include "server/event_log.h"
#include "tollgate/clock.h"

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

void ReviewFeed::publish(NotificationEvent event, std::int64_t seq) {
  std::vector<std::function<void()>> wakers;
  {
    std::lock_guard lock(mutex_);
    if (seq <= last_seq_) return;
    last_seq_ = seq;
    entries_.push_back(std::make_shared<const FeedEntry>(FeedEntry{seq, std::move(event)}));
    if (entries_.size() > kKept) entries_.pop_front();
    for (const auto& [token, wake] : subscribers_) wakers.push_back(wake);
  }
  for (const auto& wake : wakers) wake();
}

std::string feed_event_text(const NotificationEvent& event) {
  return Json{{"id", event.id},
              {"type", event.type},
              {"created_at", event.created_at},
              {"data", event.data}}
      .dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<NotificationEvent> feed_event_of(const std::string& text) {
  const Json json = Json::parse(text, nullptr, false);
  if (!json.is_object() || !json.contains("id") || !json["id"].is_string() ||
      !json.contains("type") || !json["type"].is_string()) {
    return std::nullopt;
  }
  NotificationEvent event;
  event.id = json["id"].get<std::string>();
  event.type = json["type"].get<std::string>();
  event.created_at = json.value("created_at", std::int64_t{0});
  event.data = json.value("data", Json::object());
  return event;
}

namespace {

constexpr std::int64_t kFeedKeptMillis = 10 * 60 * 1000;
constexpr std::int64_t kPruneEveryMillis = 60 * 1000;
constexpr std::size_t kReadAtOnce = 256;

}  // namespace

FeedFollower::FeedFollower(ReplicaStore& store, std::shared_ptr<ReviewFeed> feed)
    : store_(store), feed_(std::move(feed)) {}

void FeedFollower::start() {
  std::lock_guard lock(mutex_);
  last_seq_ = store_.last_feed_seq();
}

void FeedFollower::catch_up(std::int64_t told) {
  std::lock_guard lock(mutex_);
  for (auto& [seq, text] : store_.take_own_feed()) {
    if (seq <= last_seq_) continue;   // read back already
    if (seq != last_seq_ + 1) break;  // another replica's come first: read them all back
    last_seq_ = seq;
    if (auto event = feed_event_of(text)) feed_->publish(std::move(*event), seq);
  }
  for (bool read = told == 0 || told > last_seq_; read;) {
    auto rows = store_.feed_after(last_seq_, kReadAtOnce);
    for (auto& [seq, text] : rows) {
      last_seq_ = seq;
      if (auto event = feed_event_of(text)) feed_->publish(std::move(*event), seq);
    }
    read = rows.size() == kReadAtOnce;
  }
  const std::int64_t now = now_millis();
  if (now >= next_prune_) {
    next_prune_ = now + kPruneEveryMillis;
    store_.prune_feed(now - kFeedKeptMillis);
  }
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

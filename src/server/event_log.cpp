#include "server/event_log.h"

namespace tollgate::server {

std::string format_sse(const LogEntry& entry) {
  std::string out;
  out.reserve(entry.event.size() + entry.data.size() + entry.id.size() + 24);
  out += "event: ";
  out += entry.event;
  out += "\ndata: ";
  out += entry.data;
  out += '\n';
  if (!entry.id.empty()) {
    out += "id: ";
    out += entry.id;
    out += '\n';
  }
  out += '\n';
  return out;
}

void EventLog::append(LogEntry entry) {
  append(std::make_shared<const LogEntry>(std::move(entry)));
}

void EventLog::append(LogEntryPtr entry) {
  std::unique_lock lock(mutex_);
  if (closed_) return;
  data_bytes_ += entry->data.size();
  entries_.push_back(std::move(entry));
  wake_all(lock, /*closing=*/false);
}

std::size_t EventLog::data_bytes() const {
  std::lock_guard lock(mutex_);
  return data_bytes_;
}

void EventLog::close() {
  std::unique_lock lock(mutex_);
  if (closed_) return;
  closed_ = true;
  wake_all(lock, /*closing=*/true);
}

bool EventLog::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

std::size_t EventLog::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::vector<LogEntryPtr> EventLog::read(std::size_t from, std::size_t max, bool* closed) const {
  std::lock_guard lock(mutex_);
  std::vector<LogEntryPtr> out;
  for (std::size_t i = from; i < entries_.size() && out.size() < max; ++i) {
    out.push_back(entries_[i]);
  }
  if (closed) *closed = closed_ && from + out.size() >= entries_.size();
  return out;
}

void EventLog::set_rejection(int status, std::string message) {
  std::lock_guard lock(mutex_);
  rejection_ = std::make_pair(status, std::move(message));
}

std::optional<std::pair<int, std::string>> EventLog::rejection() const {
  std::lock_guard lock(mutex_);
  return rejection_;
}

int EventLog::subscribe(std::function<void()> wake, bool on_close_only) {
  std::lock_guard lock(mutex_);
  int token = next_token_++;
  subscribers_.emplace(token, Subscriber{std::move(wake), on_close_only});
  return token;
}

void EventLog::unsubscribe(int token) {
  std::lock_guard lock(mutex_);
  subscribers_.erase(token);
}

void EventLog::wake_all(std::unique_lock<std::mutex>& lock, bool closing) {
  // Wakers only post to an executor, so calling them under the lock cannot deadlock; copying
  // them out would race with unsubscribe of a destroyed reader.
  for (auto& [token, subscriber] : subscribers_) {
    if (closing || !subscriber.on_close_only) subscriber.wake();
  }
  lock.unlock();
}

}  // namespace tollgate::server

#include "server/log_stream_body.h"

namespace tollgate::server {

LogStreamBody::LogStreamBody(std::shared_ptr<EventLog> log, Options options)
    : log_(std::move(log)), options_(std::move(options)), cursor_(options_.start) {}

LogStreamBody::~LogStreamBody() {
  if (token_ != 0) log_->unsubscribe(token_);
}

bool LogStreamBody::head_ready(HttpResponse& head) {
  return !options_.head_gate || options_.head_gate(head);
}

StreamBody::Poll LogStreamBody::poll(std::string& out) {
  bool closed = false;
  std::vector<LogEntryPtr> entries = log_->read(cursor_, 256, &closed);
  cursor_ += entries.size();
  for (const LogEntryPtr& entry : entries) {
    if (options_.filter && !options_.filter(*entry)) continue;
    out += format_sse(*entry);
  }
  if (closed) return Poll::kDone;
  // More may be waiting beyond this batch: ask to be polled again.
  if (entries.size() == 256) return Poll::kData;
  return Poll::kWait;
}

void LogStreamBody::set_waker(std::function<void()> wake) {
  token_ = log_->subscribe(std::move(wake), options_.until_close_only);
}

void LogStreamBody::on_disconnect() {
  if (options_.on_disconnect) options_.on_disconnect();
}

std::string LogStreamBody::heartbeat() const {
  return options_.heartbeats ? ": heartbeat\n\n" : std::string();
}

}  // namespace tollgate::server

#include "models/stream_parsers.h"

namespace tollgate::models {

void LineSplitter::feed(std::string_view piece) {
  pending_.append(piece);
  size_t start = 0;
  for (;;) {
    size_t nl = pending_.find('\n', start);
    if (nl == std::string::npos) break;
    size_t end = nl;
    if (end > start && pending_[end - 1] == '\r') --end;
    on_line_(std::string_view(pending_).substr(start, end - start));
    start = nl + 1;
  }
  pending_.erase(0, start);
}

void LineSplitter::finish() {
  if (pending_.empty()) return;
  std::string last;
  last.swap(pending_);
  if (!last.empty() && last.back() == '\r') last.pop_back();
  on_line_(last);
}

SseParser::SseParser(EventHandler on_event)
    : on_event_(std::move(on_event)), lines_([this](std::string_view line) { on_line(line); }) {}

void SseParser::finish() {
  lines_.finish();
  dispatch();
}

void SseParser::on_line(std::string_view line) {
  if (line.empty()) {
    dispatch();
    return;
  }
  if (line.front() == ':') return;  // comment / keep-alive
  std::string_view field = line;
  std::string_view value;
  if (auto colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "event") {
    event_ = value;
  } else if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  }
  // "id" and "retry" are irrelevant for one-shot model streams.
}

void SseParser::dispatch() {
  if (has_data_) on_event_(event_.empty() ? "message" : event_, data_);
  event_.clear();
  data_.clear();
  has_data_ = false;
}

}  // namespace tollgate::models

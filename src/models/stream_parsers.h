// Incremental parsers for the two streaming wire formats the providers use: Server-Sent Events
// (OpenAI, Anthropic, Gemini) and newline-delimited JSON (Ollama). Both accept the body in
// arbitrary pieces, as the network delivers it. Not thread-safe: one parser per stream.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace tollgate::models {

// Splits text into lines ("\n" or "\r\n"), calling on_line for each complete line.
class LineSplitter {
 public:
  explicit LineSplitter(std::function<void(std::string_view line)> on_line)
      : on_line_(std::move(on_line)) {}
  void feed(std::string_view piece);
  // Delivers a last line that had no terminating newline.
  void finish();

 private:
  std::function<void(std::string_view)> on_line_;
  std::string pending_;
};

// Parses an SSE stream (WHATWG rules: "event:", "data:" lines joined with "\n", blank line
// dispatches, ":" comments ignored). on_event gets the event name ("message" when absent) and
// the data of each dispatched event.
class SseParser {
 public:
  using EventHandler = std::function<void(const std::string& event, const std::string& data)>;
  explicit SseParser(EventHandler on_event);
  void feed(std::string_view piece) { lines_.feed(piece); }
  // Dispatches an event left without its closing blank line when the stream ended.
  void finish();

 private:
  void on_line(std::string_view line);
  void dispatch();

  EventHandler on_event_;
  LineSplitter lines_;
  std::string event_;
  std::string data_;
  bool has_data_ = false;
};

}  // namespace tollgate::models

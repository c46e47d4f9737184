#include "models/stream_parsers.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace tollgate::models {
namespace {

using Events = std::vector<std::pair<std::string, std::string>>;

Events parse_in_pieces(const std::string& text, size_t piece_size) {
  Events events;
  SseParser parser([&](const std::string& e, const std::string& d) { events.emplace_back(e, d); });
  for (size_t i = 0; i < text.size(); i += piece_size)
    parser.feed(std::string_view(text).substr(i, piece_size));
  parser.finish();
  return events;
}

TEST(SseParserTest, DispatchesEventsSplitAcrossArbitraryPieces) {
  const std::string text = "event: a\ndata: {\"x\":1}\n\nevent: b\ndata: two\n\n";
  const Events expected = {{"a", "{\"x\":1}"}, {"b", "two"}};
  for (size_t size : {1u, 2u, 3u, 7u, 100u})
    EXPECT_EQ(parse_in_pieces(text, size), expected) << size;
}

TEST(SseParserTest, DefaultsEventNameToMessageAndJoinsDataLines) {
  EXPECT_EQ(parse_in_pieces("data: one\ndata: two\n\n", 4), (Events{{"message", "one\ntwo"}}));
}

TEST(SseParserTest, IgnoresCommentsAndHandlesCrLf) {
  EXPECT_EQ(parse_in_pieces(": keep-alive\r\n\r\ndata:x\r\n\r\n", 5), (Events{{"message", "x"}}));
}

TEST(SseParserTest, DispatchesALastEventWithoutBlankLineAtFinish) {
  EXPECT_EQ(parse_in_pieces("data: [DONE]", 3), (Events{{"message", "[DONE]"}}));
}

TEST(LineSplitterTest, SplitsNdjsonLinesAcrossPieces) {
  std::vector<std::string> lines;
  LineSplitter splitter([&](std::string_view line) { lines.emplace_back(line); });
  splitter.feed("{\"a\":1}\n{\"b\"");
  splitter.feed(":2}\r\n{\"c\":3}");
  splitter.finish();
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
}

}  // namespace
}  // namespace tollgate::models

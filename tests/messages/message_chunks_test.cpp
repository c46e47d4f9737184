// Adding streamed AI message chunks and finishing them into a message.
#include <gtest/gtest.h>

#include <fstream>

#include "tollgate/messages.h"

namespace tollgate {
namespace {

Json chunk(const char* text) {
  return Json::parse(text);
}

Json sum(const std::vector<Json>& chunks) {
  Json total;
  for (const auto& c : chunks) total = merge_message_chunks(total, c);
  return total;
}

TEST(MessageChunks, StringContentIsConcatenated) {
  Json merged = sum({chunk(R"({"type":"AIMessageChunk","id":"run-1","content":"Hel"})"),
                     chunk(R"({"type":"AIMessageChunk","id":"run-1","content":"lo"})")});
  EXPECT_EQ(merged["content"], "Hello");
  EXPECT_EQ(merged["id"], "run-1");
}

TEST(MessageChunks, ProviderIdReplacesRunPlaceholder) {
  Json merged = sum({chunk(R"({"type":"ai","id":"run-1","content":"a"})"),
                     chunk(R"({"type":"ai","id":"chatcmpl-9","content":"b"})")});
  EXPECT_EQ(merged["id"], "chatcmpl-9");
}

TEST(MessageChunks, ContentBlocksWithTheSameIndexAreJoined) {
  Json merged =
      sum({chunk(R"({"type":"ai","content":[{"type":"text","text":"Hi","index":0}]})"),
           chunk(R"({"type":"ai","content":[{"type":"text","text":" there","index":0}]})"),
           chunk(R"({"type":"ai","content":[{"type":"tool_use","id":"t","index":1}]})")});
  EXPECT_EQ(merged["content"], Json::parse(R"([{"type":"text","text":"Hi there","index":0},
      {"type":"tool_use","id":"t","index":1}])"));
}

TEST(MessageChunks, StringAfterBlocksExtendsTheLastTextBlock) {
  Json merged = sum({chunk(R"({"type":"ai","content":[{"type":"text","text":"a"}]})"),
                     chunk(R"({"type":"ai","content":"b"})")});
  EXPECT_EQ(merged["content"], Json::parse(R"([{"type":"text","text":"ab"}])"));
}

TEST(MessageChunks, ToolCallChunksAreJoinedPerIndex) {
  Json merged = sum(
      {chunk(
           R"({"type":"ai","content":"","tool_call_chunks":[{"index":0,"id":"c1","name":"search","args":"{\"q\":"}]})"),
       chunk(
           R"({"type":"ai","content":"","tool_call_chunks":[{"index":1,"id":"c2","name":"now","args":""}]})"),
       chunk(
           R"({"type":"ai","content":"","tool_call_chunks":[{"index":0,"id":null,"name":null,"args":"\"tea\"}"}]})")});
  EXPECT_EQ(merged["tool_call_chunks"], Json::parse(R"([
      {"index":0,"id":"c1","name":"search","args":"{\"q\":\"tea\"}"},
      {"index":1,"id":"c2","name":"now","args":""}])"));
}

TEST(MessageChunks, UsageTokensAddUp) {
  Json merged = sum(
      {chunk(
           R"({"type":"ai","content":"","usage_metadata":{"input_tokens":10,"output_tokens":1,"total_tokens":11}})"),
       chunk(
           R"({"type":"ai","content":"","usage_metadata":{"input_tokens":0,"output_tokens":4,"total_tokens":4}})")});
  EXPECT_EQ(merged["usage_metadata"],
            Json::parse(R"({"input_tokens":10,"output_tokens":5,"total_tokens":15})"));
}

TEST(MessageChunks, MetadataMergesWithoutRepeatingEqualStrings) {
  Json merged = sum(
      {chunk(R"({"type":"ai","content":"","response_metadata":{"model_name":"gpt"}})"),
       chunk(
           R"({"type":"ai","content":"","response_metadata":{"model_name":"gpt","finish_reason":"stop"}})")});
  EXPECT_EQ(merged["response_metadata"],
            Json::parse(R"({"model_name":"gpt","finish_reason":"stop"})"));
}

TEST(MessageChunks, NullSideIsTheOtherSide) {
  Json c = chunk(R"({"type":"ai","content":"x"})");
  EXPECT_EQ(merge_message_chunks(Json(), c), c);
  EXPECT_EQ(merge_message_chunks(c, Json()), c);
}

TEST(MessageFromChunk, ParsesJoinedToolArguments) {
  Json merged = sum(
      {chunk(
           R"({"type":"AIMessageChunk","id":"run-1","content":"","tool_call_chunks":[{"index":0,"id":"c1","name":"search","args":"{\"q\":"}]})"),
       chunk(
           R"({"type":"AIMessageChunk","id":"run-1","content":"","tool_call_chunks":[{"index":0,"args":"\"tea\"}"}]})")});
  Json message = message_from_chunk(merged);
  EXPECT_EQ(message["type"], "ai");
  EXPECT_FALSE(message.contains("tool_call_chunks"));
  EXPECT_EQ(message["tool_calls"],
            Json::parse(R"([{"id":"c1","name":"search","args":{"q":"tea"},"type":"tool_call"}])"));
  EXPECT_EQ(message["invalid_tool_calls"], Json::array());
  EXPECT_EQ(message["additional_kwargs"], Json::object());
}

TEST(MessageFromChunk, EmptyArgumentsMeanNoArguments) {
  Json message = message_from_chunk(chunk(
      R"({"type":"ai","id":"a","content":"","tool_call_chunks":[{"index":0,"id":"c","name":"now","args":""}]})"));
  EXPECT_EQ(message["tool_calls"][0]["args"], Json::object());
}

TEST(MessageFromChunk, TruncatedArgumentsBecomeAnInvalidToolCall) {
  Json message = message_from_chunk(chunk(
      R"({"type":"ai","id":"a","content":"","tool_call_chunks":[{"index":0,"id":"c","name":"f","args":"{\"a\":"}]})"));
  EXPECT_EQ(message["tool_calls"], Json::array());
  EXPECT_EQ(message["invalid_tool_calls"], Json::parse(R"([{"id":"c","name":"f","args":"{\"a\":",
      "error":"Malformed args.","type":"invalid_tool_call"}])"));
}

TEST(MessageFromChunk, ChunkWithoutIdGetsOne) {
  Json message = message_from_chunk(chunk(R"({"type":"AIMessageChunk","content":"hi"})"));
  EXPECT_FALSE(message_id(message).empty());
  EXPECT_EQ(message["content"], "hi");
}

}  // namespace
}  // namespace tollgate

namespace tollgate {
namespace {

Json wire_data() {
  std::ifstream in(std::string(TOLLGATE_SOURCE_DIR) +
                   "/tests/messages/data/agent_server_messages.json");
  return Json::parse(in);
}

TEST(MessageChunks, StreamingChunksShowPartiallyParsedArguments) {
  Json merged = sum({chunk(
      R"({"type":"ai","content":"","tool_call_chunks":[{"index":0,"id":"c1","name":"rm","args":"{\"path\":\"/tm"}]})")});
  merged = merge_message_chunks(merged, chunk(R"({"type":"ai","content":""})"));
  EXPECT_EQ(merged["tool_calls"],
            Json::parse(R"([{"name":"rm","args":{"path":"/tm"},"id":"c1","type":"tool_call"}])"));
  EXPECT_EQ(merged["invalid_tool_calls"], Json::array());
}

TEST(MessageChunks, StaleChunkLevelToolCallsAreReplacedByTheJoinedOnes) {
  // Each wire chunk carries its own view (a lone args fragment shows as "Malformed args.");
  // the sum is re-derived from the joined tool_call_chunks.
  Json data = wire_data();
  Json merged = sum(data["stream_chunks"].get<std::vector<Json>>());
  EXPECT_EQ(
      merged["tool_calls"],
      Json::parse(
          R"([{"name":"delete_file","args":{"path":"/tmp/x"},"id":"call_9","type":"tool_call"}])"));
  EXPECT_EQ(merged["invalid_tool_calls"], Json::array());
}

TEST(MessageFromChunk, WireStreamSumsToTheFinalMessage) {
  Json data = wire_data();
  Json message = message_from_chunk(sum(data["stream_chunks"].get<std::vector<Json>>()));
  const Json& final_message = data["final"];
  for (const char* field : {"id", "type", "content", "tool_calls", "invalid_tool_calls",
                            "response_metadata", "additional_kwargs"}) {
    EXPECT_EQ(message[field], final_message[field]) << field;
  }
  for (const char* count : {"input_tokens", "output_tokens", "total_tokens"}) {
    EXPECT_EQ(message["usage_metadata"][count], final_message["usage_metadata"][count]) << count;
  }
}

TEST(NormalizeMessageOnWireData, EveryObservedMessageRoundTripsUnchanged) {
  Json data = wire_data();
  ASSERT_GE(data["messages"].size(), 10u);
  for (const auto& message : data["messages"]) {
    EXPECT_EQ(normalize_message(message), message) << message.dump();
  }
}

}  // namespace
}  // namespace tollgate

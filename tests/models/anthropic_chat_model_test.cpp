#include <gtest/gtest.h>

#include "models/model_test_support.h"
#include "support/error_assertions.h"
#include "tollgate/error.h"

namespace tollgate::testing {
namespace {

class AnthropicChatModelTest : public ::testing::Test {
 protected:
  std::unique_ptr<ChatModel> model() {
    return init_chat_model("anthropic:claude-sonnet-4-5",
                           fixture.options("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ak-test"));
  }
  ProviderFixture fixture;
};

Json message_response(const Json& content, const std::string& stop_reason) {
  return {{"id", "msg_01"},
          {"type", "message"},
          {"role", "assistant"},
          {"model", "claude-sonnet-4-5"},
          {"content", content},
          {"stop_reason", stop_reason},
          {"usage", {{"input_tokens", 20}, {"output_tokens", 7}, {"cache_read_input_tokens", 5}}}};
}

std::string event(const std::string& name, const std::string& data) {
  return "event: " + name + "\ndata: " + data + "\n\n";
}

TEST_F(AnthropicChatModelTest, SendsKeyVersionSystemPromptAndToolResultBlocks) {
  fixture.server.enqueue(ScriptedResponse::json(
      200, message_response(Json::array({{{"type", "text"}, {"text", "ok"}}}), "end_turn")));
  ChatRequest request = tool_round_trip_request();
  Json history = request.messages.to_json();
  history[3]["status"] = "error";
  request.messages = std::move(history);
  model()->invoke(request);

  auto sent = fixture.server.requests().at(0);
  EXPECT_EQ(sent.target, "/v1/messages");
  EXPECT_EQ(sent.header("x-api-key"), "ak-test");
  EXPECT_EQ(sent.header("anthropic-version"), "2023-06-01");
  Json body = sent.json();
  EXPECT_EQ(body["model"], "claude-sonnet-4-5");
  EXPECT_EQ(body["max_tokens"], 4096);
  EXPECT_EQ(body["system"], "Be brief.");
  const Json& messages = body["messages"];
  ASSERT_EQ(messages.size(), 3u);  // user, assistant(tool_use), user(tool_result + question)
  EXPECT_EQ(messages[0]["role"], "user");
  EXPECT_EQ(messages[1]["role"], "assistant");
  EXPECT_EQ(messages[1]["content"][0], Json({{"type", "tool_use"},
                                             {"id", "call_1"},
                                             {"name", "weather_search"},
                                             {"input", {{"city", "Paris"}}}}));
  EXPECT_EQ(messages[2]["role"], "user");
  EXPECT_EQ(messages[2]["content"][0], Json({{"type", "tool_result"},
                                             {"tool_use_id", "call_1"},
                                             {"content", "sunny, 21C"},
                                             {"is_error", true}}));
  EXPECT_EQ(messages[2]["content"][1], Json({{"type", "text"}, {"text", "and tomorrow?"}}));
  EXPECT_EQ(body["tools"][0]["name"], "weather_search");
  EXPECT_EQ(body["tools"][0]["input_schema"]["type"], "object");
}

TEST_F(AnthropicChatModelTest, AssistantBlockContentDoesNotDuplicateToolUse) {
  fixture.server.enqueue(ScriptedResponse::json(
      200, message_response(Json::array({{{"type", "text"}, {"text", "ok"}}}), "end_turn")));
  ChatRequest request;
  request.messages = Json::parse(R"([
    {"type":"human","content":"weather?"},
    {"type":"ai","content":[{"type":"text","text":"Checking."},
                            {"type":"tool_use","id":"toolu_1","name":"weather_search","input":{"city":"Oslo"}}],
     "tool_calls":[{"id":"toolu_1","name":"weather_search","args":{"city":"Oslo"},"type":"tool_call"}]},
    {"type":"tool","tool_call_id":"toolu_1","content":"cold"}])");
  model()->invoke(request);
  const Json assistant = fixture.server.requests().at(0).json()["messages"][1];
  ASSERT_EQ(assistant["content"].size(), 2u);
  EXPECT_EQ(assistant["content"][0], Json({{"type", "text"}, {"text", "Checking."}}));
  EXPECT_EQ(assistant["content"][1]["type"], "tool_use");
}

TEST_F(AnthropicChatModelTest, ReadsTextAndToolUseBlocksWithUsage) {
  Json content = Json::array({{{"type", "text"}, {"text", "Let me check."}},
                              {{"type", "tool_use"},
                               {"id", "toolu_1"},
                               {"name", "weather_search"},
                               {"input", {{"city", "Oslo"}}}}});
  fixture.server.enqueue(ScriptedResponse::json(200, message_response(content, "tool_use")));
  Json reply = model()->invoke(user_request("weather in Oslo"));
  EXPECT_EQ(reply["content"], "Let me check.");
  ASSERT_EQ(reply["tool_calls"].size(), 1u);
  EXPECT_EQ(reply["tool_calls"][0]["id"], "toolu_1");
  EXPECT_EQ(reply["tool_calls"][0]["args"], Json({{"city", "Oslo"}}));
  EXPECT_EQ(reply["response_metadata"]["finish_reason"], "tool_use");
  EXPECT_EQ(reply["usage_metadata"]["input_tokens"], 25);  // cache reads count as input
  EXPECT_EQ(reply["usage_metadata"]["input_token_details"]["cache_read"], 5);
  EXPECT_EQ(reply["usage_metadata"]["output_tokens"], 7);
}

TEST_F(AnthropicChatModelTest, StreamsTextAndAssemblesInputJsonDeltas) {
  fixture.server.enqueue(ScriptedResponse::raw_sse(
      {event(
           "message_start",
           R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":30,"output_tokens":1}}})"),
       event(
           "content_block_start",
           R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"),
       event("ping", R"({"type":"ping"})"),
       event(
           "content_block_delta",
           R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking"}})"),
       event("content_block_stop", R"({"type":"content_block_stop","index":0})"),
       event(
           "content_block_start",
           R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_9","name":"weather_search","input":{}}})"),
       event(
           "content_block_delta",
           R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}})"),
       event(
           "content_block_delta",
           R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Li"}})"),
       event(
           "content_block_delta",
           R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ma\"}"}})"),
       event("content_block_stop", R"({"type":"content_block_stop","index":1})"),
       event(
           "message_delta",
           R"({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":15}})"),
       event("message_stop", R"({"type":"message_stop"})")}));
  ChunkRecorder recorder;
  Json reply = model()->invoke(user_request("weather in Lima"), &recorder.callback);

  EXPECT_EQ(reply["content"], "Checking");
  ASSERT_EQ(reply["tool_calls"].size(), 1u);
  EXPECT_EQ(reply["tool_calls"][0]["id"], "toolu_9");
  EXPECT_EQ(reply["tool_calls"][0]["args"], Json({{"city", "Lima"}}));
  EXPECT_EQ(reply["response_metadata"]["finish_reason"], "tool_use");
  EXPECT_EQ(reply["usage_metadata"]["input_tokens"], 30);
  EXPECT_EQ(reply["usage_metadata"]["output_tokens"], 15);
  EXPECT_EQ(recorder.text(), "Checking");
  EXPECT_EQ(recorder.tool_args(1), "{\"city\": \"Lima\"}");
  for (const auto& chunk : recorder.chunks) EXPECT_EQ(chunk["id"], reply["id"]);
  EXPECT_EQ(fixture.server.requests()[0].json()["stream"], true);
}

TEST_F(AnthropicChatModelTest, StreamErrorEventIsUnavailable) {
  fixture.server.enqueue(ScriptedResponse::raw_sse({event(
      "error", R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})")}));
  ChunkRecorder recorder;
  EXPECT_TRUE(throws_error([&] { model()->invoke(user_request("hi"), &recorder.callback); },
                           ErrorCode::kUnavailable, {"Overloaded"}));
}

TEST_F(AnthropicChatModelTest, OverloadedStatusIsRetried) {
  fixture.server.enqueue(ScriptedResponse::json(
      529,
      {{"type", "error"}, {"error", {{"type", "overloaded_error"}, {"message", "Overloaded"}}}}));
  fixture.server.enqueue(ScriptedResponse::json(
      200, message_response(Json::array({{{"type", "text"}, {"text", "fine"}}}), "end_turn")));
  EXPECT_EQ(model()->invoke(user_request("hi"))["content"], "fine");
  EXPECT_EQ(fixture.server.requests().size(), 2u);
}

TEST_F(AnthropicChatModelTest, BadRequestQuotesTheNestedErrorMessage) {
  fixture.server.enqueue(ScriptedResponse::json(
      400,
      {{"type", "error"},
       {"error",
        {{"type", "invalid_request_error"}, {"message", "max_tokens: must be at most 8192"}}}}));
  EXPECT_TRUE(throws_error([&] { model()->invoke(user_request("hi")); },
                           ErrorCode::kInvalidArgument, {"max_tokens: must be at most 8192"}));
}

}  // namespace
}  // namespace tollgate::testing

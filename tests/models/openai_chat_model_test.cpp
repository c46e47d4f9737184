#include <gtest/gtest.h>

#include <thread>

#include "models/model_test_support.h"
#include "support/error_assertions.h"
#include "tollgate/error.h"

namespace tollgate::testing {
namespace {

using std::chrono::milliseconds;

Json completion(const Json& message, const std::string& finish_reason) {
  return {{"id", "chatcmpl-1"},
          {"object", "chat.completion"},
          {"model", "gpt-4o-mini"},
          {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", finish_reason}}}},
          {"usage", {{"prompt_tokens", 12}, {"completion_tokens", 5}, {"total_tokens", 17}}}};
}

class OpenAiChatModelTest : public ::testing::Test {
 protected:
  std::unique_ptr<ChatModel> model(const std::string& spec = "openai:gpt-4o-mini") {
    return init_chat_model(spec, fixture.options("OPENAI_BASE_URL", "OPENAI_API_KEY", "sk-test"));
  }
  ProviderFixture fixture;
};

TEST_F(OpenAiChatModelTest, SendsBearerKeyModelMessagesAndToolsToChatCompletions) {
  fixture.server.enqueue(
      ScriptedResponse::json(200, completion({{"role", "assistant"}, {"content", "ok"}}, "stop")));
  model()->invoke(tool_round_trip_request());

  auto requests = fixture.server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/chat/completions");
  EXPECT_EQ(requests[0].header("authorization"), "Bearer sk-test");
  EXPECT_EQ(requests[0].header("content-type"), "application/json");
  Json body = requests[0].json();
  EXPECT_EQ(body["model"], "gpt-4o-mini");
  EXPECT_FALSE(body.contains("stream"));
  const Json& messages = body["messages"];
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages[0], Json({{"role", "system"}, {"content", "Be brief."}}));
  EXPECT_EQ(messages[1], Json({{"role", "user"}, {"content", "weather in Paris?"}}));
  EXPECT_EQ(messages[2]["role"], "assistant");
  EXPECT_TRUE(messages[2]["content"].is_null());
  EXPECT_EQ(messages[2]["tool_calls"][0]["id"], "call_1");
  EXPECT_EQ(messages[2]["tool_calls"][0]["type"], "function");
  EXPECT_EQ(messages[2]["tool_calls"][0]["function"]["name"], "weather_search");
  EXPECT_EQ(Json::parse(messages[2]["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            Json({{"city", "Paris"}}));
  EXPECT_EQ(messages[3],
            Json({{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "sunny, 21C"}}));
  EXPECT_EQ(body["tools"][0]["type"], "function");
  EXPECT_EQ(body["tools"][0]["function"]["name"], "weather_search");
  EXPECT_EQ(body["tools"][0]["function"]["parameters"]["required"][0], "city");
}

TEST_F(OpenAiChatModelTest, ReturnsTextReplyWithMetadataAndUsage) {
  fixture.server.enqueue(ScriptedResponse::json(
      200, completion({{"role", "assistant"}, {"content", "Hello!"}}, "stop")));
  Json reply = model()->invoke(user_request("hi"));
  EXPECT_EQ(reply["type"], "ai");
  EXPECT_EQ(reply["content"], "Hello!");
  EXPECT_EQ(reply["id"].get<std::string>().rfind("run-", 0), 0u);
  EXPECT_TRUE(reply["tool_calls"].empty());
  EXPECT_EQ(reply["response_metadata"]["finish_reason"], "stop");
  EXPECT_EQ(reply["response_metadata"]["model_name"], "gpt-4o-mini");
  EXPECT_EQ(reply["usage_metadata"]["input_tokens"], 12);
  EXPECT_EQ(reply["usage_metadata"]["output_tokens"], 5);
  EXPECT_EQ(reply["usage_metadata"]["total_tokens"], 17);
}

TEST_F(OpenAiChatModelTest, ParsesToolCallArgumentsIntoObjects) {
  Json message = {
      {"role", "assistant"},
      {"content", nullptr},
      {"tool_calls",
       {{{"id", "call_abc"},
         {"type", "function"},
         {"function", {{"name", "weather_search"}, {"arguments", "{\"city\":\"Paris\"}"}}}}}}};
  fixture.server.enqueue(ScriptedResponse::json(200, completion(message, "tool_calls")));
  Json reply = model()->invoke(user_request("weather?"));
  ASSERT_EQ(reply["tool_calls"].size(), 1u);
  EXPECT_EQ(reply["tool_calls"][0], Json({{"id", "call_abc"},
                                          {"name", "weather_search"},
                                          {"args", {{"city", "Paris"}}},
                                          {"type", "tool_call"}}));
  EXPECT_EQ(reply["content"], "");
}

TEST_F(OpenAiChatModelTest, UnparsableToolArgumentsBecomeInvalidToolCalls) {
  Json message = {{"role", "assistant"},
                  {"tool_calls",
                   {{{"id", "call_bad"},
                     {"type", "function"},
                     {"function", {{"name", "weather_search"}, {"arguments", "{\"city\": "}}}}}}};
  fixture.server.enqueue(ScriptedResponse::json(200, completion(message, "tool_calls")));
  Json reply = model()->invoke(user_request("weather?"));
  EXPECT_TRUE(reply["tool_calls"].empty());
  ASSERT_EQ(reply["invalid_tool_calls"].size(), 1u);
  EXPECT_EQ(reply["invalid_tool_calls"][0]["id"], "call_bad");
  EXPECT_EQ(reply["invalid_tool_calls"][0]["args"], "{\"city\": ");
  EXPECT_EQ(reply["invalid_tool_calls"][0]["type"], "invalid_tool_call");
}

TEST_F(OpenAiChatModelTest, StreamsContentDeltasAsChunksSharingTheFinalId) {
  fixture.server.enqueue(ScriptedResponse::sse(
      {R"({"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})",
       R"({"id":"c1","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]})",
       R"({"id":"c1","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]})",
       R"({"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
       R"({"id":"c1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}})",
       "[DONE]"}));
  ChunkRecorder recorder;
  Json reply = model()->invoke(user_request("hi"), &recorder.callback);

  EXPECT_EQ(reply["content"], "Hello");
  EXPECT_EQ(recorder.text(), "Hello");
  ASSERT_GE(recorder.chunks.size(), 2u);
  for (const auto& chunk : recorder.chunks) EXPECT_EQ(chunk["id"], reply["id"]);
  EXPECT_EQ(reply["response_metadata"]["finish_reason"], "stop");
  EXPECT_EQ(reply["usage_metadata"]["total_tokens"], 5);
  EXPECT_EQ(recorder.chunks.back()["usage_metadata"]["total_tokens"], 5);
  Json body = fixture.server.requests()[0].json();
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
}

TEST_F(OpenAiChatModelTest, AssemblesStreamedToolCallDeltasPerIndex) {
  fixture.server.enqueue(ScriptedResponse::sse(
      {R"({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"weather_search","arguments":""}}]}}]})",
       R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]}}]})",
       R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"weather_search","arguments":"{\"city\":\"Rome\"}"}}]}}]})",
       R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Paris\"}"}}]}}]})",
       R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})", "[DONE]"}));
  ChunkRecorder recorder;
  Json reply = model()->invoke(user_request("weather?"), &recorder.callback);

  ASSERT_EQ(reply["tool_calls"].size(), 2u);
  EXPECT_EQ(reply["tool_calls"][0]["id"], "call_a");
  EXPECT_EQ(reply["tool_calls"][0]["args"], Json({{"city", "Paris"}}));
  EXPECT_EQ(reply["tool_calls"][1]["id"], "call_b");
  EXPECT_EQ(reply["tool_calls"][1]["args"], Json({{"city", "Rome"}}));
  EXPECT_EQ(recorder.tool_args(0), "{\"city\":\"Paris\"}");
  EXPECT_EQ(recorder.chunks.front()["tool_call_chunks"][0]["name"], "weather_search");
  EXPECT_EQ(recorder.chunks.front()["tool_call_chunks"][0]["type"], "tool_call_chunk");
}

TEST_F(OpenAiChatModelTest, BadRequestIsInvalidArgumentQuotingTheProviderMessage) {
  fixture.server.enqueue(ScriptedResponse::json(
      400,
      {{"error",
        {{"message", "Invalid value for 'temperature'"}, {"type", "invalid_request_error"}}}}));
  EXPECT_TRUE(throws_error([&] { model()->invoke(user_request("hi")); },
                           ErrorCode::kInvalidArgument,
                           {"Invalid value for 'temperature'", "400"}));
  EXPECT_EQ(fixture.server.requests().size(), 1u);  // never retried
}

TEST_F(OpenAiChatModelTest, UnauthorizedIsUnavailableQuotingTheProviderMessage) {
  fixture.server.enqueue(ScriptedResponse::json(
      401, {{"error",
             {{"message", "Incorrect API key provided: sk-test."}, {"code", "invalid_api_key"}}}}));
  EXPECT_TRUE(throws_error([&] { model()->invoke(user_request("hi")); }, ErrorCode::kUnavailable,
                           {"Incorrect API key provided"}));
  EXPECT_EQ(fixture.server.requests().size(), 1u);
}

TEST_F(OpenAiChatModelTest, RetriesRateLimitHonouringRetryAfterThenSucceeds) {
  ScriptedResponse limited =
      ScriptedResponse::json(429, {{"error", {{"message", "Rate limit reached"}}}});
  limited.headers.emplace_back("Retry-After", "3");
  fixture.server.enqueue(limited);
  fixture.server.enqueue(
      ScriptedResponse::json(200, completion({{"role", "assistant"}, {"content", "ok"}}, "stop")));
  Json reply = model()->invoke(user_request("hi"));
  EXPECT_EQ(reply["content"], "ok");
  EXPECT_EQ(fixture.server.requests().size(), 2u);
  ASSERT_EQ(fixture.sleeps->size(), 1u);
  EXPECT_EQ(fixture.sleeps->at(0), milliseconds(3000));
}

TEST_F(OpenAiChatModelTest, ServerErrorsBackOffExponentiallyThenGiveUpAsUnavailable) {
  for (int i = 0; i < 3; ++i) {
    fixture.server.enqueue(ScriptedResponse::json(503, {{"error", {{"message", "overloaded"}}}}));
  }
  EXPECT_TRUE(throws_error([&] { model()->invoke(user_request("hi")); }, ErrorCode::kUnavailable,
                           {"overloaded", "3 attempts"}));
  EXPECT_EQ(fixture.server.requests().size(), 3u);
  EXPECT_EQ(*fixture.sleeps, (std::vector<milliseconds>{milliseconds(100), milliseconds(200)}));
}

TEST_F(OpenAiChatModelTest, SlowServerTimesOutAsUnavailable) {
  ScriptedResponse slow = ScriptedResponse::json(200, completion({{"content", "late"}}, "stop"));
  slow.delay = milliseconds(1500);
  fixture.server.enqueue(slow);
  ModelOptions options = fixture.options("OPENAI_BASE_URL", "OPENAI_API_KEY");
  options.timeout = milliseconds(200);
  options.max_retries = 0;
  EXPECT_TRUE(throws_error(
      [&] { init_chat_model("openai:gpt-4o-mini", options)->invoke(user_request("hi")); },
      ErrorCode::kUnavailable, {"timed out"}));
}

TEST_F(OpenAiChatModelTest, UnreachableServerIsRetriedThenUnavailable) {
  ModelOptions options = fixture.options("OPENAI_BASE_URL", "OPENAI_API_KEY");
  options.base_url = "http://127.0.0.1:1";  // nothing listens on port 1
  options.max_retries = 1;
  EXPECT_TRUE(throws_error(
      [&] { init_chat_model("openai:gpt-4o-mini", options)->invoke(user_request("hi")); },
      ErrorCode::kUnavailable, {"could not reach"}));
  EXPECT_EQ(fixture.sleeps->size(), 1u);
}

TEST_F(OpenAiChatModelTest, RequestOptionsOverrideModelDefaults) {
  fixture.server.enqueue(ScriptedResponse::json(200, completion({{"content", "ok"}}, "stop")));
  ModelOptions options = fixture.options("OPENAI_BASE_URL", "OPENAI_API_KEY");
  options.temperature = 0.2;
  options.max_tokens = 100;
  ChatRequest request = user_request("hi");
  request.options = {{"temperature", 0.7}, {"stop", {"END"}}};
  init_chat_model("openai:gpt-4o-mini", options)->invoke(request);
  Json body = fixture.server.requests()[0].json();
  EXPECT_EQ(body["temperature"], 0.7);
  EXPECT_EQ(body["max_tokens"], 100);
  EXPECT_EQ(body["stop"], Json::array({"END"}));
}

TEST_F(OpenAiChatModelTest, ToolMessageWithoutToolCallIdIsRejectedBeforeSending) {
  ChatRequest request;
  request.messages = Json::parse(R"([{"type":"tool","content":"x"}])");
  EXPECT_TRUE(throws_error([&] { model()->invoke(request); }, ErrorCode::kInvalidArgument,
                           {"messages[0].tool_call_id"}));
  EXPECT_TRUE(fixture.server.requests().empty());
}

TEST_F(OpenAiChatModelTest, AcceptsRoleStyleMessagesWithOpenAiToolCallsInAdditionalKwargs) {
  fixture.server.enqueue(ScriptedResponse::json(200, completion({{"content", "ok"}}, "stop")));
  ChatRequest request;
  request.messages = Json::parse(R"([
    {"role":"user","content":"weather?"},
    {"type":"ai","content":"","tool_calls":[],"additional_kwargs":{"tool_calls":[
      {"id":"call_7","type":"function","function":{"name":"weather_search","arguments":"{\"city\":\"Rome\"}"}}]}},
    {"role":"tool","tool_call_id":"call_7","content":"rainy"}])");
  model()->invoke(request);
  const Json messages = fixture.server.requests()[0].json()["messages"];
  EXPECT_EQ(messages[0]["role"], "user");
  EXPECT_EQ(messages[1]["tool_calls"][0]["id"], "call_7");
  EXPECT_EQ(Json::parse(messages[1]["tool_calls"][0]["function"]["arguments"].get<std::string>()),
            Json({{"city", "Rome"}}));
  EXPECT_EQ(messages[2]["role"], "tool");
}

TEST_F(OpenAiChatModelTest, OneInstanceServesConcurrentCalls) {
  constexpr int kCalls = 4;
  for (int i = 0; i < kCalls; ++i) {
    fixture.server.enqueue(ScriptedResponse::sse(
        {R"({"choices":[{"index":0,"delta":{"content":"same answer"}}]})", "[DONE]"}));
  }
  auto shared = model();
  std::vector<std::string> answers(kCalls);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCalls; ++i) {
    threads.emplace_back([&, i] {
      ChunkRecorder recorder;
      answers[i] =
          shared->invoke(user_request("q"), &recorder.callback)["content"].get<std::string>();
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& answer : answers) EXPECT_EQ(answer, "same answer");
  EXPECT_EQ(fixture.server.requests().size(), static_cast<size_t>(kCalls));
}

TEST_F(OpenAiChatModelTest, OpenRouterUsesItsOwnKeyVariable) {
  fixture.server.enqueue(ScriptedResponse::json(200, completion({{"content", "ok"}}, "stop")));
  auto m = init_chat_model("openrouter:meta-llama/llama-3-8b",
                           fixture.options("OPENROUTER_BASE_URL", "OPENROUTER_API_KEY", "or-key"));
  EXPECT_EQ(m->name(), "openrouter:meta-llama/llama-3-8b");
  m->invoke(user_request("hi"));
  auto request = fixture.server.requests()[0];
  EXPECT_EQ(request.header("authorization"), "Bearer or-key");
  EXPECT_EQ(request.json()["model"], "meta-llama/llama-3-8b");
}

TEST_F(OpenAiChatModelTest, StreamCutOffBeforeItsEndIsUnavailable) {
  fixture.server.enqueue(ScriptedResponse::sse(
      {R"({"choices":[{"index":0,"delta":{"content":"Half an ans"}}]})"}));  // no finish, no [DONE]
  ChunkRecorder recorder;
  EXPECT_TRUE(throws_error([&] { model()->invoke(user_request("hi"), &recorder.callback); },
                           ErrorCode::kUnavailable, {"ended before the reply was complete"}));
  EXPECT_EQ(fixture.server.requests().size(), 1u);  // chunks were seen: not retried
}

TEST_F(OpenAiChatModelTest, StreamErrorEventIsUnavailable) {
  fixture.server.enqueue(
      ScriptedResponse::sse({R"({"error":{"message":"upstream provider failed"}})"}));
  ChunkRecorder recorder;
  EXPECT_TRUE(throws_error([&] { model()->invoke(user_request("hi"), &recorder.callback); },
                           ErrorCode::kUnavailable, {"upstream provider failed"}));
}

}  // namespace
}  // namespace tollgate::testing

#include <gtest/gtest.h>

#include "models/model_test_support.h"
#include "support/error_assertions.h"
#include "tollgate/error.h"

namespace tollgate::testing {
namespace {

class OllamaChatModelTest : public ::testing::Test {
 protected:
  std::unique_ptr<ChatModel> model() {
    return init_chat_model("ollama:llama3.1", fixture.options("OLLAMA_HOST", ""));
  }
  ProviderFixture fixture;
};

TEST_F(OllamaChatModelTest, SendsToolRoleMessagesAndOptionsToApiChat) {
  fixture.server.enqueue(
      ScriptedResponse::json(200, {{"model", "llama3.1"},
                                   {"message", {{"role", "assistant"}, {"content", "ok"}}},
                                   {"done", true}}));
  ChatRequest request = tool_round_trip_request();
  Json history = request.messages.to_json();
  history[3].erase("name");
  request.messages = std::move(history);
  request.options = {{"temperature", 0}, {"max_tokens", 64}};
  model()->invoke(request);

  auto sent = fixture.server.requests().at(0);
  EXPECT_EQ(sent.target, "/api/chat");
  EXPECT_EQ(sent.header("authorization"), "");
  Json body = sent.json();
  EXPECT_EQ(body["model"], "llama3.1");
  EXPECT_EQ(body["stream"], false);
  EXPECT_EQ(body["options"]["num_predict"], 64);
  EXPECT_EQ(body["options"]["temperature"], 0);
  const Json& messages = body["messages"];
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages[0], Json({{"role", "system"}, {"content", "Be brief."}}));
  EXPECT_EQ(messages[2]["tool_calls"][0]["function"],
            Json({{"name", "weather_search"}, {"arguments", {{"city", "Paris"}}}}));
  EXPECT_EQ(messages[3],
            Json({{"role", "tool"}, {"content", "sunny, 21C"}, {"tool_name", "weather_search"}}));
  EXPECT_EQ(body["tools"][0]["function"]["name"], "weather_search");
}

TEST_F(OllamaChatModelTest, StreamsNdjsonAndCollectsToolCallsAndCounts) {
  std::vector<Json> lines;
  for (
      const char* line :
      {R"({"model":"llama3.1","message":{"role":"assistant","content":"Sure"},"done":false})",
       R"({"model":"llama3.1","message":{"role":"assistant","content":", checking."},"done":false})",
       R"({"model":"llama3.1","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"weather_search","arguments":{"city":"Cairo"}}}]},"done":false})",
       R"({"model":"llama3.1","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":26,"eval_count":9})"}) {
    lines.push_back(Json::parse(line));
  }
  fixture.server.enqueue(ScriptedResponse::ndjson(lines));
  ChunkRecorder recorder;
  Json reply = model()->invoke(user_request("weather in Cairo"), &recorder.callback);

  EXPECT_EQ(fixture.server.requests()[0].json()["stream"], true);
  EXPECT_EQ(reply["content"], "Sure, checking.");
  EXPECT_EQ(recorder.text(), "Sure, checking.");
  ASSERT_EQ(reply["tool_calls"].size(), 1u);
  EXPECT_EQ(reply["tool_calls"][0]["args"], Json({{"city", "Cairo"}}));
  EXPECT_EQ(recorder.tool_args(0), "{\"city\":\"Cairo\"}");
  EXPECT_EQ(reply["response_metadata"]["finish_reason"], "stop");
  EXPECT_EQ(reply["usage_metadata"]["input_tokens"], 26);
  EXPECT_EQ(reply["usage_metadata"]["output_tokens"], 9);
}

TEST_F(OllamaChatModelTest, StreamWithoutDoneLineIsUnavailable) {
  fixture.server.enqueue(ScriptedResponse::ndjson(
      {Json::parse(R"({"message":{"role":"assistant","content":"partial"},"done":false})")}));
  ChunkRecorder recorder;
  EXPECT_TRUE(throws_error([&] { model()->invoke(user_request("hi"), &recorder.callback); },
                           ErrorCode::kUnavailable));
}

TEST_F(OllamaChatModelTest, MissingModelErrorIsQuoted) {
  fixture.server.enqueue(
      ScriptedResponse::json(404, {{"error", "model \"llama9\" not found, try pulling it first"}}));
  EXPECT_TRUE(throws_error([&] { model()->invoke(user_request("hi")); },
                           ErrorCode::kInvalidArgument, {"not found, try pulling it first"}));
}

TEST_F(OllamaChatModelTest, HostWithoutSchemeGetsHttp) {
  fixture.server.enqueue(ScriptedResponse::json(
      200, {{"message", {{"role", "assistant"}, {"content", "ok"}}}, {"done", true}}));
  ModelOptions options = fixture.options("OLLAMA_HOST", "");
  std::string host = fixture.server.base_url().substr(std::string("http://").size());
  options.getenv = [host](const std::string& name) -> std::optional<std::string> {
    if (name == "OLLAMA_HOST") return host;
    return std::nullopt;
  };
  EXPECT_EQ(init_chat_model("ollama:llama3.1", options)->invoke(user_request("hi"))["content"],
            "ok");
}

}  // namespace
}  // namespace tollgate::testing

#include <gtest/gtest.h>

#include "models/model_test_support.h"
#include "support/error_assertions.h"
#include "tollgate/error.h"

namespace tollgate::testing {
namespace {

class GeminiChatModelTest : public ::testing::Test {
 protected:
  std::unique_ptr<ChatModel> model() {
    return init_chat_model("google_genai:gemini-2.5-flash",
                           fixture.options("GOOGLE_GENAI_BASE_URL", "GEMINI_API_KEY", "g-key"));
  }
  ProviderFixture fixture;
};

Json candidate_response(const Json& parts, const std::string& finish) {
  return {{"candidates",
           {{{"content", {{"role", "model"}, {"parts", parts}}},
             {"finishReason", finish},
             {"index", 0}}}},
          {"usageMetadata",
           {{"promptTokenCount", 8}, {"candidatesTokenCount", 4}, {"totalTokenCount", 12}}},
          {"modelVersion", "gemini-2.5-flash"}};
}

TEST_F(GeminiChatModelTest, SendsKeyHeaderSystemInstructionAndFunctionResponses) {
  fixture.server.enqueue(
      ScriptedResponse::json(200, candidate_response(Json::array({{{"text", "ok"}}}), "STOP")));
  ChatRequest request = tool_round_trip_request();
  Json messages = request.messages.to_json();
  messages[3].erase("name");  // the name must be found from the earlier tool call
  request.messages = std::move(messages);
  model()->invoke(request);

  auto sent = fixture.server.requests().at(0);
  EXPECT_EQ(sent.target, "/v1beta/models/gemini-2.5-flash:generateContent");
  EXPECT_EQ(sent.header("x-goog-api-key"), "g-key");
  Json body = sent.json();
  EXPECT_EQ(body["systemInstruction"]["parts"][0]["text"], "Be brief.");
  const Json& contents = body["contents"];
  ASSERT_EQ(contents.size(), 3u);
  EXPECT_EQ(contents[0], Json({{"role", "user"}, {"parts", {{{"text", "weather in Paris?"}}}}}));
  EXPECT_EQ(contents[1]["role"], "model");
  EXPECT_EQ(contents[1]["parts"][0]["functionCall"],
            Json({{"name", "weather_search"}, {"args", {{"city", "Paris"}}}}));
  EXPECT_EQ(contents[2]["role"], "user");
  EXPECT_EQ(contents[2]["parts"][0]["functionResponse"],
            Json({{"name", "weather_search"}, {"response", {{"result", "sunny, 21C"}}}}));
  EXPECT_EQ(contents[2]["parts"][1], Json({{"text", "and tomorrow?"}}));
  const Json& declaration = body["tools"][0]["functionDeclarations"][0];
  EXPECT_EQ(declaration["name"], "weather_search");
  EXPECT_FALSE(declaration["parameters"].contains("additionalProperties"));
  EXPECT_EQ(declaration["parameters"]["properties"]["city"]["type"], "string");
}

TEST_F(GeminiChatModelTest, ReadsFunctionCallsWithFreshIdsAndUsage) {
  fixture.server.enqueue(ScriptedResponse::json(
      200, candidate_response(
               Json::array({{{"functionCall",
                              {{"name", "weather_search"}, {"args", {{"city", "Kyiv"}}}}}}}),
               "STOP")));
  Json reply = model()->invoke(user_request("weather in Kyiv"));
  ASSERT_EQ(reply["tool_calls"].size(), 1u);
  EXPECT_EQ(reply["tool_calls"][0]["name"], "weather_search");
  EXPECT_EQ(reply["tool_calls"][0]["args"], Json({{"city", "Kyiv"}}));
  EXPECT_FALSE(reply["tool_calls"][0]["id"].get<std::string>().empty());
  EXPECT_EQ(reply["usage_metadata"]["input_tokens"], 8);
  EXPECT_EQ(reply["usage_metadata"]["output_tokens"], 4);
  EXPECT_EQ(reply["usage_metadata"]["total_tokens"], 12);
  EXPECT_EQ(reply["response_metadata"]["finish_reason"], "STOP");
}

TEST_F(GeminiChatModelTest, ThoughtSignaturesOfFunctionCallsAreSentBack) {
  Json part = {{"functionCall", {{"name", "weather_search"}, {"args", {{"city", "Kyiv"}}}}},
               {"thoughtSignature", "c2lnLWFiYw=="}};
  fixture.server.enqueue(
      ScriptedResponse::json(200, candidate_response(Json::array({part}), "STOP")));
  fixture.server.enqueue(
      ScriptedResponse::json(200, candidate_response(Json::array({{{"text", "ok"}}}), "STOP")));
  auto m = model();
  ChatRequest request = user_request("weather in Kyiv");
  Json reply = m->invoke(request);
  const std::string id = reply["tool_calls"][0]["id"].get<std::string>();
  Json messages = request.messages.to_json();
  messages.push_back(reply);
  messages.push_back({{"type", "tool"}, {"tool_call_id", id}, {"content", "snow"}});
  request.messages = std::move(messages);
  m->invoke(request);

  const Json sent = fixture.server.requests().at(1).json()["contents"][1]["parts"][0];
  EXPECT_EQ(sent["thoughtSignature"], "c2lnLWFiYw==");
  EXPECT_EQ(sent["functionCall"]["name"], "weather_search");
}

TEST_F(GeminiChatModelTest, StreamsFromStreamGenerateContentWithAltSse) {
  fixture.server.enqueue(ScriptedResponse::sse(
      {candidate_response(Json::array({{{"text", "The weather "}}}), "").dump(),
       candidate_response(Json::array({{{"text", "is fine."}}}), "STOP").dump()}));
  ChunkRecorder recorder;
  Json reply = model()->invoke(user_request("hi"), &recorder.callback);
  EXPECT_EQ(fixture.server.requests()[0].target,
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
  EXPECT_EQ(reply["content"], "The weather is fine.");
  EXPECT_EQ(recorder.text(), "The weather is fine.");
  EXPECT_EQ(reply["usage_metadata"]["total_tokens"], 12);
  for (const auto& chunk : recorder.chunks) EXPECT_EQ(chunk["id"], reply["id"]);
}

TEST_F(GeminiChatModelTest, BadRequestQuotesTheGoogleErrorMessage) {
  fixture.server.enqueue(
      ScriptedResponse::json(400, {{"error",
                                    {{"code", 400},
                                     {"message", "API key not valid. Please pass a valid API key."},
                                     {"status", "INVALID_ARGUMENT"}}}}));
  EXPECT_TRUE(throws_error([&] { model()->invoke(user_request("hi")); },
                           ErrorCode::kInvalidArgument, {"API key not valid"}));
}

}  // namespace
}  // namespace tollgate::testing

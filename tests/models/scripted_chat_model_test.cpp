#include <gtest/gtest.h>

#include "models/model_test_support.h"
#include "tollgate/error.h"

namespace tollgate::testing {
namespace {

TEST(ScriptedChatModelTest, ReturnsRepliesInTurnWithDeterministicIds) {
  ScriptedChatModel model(std::vector<Json>{Json("first"), Json("second")});
  Json a = model.invoke(user_request("1"));
  Json b = model.invoke(user_request("2"));
  EXPECT_EQ(a["content"], "first");
  EXPECT_EQ(a["id"], "scripted-1");
  EXPECT_EQ(a["type"], "ai");
  EXPECT_EQ(b["content"], "second");
  EXPECT_EQ(b["id"], "scripted-2");
  EXPECT_EQ(model.remaining(), 0u);
}

TEST(ScriptedChatModelTest, CompletesToolCallsWithIdsAndType) {
  ScriptedChatModel model(std::vector<Json>{
      Json::parse(R"({"tool_calls":[{"name":"delete_file","args":{"path":"a.txt"}}]})")});
  Json reply = model.invoke(user_request("delete a.txt"));
  ASSERT_EQ(reply["tool_calls"].size(), 1u);
  EXPECT_EQ(reply["tool_calls"][0], Json({{"name", "delete_file"},
                                          {"args", {{"path", "a.txt"}}},
                                          {"id", "call_1_0"},
                                          {"type", "tool_call"}}));
  EXPECT_EQ(reply["content"], "");
  EXPECT_EQ(reply["response_metadata"]["finish_reason"], "tool_calls");
}

TEST(ScriptedChatModelTest, KeepsIdsGivenInTheScript) {
  ScriptedChatModel model(std::vector<Json>{Json::parse(
      R"({"id":"ai-1","content":"x","tool_calls":[{"id":"call_9","name":"t","args":{}}]})")});
  Json reply = model.invoke(user_request("go"));
  EXPECT_EQ(reply["id"], "ai-1");
  EXPECT_EQ(reply["tool_calls"][0]["id"], "call_9");
}

TEST(ScriptedChatModelTest, StreamsContentAsWordChunksWithTheMessageId) {
  ScriptedChatModel model(std::vector<Json>{Json("Approve this?")});
  ChunkRecorder recorder;
  Json reply = model.invoke(user_request("go"), &recorder.callback);
  ASSERT_GE(recorder.chunks.size(), 3u);
  EXPECT_EQ(recorder.chunks[0]["content"], "Approve ");
  EXPECT_EQ(recorder.chunks[1]["content"], "this?");
  EXPECT_EQ(recorder.text(), "Approve this?");
  for (const auto& chunk : recorder.chunks) EXPECT_EQ(chunk["id"], reply["id"]);
}

TEST(ScriptedChatModelTest, EachStreamedChunkCarriesOnlyItsOwnPart) {
  ScriptedChatModel model(std::vector<Json>{Json::parse(
      R"({"id":"ai-1","content":"Two words","tool_calls":[{"id":"c1","name":"t","args":{"k":1}},)"
      R"({"id":"c2","name":"u","args":{}}]})")});
  ChunkRecorder recorder;
  Json reply = model.invoke(user_request("go"), &recorder.callback);
  auto chunk = [](const char* content, Json calls) {
    Json c = Json::parse(R"({"type":"ai","id":"ai-1","tool_calls":[],"invalid_tool_calls":[],)"
                         R"("additional_kwargs":{},"response_metadata":{}})");
    c["content"] = content;
    c["tool_call_chunks"] = std::move(calls);
    return c;
  };
  auto call = [](int index, const char* id, const char* name, const char* args) {
    return Json::array({Json{{"index", index},
                             {"id", id},
                             {"name", name},
                             {"args", args},
                             {"type", "tool_call_chunk"}}});
  };
  Json last = chunk("", Json::array());
  last["response_metadata"] = reply["response_metadata"];
  ASSERT_EQ(recorder.chunks.size(), 5u);
  EXPECT_EQ(recorder.chunks[0], chunk("Two ", Json::array()));
  EXPECT_EQ(recorder.chunks[1], chunk("words", Json::array()));
  EXPECT_EQ(recorder.chunks[2], chunk("", call(0, "c1", "t", R"({"k":1})")));
  EXPECT_EQ(recorder.chunks[3], chunk("", call(1, "c2", "u", "{}")));
  EXPECT_EQ(recorder.chunks[4], last);
  EXPECT_FALSE(reply["response_metadata"].empty());
}

TEST(ScriptedChatModelTest, StreamsToolCallsAsToolCallChunks) {
  ScriptedChatModel model(
      std::vector<Json>{Json::parse(R"({"tool_calls":[{"name":"t","args":{"k":1}}]})")});
  ChunkRecorder recorder;
  model.invoke(user_request("go"), &recorder.callback);
  EXPECT_EQ(recorder.tool_args(0), "{\"k\":1}");
}

TEST(ScriptedChatModelTest, ExhaustedScriptThrowsInternalError) {
  ScriptedChatModel model(std::vector<Json>{Json("only")});
  model.invoke(user_request("1"));
  try {
    model.invoke(user_request("2"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInternal);
    EXPECT_NE(std::string(e.what()).find("script exhausted"), std::string::npos) << e.what();
  }
}

TEST(ScriptedChatModelTest, RecordsTheRequestsItReceived) {
  ScriptedChatModel model(std::vector<Json>{Json("a"), Json("b")});
  model.invoke(user_request("first question"));
  auto requests = model.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].messages[0]["content"], "first question");
}

TEST(ScriptedChatModelTest, RejectsAScriptEntryThatIsNeitherTextNorObject) {
  try {
    ScriptedChatModel model(std::vector<Json>{Json("ok"), Json(42)});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("script[1]"), std::string::npos) << e.what();
  }
}

TEST(ScriptedChatModelTest, InitChatModelBuildsOneFromOptionsScript) {
  ModelOptions options;
  options.script = Json::array({"hello"});
  auto model = init_chat_model("scripted", options);
  EXPECT_EQ(model->invoke(user_request("hi"))["content"], "hello");
}

}  // namespace
}  // namespace tollgate::testing

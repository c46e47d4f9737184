#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "models/model_test_support.h"
#include "tollgate/error.h"

namespace tollgate::testing {
namespace {

// A script: "email" proposes send_email then reports the tool result; "delete <file>" (regex)
// proposes delete_file; the catch-all "" is absent so unknown requests hit the default text.
Json mail_script() {
  return Json::parse(R"({"conversations": [
    {"match": "Email", "replies": [
      {"content": "I will email Bob.",
       "tool_calls": [{"name": "send_email", "args": {"to": "bob@example.com"}}]},
      "Done: {tool_results}"]},
    {"regex": "^delete \\S+$", "replies": [
      {"tool_calls": [{"name": "delete_file", "args": {"path": "notes.txt"}}]}]}
  ]})");
}

Json human(const std::string& text) {
  return {{"type", "human"}, {"content", text}};
}
Json ai(const std::string& text) {
  return {{"type", "ai"}, {"content", text}};
}
Json tool(const std::string& text) {
  return {{"type", "tool"}, {"content", text}, {"tool_call_id", "c"}};
}
ChatRequest request_of(Json messages) {
  ChatRequest request;
  request.messages = std::move(messages);
  return request;
}

std::string error_of(const Json& script) {
  try {
    ScriptedConversationModel model(script);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "no error for " << script.dump();
  return "";
}

TEST(ScriptedConversationModelTest, MatchesTheHumanMessageAsCaseInsensitiveText) {
  ScriptedConversationModel model(mail_script());
  Json reply = model.invoke(user_request("please EMAIL bob about lunch"));
  EXPECT_EQ(reply["content"], "I will email Bob.");
  ASSERT_EQ(reply["tool_calls"].size(), 1u);
  EXPECT_EQ(reply["tool_calls"][0]["name"], "send_email");
  EXPECT_EQ(reply["tool_calls"][0]["id"], "call_1_0");
}

TEST(ScriptedConversationModelTest, MatchesARegularExpression) {
  ScriptedConversationModel model(mail_script());
  Json reply = model.invoke(user_request("delete notes.txt"));
  ASSERT_EQ(reply["tool_calls"].size(), 1u);
  EXPECT_EQ(reply["tool_calls"][0]["name"], "delete_file");
}

TEST(ScriptedConversationModelTest, ReplyIndexIsTheNumberOfAiMessagesAfterTheHumanMessage) {
  ScriptedConversationModel model(mail_script());
  Json reply = model.invoke(
      request_of({human("email bob"), ai("I will email Bob."), tool("sent to bob@example.com")}));
  EXPECT_EQ(reply["content"], "Done: sent to bob@example.com");
  EXPECT_TRUE(reply["tool_calls"].empty());
  EXPECT_EQ(reply["id"], "scripted-2");
}

TEST(ScriptedConversationModelTest, ToolResultsOfOneTurnAreJoinedInOrder) {
  ScriptedConversationModel model(mail_script());
  Json reply = model.invoke(request_of({human("email"), ai(""), tool("first"), tool("second")}));
  EXPECT_EQ(reply["content"], "Done: first second");
}

TEST(ScriptedConversationModelTest, EachTurnIsMatchedOnItsOwnHumanMessage) {
  ScriptedConversationModel model(mail_script());
  Json reply = model.invoke(request_of({human("email bob"), ai("I will email Bob."), tool("sent"),
                                        ai("Done: sent"), human("delete a.txt")}));
  ASSERT_EQ(reply["tool_calls"].size(), 1u);
  EXPECT_EQ(reply["tool_calls"][0]["name"], "delete_file");
  EXPECT_EQ(reply["id"], "scripted-3");
  EXPECT_EQ(reply["tool_calls"][0]["id"], "call_3_0");
}

TEST(ScriptedConversationModelTest, WithoutAMatchingConversationAnswersWithAFinalText) {
  ScriptedConversationModel model(mail_script());
  Json reply = model.invoke(user_request("what is the time?"));
  EXPECT_EQ(reply["content"], "The script has no conversation for \"what is the time?\".");
  EXPECT_TRUE(reply["tool_calls"].empty());
  EXPECT_EQ(reply["response_metadata"]["finish_reason"], "stop");
}

TEST(ScriptedConversationModelTest, PastTheLastReplyAnswersWithAFinalTextNamingTheReply) {
  ScriptedConversationModel model(mail_script());
  Json reply = model.invoke(request_of({human("delete a.txt"), ai(""), tool("deleted")}));
  EXPECT_EQ(reply["content"],
            "The script's conversation for \"delete a.txt\" has no reply #2 (it has 1).");
  EXPECT_TRUE(reply["tool_calls"].empty());
}

TEST(ScriptedConversationModelTest, FallbackTextReplacesTheDefaultFinalText) {
  Json script = mail_script();
  script["fallback"] = "Sorry, {human} is not in my script.";
  ScriptedConversationModel model(script);
  EXPECT_EQ(model.invoke(user_request("sing"))["content"], "Sorry, sing is not in my script.");
}

TEST(ScriptedConversationModelTest, TheFirstMatchingConversationWins) {
  ScriptedConversationModel model(Json::parse(R"({"conversations": [
    {"match": "bob", "replies": ["first"]}, {"match": "", "replies": ["catch-all"]}]})"));
  EXPECT_EQ(model.invoke(user_request("email bob"))["content"], "first");
  EXPECT_EQ(model.invoke(user_request("anything"))["content"], "catch-all");
}

TEST(ScriptedConversationModelTest, AcceptsRoleStyleMessages) {
  ScriptedConversationModel model(mail_script());
  Json reply = model.invoke(request_of(
      {{{"role", "system"}, {"content", "be nice"}}, {{"role", "user"}, {"content", "email"}}}));
  EXPECT_EQ(reply["content"], "I will email Bob.");
}

TEST(ScriptedConversationModelTest, StreamsTheChosenReplyAsChunks) {
  ScriptedConversationModel model(mail_script());
  ChunkRecorder recorder;
  model.invoke(user_request("email"), &recorder.callback);
  EXPECT_EQ(recorder.text(), "I will email Bob.");
  EXPECT_EQ(recorder.tool_args(0), R"({"to":"bob@example.com"})");
}

// Many threads share one instance; each conversation gets its own reply whatever the others do.
TEST(ScriptedConversationModelTest, ConcurrentConversationsEachGetTheirOwnReply) {
  ScriptedConversationModel model(mail_script());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&model, &wrong, t] {
      for (int i = 0; i < 50; ++i) {
        const bool email = (t + i) % 2 == 0;
        Json reply = email ? model.invoke(request_of({human("email"), ai(""), tool("ok")}))
                           : model.invoke(user_request("delete x"));
        const bool right = email ? reply["content"] == "Done: ok"
                                 : reply["tool_calls"].size() == 1u &&
                                       reply["tool_calls"][0]["name"] == "delete_file";
        if (!right) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ScriptedConversationModelTest, RejectsAnInvalidRegexNamingTheField) {
  std::string message = error_of(Json::parse(R"({"conversations":[{"regex":"(","replies":[]}]})"));
  EXPECT_EQ(message.rfind("script.conversations[0].regex: not a valid regular expression", 0), 0u)
      << message;
}

TEST(ScriptedConversationModelTest, RejectsAnUnknownConversationKey) {
  std::string message =
      error_of(Json::parse(R"({"conversations":[{"matches":"x","replies":[]}]})"));
  EXPECT_EQ(message.rfind("script.conversations[0]: unknown key 'matches'", 0), 0u) << message;
}

TEST(ScriptedConversationModelTest, RejectsAConversationWithBothMatchAndRegex) {
  std::string message =
      error_of(Json::parse(R"({"conversations":[{"match":"x","regex":"y","replies":[]}]})"));
  EXPECT_EQ(message, "script.conversations[0]: needs exactly one of \"match\" (text) or \"regex\"");
}

TEST(ScriptedConversationModelTest, RejectsABadToolCallInAReply) {
  std::string message = error_of(Json::parse(
      R"({"conversations":[{"match":"x","replies":["ok",{"tool_calls":[{"args":{}}]}]}]})"));
  EXPECT_EQ(message, "script.conversations[0].replies[1].tool_calls[0].name must be a string");
}

TEST(ScriptedConversationModelTest, RejectsAScriptWithoutConversations) {
  EXPECT_EQ(error_of(Json::parse(R"({"fallback":"x"})")), "script.conversations: must be an array");
  EXPECT_EQ(error_of(Json::parse(R"({"conversations":[],"replies":[]})")),
            "script: unknown key 'replies' (expected conversations, fallback)");
}

TEST(ScriptedConversationModelTest, InitChatModelBuildsOneFromAnObjectScript) {
  ModelOptions options;
  options.script = mail_script();
  auto model = init_chat_model("scripted", options);
  EXPECT_NE(dynamic_cast<ScriptedConversationModel*>(model.get()), nullptr);
  EXPECT_EQ(model->invoke(user_request("email"))["content"], "I will email Bob.");
}

TEST(ScriptedConversationModelTest, InitChatModelReadsTheScriptFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tollgate-script-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << mail_script().dump();
  ModelOptions options;
  options.script_file = path.string();
  auto model = init_chat_model("scripted", options);
  std::filesystem::remove(path);
  EXPECT_EQ(model->invoke(user_request("delete a"))["tool_calls"][0]["name"], "delete_file");
}

TEST(ScriptedConversationModelTest, AnUnreadableScriptFileIsNamedInTheError) {
  ModelOptions options;
  options.script_file = "/nonexistent/script.json";
  try {
    init_chat_model("scripted", options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "script_file /nonexistent/script.json: cannot be read");
  }
}

TEST(ScriptedConversationModelTest, AScriptFileWithANumberPastADoublesRangeIsNotJson) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tollgate-script-range-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << R"({"conversations": [], "x": 1e999999})";
  ModelOptions options;
  options.script_file = path.string();
  try {
    init_chat_model("scripted", options);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("script_file " + path.string() + ": not valid JSON", 0),
              0u)
        << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tollgate::testing

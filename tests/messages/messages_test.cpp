// Message builders, accessors and the serialised form (AGENT_SERVER_API.md §3).
#include "tollgate/messages.h"

#include <gtest/gtest.h>

#include <regex>

#include "tollgate/error.h"

namespace tollgate {
namespace {

const std::regex kUuid4("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");

// Uniqueness and fork safety: tests/core/ids_test.cpp (tollgate::uuid4 is core::uuid4).
TEST(Uuid4, HasVersionAndVariantBits) {
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(std::regex_match(uuid4(), kUuid4));
}

TEST(MessageBuilders, HumanHasTheServerFieldsAndAFreshId) {
  Json m = human_message("hi");
  EXPECT_TRUE(std::regex_match(m["id"].get<std::string>(), kUuid4));
  m.erase("id");
  EXPECT_EQ(
      m, Json::parse(
             R"({"content":"hi","additional_kwargs":{},"response_metadata":{},"type":"human"})"));
}

TEST(MessageBuilders, GivenIdIsKept) {
  EXPECT_EQ(system_message("be brief", "sys-1")["id"], "sys-1");
}

TEST(MessageBuilders, AiMessageNormalisesItsToolCalls) {
  Json m = ai_message(
      "", Json::array({Json{{"name", "send"}, {"args", {{"to", "a"}}}, {"id", "c1"}}}), "ai-1");
  EXPECT_EQ(m,
            Json::parse(R"({"content":"","additional_kwargs":{},"response_metadata":{},"id":"ai-1",
      "type":"ai","tool_calls":[{"name":"send","args":{"to":"a"},"id":"c1","type":"tool_call"}],
      "invalid_tool_calls":[]})"));
}

TEST(MessageBuilders, ToolMessageCarriesCallIdNameAndStatus) {
  Json m = tool_message("done", "c1", "send", "error", "t-1");
  EXPECT_EQ(m["tool_call_id"], "c1");
  EXPECT_EQ(m["name"], "send");
  EXPECT_EQ(m["status"], "error");
  EXPECT_EQ(m["type"], "tool");
}

TEST(MessageBuilders, RemoveMessageNamesTheTarget) {
  EXPECT_EQ(remove_message(std::string(kRemoveAllMessages)),
            Json::parse(R"({"type":"remove","id":"__remove_all__","content":""})"));
}

TEST(MessageBuilders, ToolCallGetsACallIdWhenNoneIsGiven) {
  Json call = make_tool_call("search", {{"q", "x"}});
  EXPECT_EQ(call["type"], "tool_call");
  EXPECT_TRUE(call["id"].get<std::string>().starts_with("call_"));
  EXPECT_EQ(call["id"].get<std::string>().size(), 5u + 32u);
}

TEST(MessageAccessors, TypeFromEveryInputForm) {
  EXPECT_EQ(message_type(Json::parse(R"({"type":"AIMessageChunk"})")), "ai");
  EXPECT_EQ(message_type(Json::parse(R"({"type":"HumanMessageChunk"})")), "human");
  EXPECT_EQ(message_type(Json::parse(R"({"role":"user","content":"x"})")), "human");
  EXPECT_EQ(message_type(Json::parse(R"({"role":"assistant","content":"x"})")), "ai");
  EXPECT_EQ(
      message_type(Json::parse(
          R"({"lc":1,"type":"constructor","id":["langchain_core","messages","ToolMessage"],"kwargs":{}})")),
      "tool");
  EXPECT_EQ(message_type(Json("plain text")), "human");
  EXPECT_EQ(message_type(Json::object()), "");
}

TEST(MessageAccessors, IdIsEmptyWhenMissing) {
  EXPECT_EQ(message_id(Json::parse(R"({"type":"human","id":"h1"})")), "h1");
  EXPECT_EQ(message_id(Json::parse(R"({"type":"human"})")), "");
  EXPECT_EQ(message_id(Json::parse(R"({"type":"human","id":7})")), "");
}

TEST(MessageAccessors, TextJoinsTextBlocksAndSkipsOthers) {
  Json m = Json::parse(R"({"type":"ai","content":[{"type":"text","text":"Hello, "},
      {"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"world"}]})");
  EXPECT_EQ(message_text(m), "Hello, world");
  EXPECT_EQ(message_text(Json::parse(R"({"type":"ai","content":"plain"})")), "plain");
}

TEST(MessageAccessors, ToolCallsAcceptJsonTextArguments) {
  Json m = Json::parse(R"({"type":"ai","tool_calls":[{"id":"c1","name":"f","args":"{\"a\":1}"}]})");
  EXPECT_EQ(message_tool_calls(m),
            Json::parse(R"([{"id":"c1","name":"f","args":{"a":1},"type":"tool_call"}])"));
}

TEST(MessageAccessors, OpenAiToolCallsArePromotedFromAdditionalKwargs) {
  Json m =
      Json::parse(R"({"type":"ai","content":"","tool_calls":[],"additional_kwargs":{"tool_calls":[
      {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]}})");
  EXPECT_EQ(message_tool_calls(m), Json::parse(R"([{"id":"call_1","name":"get_weather",
      "args":{"city":"Oslo"},"type":"tool_call"}])"));
}

TEST(MessageAccessors, EmptyArgumentTextMeansNoArguments) {
  Json m = Json::parse(R"({"type":"ai","tool_calls":[{"id":"c1","name":"now","args":""}]})");
  EXPECT_EQ(message_tool_calls(m)[0]["args"], Json::object());
}

TEST(NormalizeMessage, RoleStyleBecomesTypeStyle) {
  Json m = normalize_message(Json::parse(R"({"role":"user","content":"hi"})"));
  EXPECT_EQ(m["type"], "human");
  EXPECT_FALSE(m.contains("role"));
  EXPECT_TRUE(std::regex_match(m["id"].get<std::string>(), kUuid4));
}

TEST(NormalizeMessage, ClassSerialisedFormIsUnwrapped) {
  Json m = normalize_message(Json::parse(
      R"({"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],
          "kwargs":{"content":"hello","additional_kwargs":{},"response_metadata":{}}})"));
  EXPECT_EQ(m["type"], "human");
  EXPECT_EQ(m["content"], "hello");
  EXPECT_FALSE(m.contains("lc"));
  EXPECT_FALSE(m.contains("kwargs"));
}

TEST(NormalizeMessage, ClientMintedIdIsPreserved) {
  Json m = normalize_message(Json::parse(R"({"type":"human","content":"x","id":"0193-client"})"));
  EXPECT_EQ(m["id"], "0193-client");
}

TEST(NormalizeMessage, ServerExampleRoundTripsUnchanged) {
  // AGENT_SERVER_API.md §3, an AI message with usage metadata.
  Json wire =
      Json::parse(R"({"id":"run-01a22a55-fc6c-74db-bf2d-b1012e9e7f7e","content":"Let me check.",
    "additional_kwargs":{},"response_metadata":{"finish_reason":"tool_calls","model_name":"scripted-1"},
    "tool_calls":[{"name":"delete_file","args":{"path":"/tmp/x"},"id":"call_9","type":"tool_call"}],
    "invalid_tool_calls":[],"usage_metadata":{"input_tokens":10,"output_tokens":5,"total_tokens":15,
    "input_token_details":{},"output_token_details":{}},"type":"ai"})");
  EXPECT_EQ(normalize_message(wire), wire);
}

TEST(NormalizeMessage, UnknownFieldsAreKept) {
  Json m = normalize_message(Json::parse(
      R"({"type":"tool","tool_call_id":"c1","content":"x","artifact":{"rows":3},"status":"success","x-extra":1})"));
  EXPECT_EQ(m["artifact"], Json::parse(R"({"rows":3})"));
  EXPECT_EQ(m["x-extra"], 1);
  EXPECT_EQ(m["status"], "success");
}

TEST(NormalizeMessage, ChunkTypeBecomesCanonicalAndKeepsChunks) {
  Json m = normalize_message(Json::parse(
      R"({"type":"AIMessageChunk","id":"run-1","content":"He","tool_call_chunks":[{"index":0,"args":"{"}]})"));
  EXPECT_EQ(m["type"], "ai");
  EXPECT_EQ(m["tool_call_chunks"].size(), 1u);
}

TEST(NormalizeMessage, UnparsableToolCallBecomesInvalidToolCall) {
  Json m = normalize_message(Json::parse(
      R"({"type":"ai","content":"","tool_calls":[{"id":"c1","name":"f","args":"{oops"}]})"));
  EXPECT_EQ(m["tool_calls"], Json::array());
  ASSERT_EQ(m["invalid_tool_calls"].size(), 1u);
  EXPECT_EQ(m["invalid_tool_calls"][0]["args"], "{oops");
  EXPECT_EQ(m["invalid_tool_calls"][0]["type"], "invalid_tool_call");
}

TEST(NormalizeMessage, DeveloperRoleIsASystemMessageMarkedForOpenAi) {
  Json m = normalize_message(Json::parse(R"({"role":"developer","content":"rules"})"));
  EXPECT_EQ(m["type"], "system");
  EXPECT_EQ(m["additional_kwargs"]["__openai_role__"], "developer");
}

TEST(NormalizeMessage, OtherRolesBecomeChatMessagesKeepingTheRole) {
  Json m = normalize_message(Json::parse(R"({"role":"critic","content":"meh"})"));
  EXPECT_EQ(m["type"], "chat");
  EXPECT_EQ(m["role"], "critic");
}

TEST(NormalizeMessage, RoleNamedInAnotherCaseIsItsType) {
  Json m = normalize_message(Json::parse(R"({"role":"User","content":"hi"})"));
  EXPECT_EQ(m["type"], "human");
  EXPECT_FALSE(m.contains("role"));
}

TEST(NormalizeMessage, TypeMayBeARoleName) {
  EXPECT_EQ(normalize_message(Json::parse(R"({"type":"assistant","content":"x"})"))["type"], "ai");
  EXPECT_EQ(normalize_message(Json::parse(R"({"type":"user","content":"x"})"))["type"], "human");
}

void expect_refused(const Json& message, const std::string& text) {
  try {
    normalize_message(message);
    ADD_FAILURE() << "accepted " << message.dump();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()), text);
  }
}

TEST(NormalizeMessage, RefusesAnUnknownType) {
  expect_refused(Json::parse(R"({"type":"robot","content":"x"})"),
                 "message.type 'robot' is not a known message type");
}

TEST(NormalizeMessage, RefusesAnUnknownClassNamingIt) {
  expect_refused(
      Json::parse(
          R"({"lc":1,"type":"constructor","id":["x","CriticMessage"],"kwargs":{"content":"x"}})"),
      "message.type 'CriticMessage' is not a known message type");
}

TEST(NormalizeMessage, RefusesADeveloperMessageWhoseAdditionalKwargsIsNotAnObject) {
  expect_refused(Json::parse(R"({"role":"developer","content":"x","additional_kwargs":"no"})"),
                 "message.additional_kwargs must be an object");
}

TEST(NormalizeMessage, RefusesAMessageWithoutTypeOrRole) {
  expect_refused(Json::parse(R"({"content":"x"})"),
                 "message.type missing: expected a \"type\" or a \"role\"");
}

TEST(NormalizeMessage, RefusesToolMessageWithoutCallId) {
  expect_refused(Json::parse(R"({"type":"tool","content":"x"})"),
                 "message.tool_call_id is required for a tool message (a string)");
}

TEST(NormalizeMessage, RefusesContentThatIsNeitherTextNorBlocks) {
  expect_refused(Json::parse(R"({"type":"human","content":5})"),
                 "message.content must be a string or a list of content blocks");
}

TEST(NormalizeMessage, RefusesRemoveWithoutId) {
  expect_refused(Json::parse(R"({"type":"remove"})"),
                 "message.id is required for a remove message");
}

TEST(NormalizeMessage, RefusesABadToolStatus) {
  expect_refused(Json::parse(R"({"type":"tool","tool_call_id":"c","content":"x","status":"ok"})"),
                 "message.status must be \"success\" or \"error\"");
}

TEST(NormalizeMessage, StoredFormComesBackUnchanged) {
  const Json messages[] = {
      human_message("hi", "h-1"), system_message("be brief", "s-1"),
      ai_message("", Json::array({make_tool_call("f", {{"a", 1}}, "call_1")}), "a-1"),
      ai_message("done", Json::array(), "a-2"),
      tool_message("42", "call_1", "f", "success", "t-1")};
  for (const Json& message : messages) EXPECT_EQ(normalize_message(message), message);
}

TEST(NormalizeMessage, StoredFormAiMessagePromotesProviderToolCalls) {
  Json stored = ai_message("", Json::array(), "a-1");
  stored["additional_kwargs"]["tool_calls"] = Json::parse(
      R"([{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}])");
  Json m = normalize_message(stored);
  EXPECT_EQ(m["tool_calls"],
            Json::parse(R"([{"id":"call_1","name":"f","args":{"a":1},"type":"tool_call"}])"));
}

TEST(NormalizeMessage, StoredFormToolMessageWithBadStatusIsRefused) {
  Json stored = tool_message("x", "call_1", "f", "success", "t-1");
  stored["status"] = "ok";
  expect_refused(stored, "message.status must be \"success\" or \"error\"");
}

TEST(NormalizeMessage, StoredFormDeveloperMessageBecomesSystem) {
  Json stored = system_message("rules", "s-1");
  stored["type"] = "developer";
  Json m = normalize_message(stored);
  EXPECT_EQ(m["type"], "system");
  EXPECT_EQ(m["additional_kwargs"]["__openai_role__"], "developer");
}

}  // namespace
}  // namespace tollgate

namespace tollgate {
namespace {

TEST(NormalizeMessage, StreamingChunkDoesNotPromoteProviderFragments) {
  Json m = normalize_message(Json::parse(R"({"type":"AIMessageChunk","id":"run-1","content":"",
      "tool_call_chunks":[{"index":0,"id":"call_1","name":"f","args":"{\"a\""}],
      "additional_kwargs":{"tool_calls":[{"index":0,"id":"call_1","type":"function",
      "function":{"name":"f","arguments":"{\"a\""}}]}})"));
  EXPECT_EQ(m["tool_calls"], Json::array());
  EXPECT_EQ(m["invalid_tool_calls"], Json::array());
}

// Arguments sent as text come from clients too (input messages): text nested deeper than
// any tool's arguments is malformed, never a deep tree a copy or a dump would recurse through.
TEST(NormalizeMessage, ArgumentTextNestedTooDeeplyIsMalformedArgs) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
  deep += "1" + std::string(100000, '}');
  Json m = normalize_message(
      Json{{"type", "ai"}, {"content", ""}, {"tool_calls", {{{"name", "f"}, {"id", "c1"}, {"args", deep}}}}});
  EXPECT_EQ(m["tool_calls"], Json::array());
  ASSERT_EQ(m["invalid_tool_calls"].size(), 1u);
  EXPECT_EQ(m["invalid_tool_calls"][0]["error"], "Malformed args.");
}

}  // namespace
}  // namespace tollgate

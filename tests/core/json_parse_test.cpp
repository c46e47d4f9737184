#include "tollgate/json_parse.h"

#include <gtest/gtest.h>

#include <string>

#include "tollgate/error.h"

namespace tollgate {
namespace {

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string nested_objects(std::size_t depth) {
  std::string text;
  for (std::size_t i = 0; i < depth; ++i) text += "{\"a\":";
  text += "1";
  text += std::string(depth, '}');
  return text;
}

std::string message_of(std::string_view text, std::string_view subject = "JSON text") {
  try {
    parse_json(text, subject);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    return e.what();
  }
  return "";
}

TEST(ParseJson, ParsesLikeJsonParse) {
  const std::string text =
      R"({"a":[1,-2,3.5,true,false,null,"x\u00e9"],"b":{"c":{}},"d":[],"e":18446744073709551615})";
  EXPECT_EQ(parse_json(text), Json::parse(text));
}

TEST(ParseJson, ALaterDuplicateKeyWinsAsInJsonParse) {
  EXPECT_EQ(parse_json(R"({"a":1,"a":{"b":2}})"), Json::parse(R"({"a":1,"a":{"b":2}})"));
}

TEST(ParseJson, ScalarsAtTheTopLevelParse) {
  EXPECT_EQ(parse_json("42"), Json(42));
  EXPECT_EQ(parse_json(R"("text")"), Json("text"));
}

TEST(ParseJson, NestingAtTheLimitIsAccepted) {
  Json value = parse_json(nested_arrays(kMaxJsonDepth));
  EXPECT_TRUE(value.is_array());
  EXPECT_NO_THROW(parse_json(nested_objects(kMaxJsonDepth)));
}

TEST(ParseJson, ArraysNestedOneLevelTooDeepAreRefusedNamingTheLimit) {
  EXPECT_EQ(message_of(nested_arrays(kMaxJsonDepth + 1), "Request body"),
            "Request body nests deeper than 256 levels");
}

TEST(ParseJson, ObjectsNestedOneLevelTooDeepAreRefused) {
  EXPECT_EQ(message_of(nested_objects(kMaxJsonDepth + 1)), "JSON text nests deeper than 256 levels");
}

// Deep enough to overflow the stack of a recursive copy or dump (about 63,000 levels did).
TEST(ParseJson, AVeryDeepDocumentIsRefusedWithoutBuildingIt) {
  EXPECT_NE(message_of(std::string(400000, '[')).find("nests deeper than 256 levels"),
            std::string::npos);
  EXPECT_NE(message_of(nested_objects(200000)).find("nests deeper"), std::string::npos);
}

TEST(ParseJson, TheLimitCanBeChosen) {
  EXPECT_NO_THROW(parse_json("[[1]]", "x", 2));
  EXPECT_THROW(parse_json("[[[1]]]", "x", 2), Error);
}

TEST(ParseJson, MalformedTextIsRefusedSayingWhere) {
  const std::string message = message_of("{\"metadata\": ", "Request body");
  EXPECT_EQ(message.rfind("Request body is not valid JSON: ", 0), 0u) << message;
  EXPECT_NE(message.find("line 1"), std::string::npos) << message;
}

TEST(ParseJson, TrailingTextIsRefused) {
  EXPECT_THROW(parse_json("{} {}"), Error);
}

TEST(TryParseJson, AnswersADiscardedValueForMalformedOrTooDeepText) {
  EXPECT_TRUE(try_parse_json("{").is_discarded());
  EXPECT_TRUE(try_parse_json(nested_arrays(kMaxJsonDepth + 1)).is_discarded());
  EXPECT_EQ(try_parse_json(R"({"a":1})"), Json({{"a", 1}}));
}

}  // namespace
}  // namespace tollgate

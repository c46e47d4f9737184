#include "checkpoint/saver_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tollgate/error.h"

namespace tollgate::checkpoint_internal {
namespace {

std::string text_of_step(int step) {
  return R"({"source":"loop","step":)" + std::to_string(step) + R"(,"parents":{}})";
}

TEST(MetadataMemoTest, EachTextIsAnsweredAsItParses) {
  MetadataMemo memo;
  std::vector<std::string> texts;
  for (int step = 0; step < 20; ++step) texts.push_back(text_of_step(step));
  // Again and again, in and past the memo's few entries: never another text's metadata.
  for (int round = 0; round < 3; ++round) {
    for (const std::string& text : texts) {
      EXPECT_EQ(memo.parse(text, "c"), Json::parse(text)) << text;
      EXPECT_EQ(memo.parse(text, "c"), Json::parse(text)) << text;
    }
  }
  EXPECT_EQ(memo.parse("{}", "c"), Json::object());
  EXPECT_EQ(memo.parse("null", "c"), Json());
}

TEST(MetadataMemoTest, AMalformedTextIsAnInternalErrorNamingItsCheckpointEveryTime) {
  MetadataMemo memo;
  for (const std::string text : {"", "{\"step\":", "{} x"}) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      try {
        memo.parse(text, "checkpoint-7");
        ADD_FAILURE() << "parsed: " << text;
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kInternal);
        EXPECT_NE(std::string(e.what()).find("checkpoint-7 is malformed"), std::string::npos)
            << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace tollgate::checkpoint_internal

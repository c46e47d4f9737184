// The add_messages reducer against the reference traces (golden/G_add_messages_reducer.json,
// EXAMPLES.md §13.5): each case merges one write into [human 1 "hi", ai 2 "hello"], through the
// pure reducer and through an add_messages channel.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "graph/channel.h"
#include "tollgate/error.h"

namespace tollgate::graph_internal {
namespace {

Json load_golden_cases() {
  // A copy of shared/reference/golden/G_add_messages_reducer.json, kept with the tests.
  std::ifstream in(std::string(TOLLGATE_SOURCE_DIR) + "/tests/graph/data/G_add_messages_reducer.json");
  EXPECT_TRUE(in.good()) << "golden file missing";
  return Json::parse(in).at("cases");
}

Json left_messages() {
  return Json::parse(R"([
    {"type": "human", "id": "1", "content": "hi"},
    {"type": "ai", "id": "2", "content": "hello", "tool_calls": []}
  ])");
}

enum class Via { kPureFunction, kChannel };

class AddMessagesGoldenTest : public ::testing::TestWithParam<Via> {
 protected:
  Json merge(const Json& right) {
    if (GetParam() == Via::kPureFunction) return add_messages(left_messages(), right);
    auto channel = make_add_messages_channel("messages");
    channel->update({left_messages()});
    channel->update({right});
    return *channel->get();
  }

  // The reference prints a JavaScript error as "Error: <message>".
  std::string error_of(const Json& right) {
    try {
      merge(right);
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
      return std::string("Error: ") + error.what();
    }
    return "no error";
  }

  Json cases_ = load_golden_cases();
};

TEST_P(AddMessagesGoldenTest, NewIdIsAppended) {
  EXPECT_EQ(merge(Json{{"type", "human"}, {"id", "3"}, {"content", "more"}}), cases_["append"]);
}

TEST_P(AddMessagesGoldenTest, SameIdIsReplacedInPlace) {
  Json edited =
      Json::parse(R"json({"type":"ai","id":"2","content":"hello (edited)","tool_calls":[]})json");
  EXPECT_EQ(merge(edited), cases_["replace_same_id"]);
}

TEST_P(AddMessagesGoldenTest, RemoveMessageDeletesById) {
  EXPECT_EQ(merge(Json{{"type", "remove"}, {"id", "1"}}), cases_["remove"]);
}

TEST_P(AddMessagesGoldenTest, RemoveAllKeepsOnlyWhatFollows) {
  Json right = Json::array({Json{{"type", "remove"}, {"id", cases_["REMOVE_ALL_MESSAGES"]}},
                            Json{{"type", "human"}, {"id", "9"}, {"content", "fresh"}}});
  EXPECT_EQ(merge(right), cases_["remove_all_then_add"]);
}

TEST_P(AddMessagesGoldenTest, RemovingAnUnknownIdFailsWithTheReferenceText) {
  EXPECT_EQ(error_of(Json{{"type", "remove"}, {"id", "nope"}}),
            cases_["remove_unknown_id"]["error"].get<std::string>());
}

TEST_P(AddMessagesGoldenTest, MissingIdGetsAUuid) {
  Json merged = merge(Json{{"type", "human"}, {"content", "no id"}});
  ASSERT_EQ(merged.size(), 3u);
  const bool looks_like_uuid = std::regex_match(
      merged[2]["id"].get<std::string>(),
      std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  EXPECT_EQ(looks_like_uuid, cases_["missing_id_gets_uuid"]["assignedIdLooksLikeUuid"].get<bool>())
      << merged[2]["id"];
}

TEST(AddMessagesConstantTest, RemoveAllMarkerMatchesTheReference) {
  EXPECT_EQ(std::string(kRemoveAllMessages),
            load_golden_cases()["REMOVE_ALL_MESSAGES"].get<std::string>());
}

INSTANTIATE_TEST_SUITE_P(Golden, AddMessagesGoldenTest,
                         ::testing::Values(Via::kPureFunction, Via::kChannel),
                         [](const ::testing::TestParamInfo<Via>& param_info) {
                           return param_info.param == Via::kPureFunction ? "PureFunction"
                                                                         : "Channel";
                         });

}  // namespace
}  // namespace tollgate::graph_internal

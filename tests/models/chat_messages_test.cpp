// ChatMessages: a model request's conversation, read like a JSON array and shared, not copied.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <utility>
#include <vector>

#include "support/error_assertions.h"
#include "tollgate/chat_model.h"

namespace tollgate {
namespace {

using testing::throws_error;

Json message(const char* type, const char* text) {
  return Json{{"type", type}, {"content", text}};
}

Json three() {
  return Json::array({message("human", "a"), message("ai", "b"), message("tool", "c")});
}

TEST(ChatMessagesTest, ReadsLikeTheArrayItWasBuiltFrom) {
  const ChatMessages messages = three();
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_FALSE(messages.empty());
  EXPECT_EQ(messages[1]["content"], "b");
  EXPECT_EQ(messages.front()["content"], "a");
  EXPECT_EQ(messages.back()["content"], "c");
  std::vector<std::string> seen;
  for (const Json& m : messages) seen.push_back(m["content"].get<std::string>());
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(messages.to_json(), three());
}

TEST(ChatMessagesTest, IteratesBackwardsAndFindsLikeAContainer) {
  const ChatMessages messages = three();
  std::vector<std::string> reversed;
  for (auto it = std::make_reverse_iterator(messages.end());
       it != std::make_reverse_iterator(messages.begin()); ++it) {
    reversed.push_back((*it)["type"].get<std::string>());
  }
  EXPECT_EQ(reversed, (std::vector<std::string>{"tool", "ai", "human"}));
  const auto ai = std::find_if(messages.begin(), messages.end(),
                               [](const Json& m) { return m["type"] == "ai"; });
  EXPECT_EQ(ai - messages.begin(), 1);
}

TEST(ChatMessagesTest, AFirstMessageComesBeforeTheSharedList) {
  const ChatMessages rest = three();
  const ChatMessages messages(make_json_ptr(message("system", "be brief")), rest);
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_EQ(messages[0]["type"], "system");
  EXPECT_EQ(messages[3]["content"], "c");
  EXPECT_EQ(&messages[1], &rest[0]) << "the rest is shared, not copied";
  EXPECT_EQ(rest.size(), 3u) << "the rest is unchanged";
}

TEST(ChatMessagesTest, TwoFirstMessagesKeepTheirOrder) {
  const ChatMessages inner(make_json_ptr(message("system", "inner")), ChatMessages(three()));
  const ChatMessages outer(make_json_ptr(message("system", "outer")), inner);
  ASSERT_EQ(outer.size(), 5u);
  EXPECT_EQ(outer[0]["content"], "outer");
  EXPECT_EQ(outer[1]["content"], "inner");
  EXPECT_EQ(outer[2]["content"], "a");
  EXPECT_EQ(outer.back()["content"], "c");
}

TEST(ChatMessagesTest, ACopySharesTheMessages) {
  const ChatMessages original = three();
  const ChatMessages copy = original;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(&copy[2], &original[2]);
}

TEST(ChatMessagesTest, AListMovedFromStaysWholeAfterTheTargetIsGone) {
  ChatMessages source = three();
  {
    const ChatMessages target = std::move(source);
    ASSERT_EQ(target.size(), 3u);
  }
  // The target, and whatever it took, is gone; the source still owns what it reads (the
  // sanitizer tier turns a dangling read here into a failure).
  ASSERT_EQ(source.size(), 3u);  // NOLINT(bugprone-use-after-move): what this test is about
  EXPECT_EQ(source.to_json(), three());
}

TEST(ChatMessagesTest, SharesTheListItIsGiven) {
  const JsonPtr history = make_json_ptr(three());
  const ChatMessages messages(history);
  EXPECT_EQ(&messages[0], &(*history)[0]);
}

TEST(ChatMessagesTest, NullAndDefaultAreEmpty) {
  EXPECT_TRUE(ChatMessages().empty());
  EXPECT_TRUE(ChatMessages(Json()).empty());
  EXPECT_TRUE(ChatMessages(JsonPtr()).empty());
  EXPECT_EQ(ChatMessages().to_json(), Json::array());
}

TEST(ChatMessagesTest, RefusesAValueThatIsNotAnArray) {
  EXPECT_TRUE(throws_error([] { ChatMessages bad(Json{{"type", "human"}}); },
                           ErrorCode::kInvalidArgument, {"messages", "array", "object"}));
  EXPECT_TRUE(throws_error([] { ChatMessages bad(Json("hello")); }, ErrorCode::kInvalidArgument,
                           {"messages", "string"}));
}

TEST(ChatMessagesTest, AtChecksTheIndex) {
  const ChatMessages messages(make_json_ptr(message("system", "s")), ChatMessages(three()));
  EXPECT_EQ(messages.at(3)["content"], "c");
  EXPECT_THROW((void)messages.at(4), std::out_of_range);
}

}  // namespace
}  // namespace tollgate

// json_object: objects built from alternating keys and values, values moved in.
#include <gtest/gtest.h>

#include <string>

#include "tollgate/json.h"

namespace tollgate {
namespace {

TEST(JsonObjectTest, EqualsTheBracedForm) {
  const std::string name = "lookup";
  const Json args{{"query", "q1"}};
  EXPECT_EQ(json_object("name", name, "args", args, "id", nullptr, "n", 3, "ok", true),
            (Json{{"name", name}, {"args", args}, {"id", nullptr}, {"n", 3}, {"ok", true}}));
}

TEST(JsonObjectTest, NoMembersIsAnEmptyObjectNotNull) {
  const Json empty = json_object();
  EXPECT_TRUE(empty.is_object());
  EXPECT_TRUE(empty.empty());
}

TEST(JsonObjectTest, MovesAnRvalueValueInsteadOfCopyingIt) {
  Json big = Json::array({"a", "b", "c"});
  const Json* items = &big[0];
  const Json object = json_object("list", std::move(big));
  EXPECT_EQ(&object["list"][0], items) << "the array's storage moved with it";
}

TEST(JsonObjectTest, ARepeatedKeyKeepsItsFirstValue) {
  EXPECT_EQ(json_object("k", 1, "k", 2), (Json{{"k", 1}}));
}

}  // namespace
}  // namespace tollgate

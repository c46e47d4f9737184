#include "server/wire_format.h"

#include <gtest/gtest.h>

#include "tollgate/error.h"

namespace tollgate::server {
namespace {

// The one message of an input {"messages": [message]}, normalised.
Json normalized(const Json& message) {
  return normalize_input(Json{{"messages", Json::array({message})}})["messages"][0];
}

TEST(WireFormatTest, RoleMessagesBecomeTypedWithAnId) {
  Json m = normalized(Json{{"role", "user"}, {"content", "hi"}});
  EXPECT_EQ(m["type"], "human");
  EXPECT_FALSE(m.contains("role"));
  EXPECT_TRUE(m["id"].is_string());
  EXPECT_FALSE(m["id"].get<std::string>().empty());
}

TEST(WireFormatTest, ClientIdsAreKept) {
  Json m = normalized(Json{{"type", "human"}, {"content", "hi"}, {"id", "client-1"}});
  EXPECT_EQ(m["id"], "client-1");
}

TEST(WireFormatTest, SerializedLangChainClassesAreUnwrapped) {
  Json m = normalized(Json{{"lc", 1},
                           {"type", "constructor"},
                           {"id", {"langchain_core", "messages", "HumanMessage"}},
                           {"kwargs", {{"content", "hello"}}}});
  EXPECT_EQ(m["type"], "human");
  EXPECT_EQ(m["content"], "hello");
}

TEST(WireFormatTest, AMessageOfUnknownTypeIsRefusedNamingTheField) {
  try {
    normalized(Json{{"type", "robot"}, {"content", "hi"}});
    FAIL() << "an unknown message type was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("type"), std::string::npos) << e.what();
  }
}

TEST(WireFormatTest, InputWithoutMessagesPassesUnchanged) {
  Json input{{"seconds", 2}};
  EXPECT_EQ(normalize_input(input), input);
}

TEST(WireFormatTest, SnapshotWithoutCheckpointIsTheEmptyState) {
  StateSnapshot snapshot;
  Json state = state_to_json(snapshot);
  EXPECT_TRUE(state["checkpoint"].is_null());
  EXPECT_EQ(state["values"], Json::object());
}

TEST(WireFormatTest, InterruptsByTaskListOnlyTasksWithInterrupts) {
  StateSnapshot snapshot;
  snapshot.next = {"review", "other"};
  TaskInfo review;
  review.id = "t1";
  review.interrupts = {Interrupt{"i1", "q"}};
  TaskInfo other;
  other.id = "t2";
  snapshot.tasks = {review, other};
  EXPECT_EQ(interrupts_by_task(snapshot), Json({{"t1", {{{"id", "i1"}, {"value", "q"}}}}}));
}

TEST(WireFormatTest, StaticBreakpointListsWaitingTasksWithEmptyLists) {
  StateSnapshot snapshot;
  snapshot.next = {"tool"};
  TaskInfo tool;
  tool.id = "t9";
  snapshot.tasks = {tool};
  EXPECT_EQ(interrupts_by_task(snapshot), Json({{"t9", Json::array()}}));
}

TEST(WireFormatTest, MetadataContainmentNeedsEveryKeyEqual) {
  Json metadata{{"a", 1}, {"b", "x"}};
  EXPECT_TRUE(json_contains(metadata, Json{{"a", 1}}));
  EXPECT_FALSE(json_contains(metadata, Json{{"a", 2}}));
  EXPECT_FALSE(json_contains(metadata, Json{{"c", 1}}));
  EXPECT_TRUE(json_contains(metadata, Json::object()));
}

// Stream events are written by hand around data dumped once; every piece must read as the
// serializer writes it, or a client replaying the stream would see other bytes.
TEST(WireFormatTest, JsonStringsAreWrittenAsTheSerializerWritesThem) {
  const std::string texts[] = {"plain words", "quote \" and \\ backslash", "tab\tnew\nline\x01",
                               "20 \xC2\xB0" "C", "broken \xC3( utf-8", ""};
  for (const std::string& text : texts) {
    std::string out;
    append_json_string(out, text);
    EXPECT_EQ(out, event_json(Json(text))) << text;
  }
}

TEST(WireFormatTest, AnEmptyViewWithNoDataIsAnEmptyString) {
  std::string out;
  append_json_string(out, std::string_view());  // data() is null
  EXPECT_EQ(out, "\"\"");
}

TEST(WireFormatTest, TextOfEveryLengthIsWrittenAsTheSerializerWritesIt) {
  // Text is read eight bytes at a time: escapes, UTF-8 sequences and malformed bytes at every
  // position of a word and across words, in text of 0 to 40 bytes, after other text.
  const std::string pieces[] = {"a",
                                "Z",
                                " ",
                                "~",
                                "\"",
                                "\\",
                                "\n",
                                "\x01",
                                "\x1F",
                                "\x7F",
                                "\xC2\xB0",
                                "\xE2\x82\xAC",
                                "\xF0\x9F\x98\x80",
                                "\xFF"};
  std::uint32_t seed = 2024;
  auto next = [&seed] { return seed = seed * 1103515245U + 12345U; };
  for (int i = 0; i < 4000; ++i) {
    std::string text;
    const std::size_t length = next() % 41;
    while (text.size() < length) {
      // Mostly plain letters, as text is; malformed bytes seldom, so most texts are valid.
      const std::uint32_t pick = (next() >> 8) % 100;
      text += pick < 60 ? pieces[0] : pick < 99 ? pieces[1 + pick % 12] : pieces[13];
    }
    std::string out = "prefix,";
    append_json_string(out, text);
    EXPECT_EQ(out, "prefix," + Json(text).dump(-1, ' ', false, Json::error_handler_t::replace))
        << Json(text).dump(-1, ' ', true, Json::error_handler_t::replace);
  }
}

TEST(WireFormatTest, OneByteToEscapeAnywhereInPlainTextIsEscaped) {
  // Plain text is appended as it is: one byte that is not plain, at any position of text of
  // any length, must still be written as the serializer writes it.
  for (const char* odd : {"\"", "\\", "\n", "\x01", "\x7F", "\xC2\xB0", "\xFF"}) {
    for (std::size_t length = 1; length <= 40; ++length) {
      for (std::size_t at = 0; at < length; ++at) {
        std::string text(length, 'a');
        text.replace(at, 1, odd);
        std::string out = "prefix,";
        append_json_string(out, text);
        EXPECT_EQ(out, "prefix," + Json(text).dump(-1, ' ', false, Json::error_handler_t::replace))
            << Json(text).dump(-1, ' ', true, Json::error_handler_t::replace);
      }
    }
  }
}

TEST(WireFormatTest, EventJsonWritesWhatTheSerializerWrites) {
  // Every kind of value, and strings of random bytes: escapes, UTF-8 of every length, malformed
  // sequences (surrogates, overlong forms, cut short) that the serializer replaces.
  std::vector<Json> values = {
      nullptr, true, false, 0, -1, std::int64_t{-9223372036854775807} - 1,
      std::uint64_t{18446744073709551615U}, 0.1, 1e20, -2.5e-7, 3.0,
      Json::array(), Json::object(), Json::binary({1, 2, 3}),
      Json{{"b", {1, "two", nullptr}}, {"a", Json::object()}, {"c\n\"", {{"d", 1.5}}}},
      "\xED\xA0\x80 surrogate", "\xC0\xAF overlong", "\xF0\x9F\x98", "\xF0\x9F\x98\x80 ok",
      "\x7F del \x1F unit", std::string("nul \0 inside", 13)};
  std::uint32_t seed = 12345;
  auto next = [&seed] { return seed = seed * 1103515245U + 12345U; };
  for (int i = 0; i < 2000; ++i) {
    std::string text(next() % 12, ' ');
    for (char& c : text) c = static_cast<char>(next() >> 16);
    values.emplace_back(text);
    values.push_back(Json{{text, Json::array({text, i})}});
  }
  for (const Json& value : values) {
    EXPECT_EQ(event_json(value), value.dump(-1, ' ', false, Json::error_handler_t::replace))
        << value.dump(-1, ' ', true, Json::error_handler_t::replace);
  }
}

TEST(WireFormatTest, AnObjectWithoutOneMemberReadsAsItsDumpWithoutIt) {
  Json values{{"messages", Json::array({"a"})}, {"__interrupt__", Json::array()}, {"z", 1}};
  Json without = values;
  without.erase("__interrupt__");
  EXPECT_EQ(event_json_without(values, "__interrupt__"), event_json(without));
  EXPECT_EQ(event_json_without(Json::object(), "x"), "{}");
}

TEST(WireFormatTest, AnObjectWithAMemberGivenAsTextReadsAsItsDumpWithIt) {
  const Json input = Json::array({1, "two"});
  for (const Json& object :
       {Json{{"id", "t1"}, {"name", "a"}, {"triggers", Json::array({"b"})}}, Json{{"zeta", 1}},
        Json{{"alpha", 1}}, Json::object(), Json{{"id", 1}, {"input", "replaced"}, {"name", 2}}}) {
    Json with = object;
    with["input"] = input;
    EXPECT_EQ(event_json_with_text(object, "input", event_json(input)), event_json(with))
        << object.dump();
  }
}

TEST(WireFormatTest, AStateWithOneMoreMemberIsWrittenAsTheObjectWithIt) {
  const State state = State::from_json(
      Json{{"Upper", 1}, {"a", "x"}, {"messages", Json::array({"hi"})}, {"z", nullptr}});
  const std::string text = R"([{"id":"i"}])";
  // The member's place among the keys: first, between two, last; a key of that name gives way.
  for (const std::string key : {"A", "__interrupt__", "b", "zz", "a"}) {
    Json expected = state.to_json();
    expected[key] = Json::parse(text);
    EXPECT_EQ(state_event_json_with(state, key, text), event_json(expected)) << key;
  }
  EXPECT_EQ(state_event_json_with(State(), "k", "1"), R"({"k":1})");
  EXPECT_EQ(state_event_json(state), event_json(state.to_json()));
}

TEST(WireFormatTest, AStatesKnownTextIsCopiedForThatVeryValueOnly) {
  const State state = State::from_json(
      Json{{"a", "x"}, {"messages", Json::array({"hi", "there"})}, {"n", 1}, {"z", nullptr}});
  // Known texts that differ from what the writer would write, to tell a copy from a write:
  // the very value's text is copied; an equal value held elsewhere is written out; a null
  // stays null.
  ValueTexts known;
  known.try_emplace("messages", state.value_ptr("messages"), R"(["K"])");
  known.try_emplace("n", std::make_shared<const Json>(1), "7");
  known.try_emplace("z", std::make_shared<const Json>(2), "2");
  EXPECT_EQ(state_event_json(state, &known), R"({"a":"x","messages":["K"],"n":1,"z":null})");
  EXPECT_EQ(state_event_json_with(state, "__interrupt__", "[]", &known),
            R"({"__interrupt__":[],"a":"x","messages":["K"],"n":1,"z":null})");
  EXPECT_EQ(state_event_json(state, nullptr), event_json(state.to_json()));
}

TEST(WireFormatTest, AnArrayIsAppendedWithItsKeptItemsCopiedFromThePreviousText) {
  const Json::array_t items = {Json{{"id", "m0"}}, "b", 3};
  // A previous text that differs from what the writer would write, to tell a copy from a
  // write; its ends are counted from its first byte, and so are the appended text's.
  const std::string previous = R"(["K0","K1","K2"])";
  std::vector<std::size_t> ends = {5, 10, 15};
  std::string out = "prefix:";
  append_array_json(out, items, previous, 2, ends);
  EXPECT_EQ(out, R"(prefix:["K0","K1",3])");
  EXPECT_EQ(ends, (std::vector<std::size_t>{5, 10, 12}));
  // Two new items after one kept, each end where its text ends.
  ends = {5, 10, 15};
  out.clear();
  append_array_json(out, items, previous, 1, ends);
  EXPECT_EQ(out, R"(["K0","b",3])");
  EXPECT_EQ(ends, (std::vector<std::size_t>{5, 9, 11}));
  // Nothing kept: the whole array is written, the ends made its own.
  ends.clear();
  out.clear();
  append_array_json(out, items, previous, 2, ends);
  EXPECT_EQ(out, event_json(Json(items)));
  EXPECT_EQ(ends, (std::vector<std::size_t>{12, 16, 18}));
  // Ends that run past the previous text are not that text's: written whole.
  std::vector<std::size_t> beyond = {5, 40};
  out.clear();
  append_array_json(out, items, previous, 2, beyond);
  EXPECT_EQ(out, event_json(Json(items)));
  out.clear();
  append_array_json(out, {}, "", 0, beyond);
  EXPECT_EQ(out, "[]");
  EXPECT_TRUE(beyond.empty());
}

}  // namespace
}  // namespace tollgate::server

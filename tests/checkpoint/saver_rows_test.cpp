#include "checkpoint/saver_rows.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tollgate/error.h"

namespace tollgate::checkpoint_internal {
namespace {

std::string text_of_step(int step) {
  return R"({"source":"loop","step":)" + std::to_string(step) + R"(,"parents":{}})";
}

TEST(MetadataTextTest, IsTheTextDumpWrites) {
  const Json metadata = {{"source", "loop"},
                         {"step", -1},
                         {"parents", Json::object()},
                         {"run_id", "01a24d44-7edc-7131-97d0-85a8f00c542c"},
                         {"score", 0.1},
                         {"big", std::uint64_t{18446744073709551615ULL}},
                         {"note", "caf\xC3\xA9 \"quoted\" \\ \n\t\x01 \xF0\x9F\x98\x80"},
                         {"tags", Json::array({true, false, nullptr, Json::array(), 2.5e-8})}};
  EXPECT_EQ(metadata_text(metadata), metadata.dump());
  EXPECT_EQ(metadata_text(Json::object()), "{}");
}

TEST(MetadataTextTest, TextThatIsNotUtf8IsAnErrorAsDumpMakesIt) {
  for (const std::string bad : {"\xC3", "a\xFF", "\xED\xA0\x80"}) {
    try {
      metadata_text(Json{{"note", bad}});
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("put: metadata cannot be stored"), std::string::npos)
          << e.what();
    }
  }
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

using Writes = std::vector<std::pair<std::string, Json>>;

// The writes a model's step makes, with a special one among them.
Writes mixed_writes() {
  return {{"jump_to", nullptr},
          {"messages", Json::array({"hi"})},
          {std::string(kInterruptChannel), Json::array({"why"})},
          {"branch:to:tools", nullptr},
          {"x", 1},
          {"y", 2}};
}

TEST(WriteRowsTest, EachRunOfOrdinaryWritesIsOneRowAndEachSpecialWriteItsOwn) {
  const Writes writes = mixed_writes();
  const auto encoded = encode_write_values(writes);
  const std::vector<WriteRow> rows = plan_write_rows(writes, encoded);
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_EQ(rows[0].idx, 0);
  EXPECT_EQ(rows[0].span, 2);
  EXPECT_EQ(rows[0].channel, "");
  EXPECT_NE(rows[0].channel.data(), nullptr);  // bound as '', never as NULL
  EXPECT_EQ(decode_value(rows[0].packed.data(), rows[0].packed.size()),
            Json::array({"jump_to", nullptr, "messages", Json::array({"hi"})}));
  EXPECT_TRUE(rows[1].special);
  EXPECT_EQ(rows[1].idx, *special_write_index(kInterruptChannel));
  EXPECT_EQ(rows[1].span, 1);
  EXPECT_EQ(rows[1].channel, kInterruptChannel);
  EXPECT_EQ(&rows[1].value(encoded), &encoded[2]);
  EXPECT_EQ(rows[2].idx, 3);
  EXPECT_EQ(rows[2].span, 3);
  EXPECT_EQ(write_row_bytes(rows[2], encoded),
            encoded[3].size() + encoded[4].size() + encoded[5].size());
}

TEST(WriteRowsTest, ALoneOrdinaryWriteIsARowOfOne) {
  const Writes writes = {{"x", 1}};
  const auto encoded = encode_write_values(writes);
  const std::vector<WriteRow> rows = plan_write_rows(writes, encoded);
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].span, 1);
  EXPECT_EQ(rows[0].channel, "x");
  EXPECT_FALSE(rows[0].special);
  EXPECT_EQ(rows[0].value(encoded), encoded[0]);
  EXPECT_TRUE(plan_write_rows({}, {}).empty());
}

TEST(WriteRowsTest, OnlyTheWritesWhoseIndicesNoStoredRowHoldsAreLeft) {
  const Writes writes = {{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}};
  const auto encoded = encode_write_values(writes);
  const WriteRow row = plan_write_rows(writes, encoded).at(0);
  ASSERT_EQ(row.span, 4);
  // The positions of the rows left, each a row of one write at its own index and channel.
  auto left = [&](const std::vector<std::pair<std::int64_t, std::int64_t>>& taken) {
    std::vector<std::size_t> positions;
    for (const WriteRow& single : rows_of_free_writes(row, taken, writes)) {
      EXPECT_EQ(single.span, 1);
      EXPECT_FALSE(single.special);
      EXPECT_EQ(single.idx, static_cast<std::int64_t>(single.first));
      EXPECT_EQ(single.channel, writes.at(single.first).first);
      positions.push_back(single.first);
    }
    return positions;
  };
  // Stored: a row of 2 at index 0 and a special one (never an ordinary index).
  EXPECT_EQ(left({{0, 2}, {-3, 1}}), (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(left({{1, 1}, {3, 1}}), (std::vector<std::size_t>{0, 2}));
  EXPECT_TRUE(left({{0, 4}}).empty());
  EXPECT_EQ(left({}).size(), 4U);
}

TEST(WriteRowsTest, StoredRowsOfSeveralWritesReadBackInOrder) {
  const Writes writes = mixed_writes();
  const auto encoded = encode_write_values(writes);
  std::vector<StoredWrite> stored;
  for (const WriteRow& row : plan_write_rows(writes, encoded)) {
    stored.push_back(StoredWrite{"task", std::string(row.channel), row.value(encoded), row.span});
  }
  CheckpointTuple tuple;
  decode_pending_writes(std::move(stored), tuple);
  ASSERT_EQ(tuple.pending_writes.size(), writes.size());
  for (std::size_t i = 0; i < writes.size(); ++i) {
    EXPECT_EQ(tuple.pending_writes[i], (PendingWrite{"task", writes[i].first, writes[i].second}));
  }
}

TEST(WriteRowsTest, ADamagedRowOfSeveralWritesIsAnInternalError) {
  const std::vector<Json> damaged = {
      Json::array({"x", 1}),        // one write where the span says two
      Json::array({"x", 1, 2, 3}),  // a channel that is not a text
      Json{{"x", 1}, {"y", 2}},     // not a list
  };
  for (const Json& value : damaged) {
    CheckpointTuple tuple;
    tuple.checkpoint.id = "checkpoint-7";
    std::vector<StoredWrite> stored = {StoredWrite{"task", "", encode_value(value), 2}};
    try {
      decode_pending_writes(std::move(stored), tuple);
      ADD_FAILURE() << "read: " << value.dump();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInternal);
      EXPECT_NE(std::string(e.what()).find("checkpoint-7"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tollgate::checkpoint_internal

// The hex encoder and decoder every module uses, and the percent-escapes built on it.
#include "core/hex.h"
#include "core/percent.h"

#include <gtest/gtest.h>

#include <string>

namespace tollgate::core {
namespace {

TEST(HexValue, ReadsDigitsOfEitherCase) {
  EXPECT_EQ(hex_value('0'), 0);
  EXPECT_EQ(hex_value('9'), 9);
  EXPECT_EQ(hex_value('a'), 10);
  EXPECT_EQ(hex_value('F'), 15);
}

TEST(HexValue, IsMinusOneForOtherCharacters) {
  EXPECT_EQ(hex_value('g'), -1);
  EXPECT_EQ(hex_value('-'), -1);
  EXPECT_EQ(hex_value('\0'), -1);
}

TEST(HexByteAt, ReadsTwoDigits) {
  EXPECT_EQ(hex_byte_at("%2F", 1), 0x2F);
  EXPECT_EQ(hex_byte_at("ff", 0), 255);
}

TEST(HexByteAt, IsMinusOneWithoutTwoDigits) {
  EXPECT_EQ(hex_byte_at("%2", 1), -1);
  EXPECT_EQ(hex_byte_at("%2g", 1), -1);
  EXPECT_EQ(hex_byte_at("ab", 2), -1);
  EXPECT_EQ(hex_byte_at("ab", 5), -1);
}

TEST(IsHex, IsTrueOnlyForDigitsOnly) {
  EXPECT_TRUE(is_hex("0123456789abcdefABCDEF"));
  EXPECT_FALSE(is_hex(""));
  EXPECT_FALSE(is_hex("12 3"));
}

TEST(PutHex, WritesTheLowDigitsZeroPadded) {
  std::string out(6, '.');
  put_hex(out.data() + 1, 0xABC, 4);
  EXPECT_EQ(out, ".0abc.");
  put_hex(out.data(), 0x12345, 2);
  EXPECT_EQ(out, "45abc.");
}

TEST(AppendHex, UsesAsFewDigitsAsTheValueNeeds) {
  std::string out;
  append_hex(out, 0);
  out += ' ';
  append_hex(out, 255);
  out += ' ';
  append_hex(out, 0x1000);
  out += ' ';
  append_hex(out, ~std::uint64_t{0});
  EXPECT_EQ(out, "0 ff 1000 ffffffffffffffff");
}

TEST(AppendHex, PadsToTheMinimumWidth) {
  std::string out = "\\x";
  append_hex(out, 7, 2);
  EXPECT_EQ(out, "\\x07");
  out.clear();
  append_hex(out, 0xABCDEF, 2);
  EXPECT_EQ(out, "abcdef");
}

TEST(PercentDecode, DecodesEscapesAndKeepsBadOnes) {
  EXPECT_EQ(percent_decode("a%20b%2Fc"), "a b/c");
  EXPECT_EQ(percent_decode("100%"), "100%");
  EXPECT_EQ(percent_decode("%zz%4"), "%zz%4");
  EXPECT_EQ(percent_decode("%7e%7E"), "~~");
}

TEST(PercentDecode, TakesPlusAsSpaceOnlyWhenAsked) {
  EXPECT_EQ(percent_decode("a+b", true), "a b");
  EXPECT_EQ(percent_decode("a+b"), "a+b");
}

}  // namespace
}  // namespace tollgate::core

// JSON text written straight into a string, byte for byte as Json::dump() writes it, several
// times faster than dump() on the text a run writes most (strings with nothing to escape).
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tollgate/json.h"

namespace tollgate::core {

// The length of the well-formed UTF-8 sequence at `at` (Unicode's table 3-7: no overlong forms,
// no surrogates, nothing past U+10FFFF), or 0 when it is not one.
inline std::size_t utf8_sequence(std::string_view text, std::size_t at) {
  auto byte = [&text](std::size_t i) {
    return i < text.size() ? static_cast<unsigned char>(text[i]) : 0U;
  };
  auto continuation = [&byte](std::size_t i, unsigned low = 0x80, unsigned high = 0xBF) {
    return byte(i) >= low && byte(i) <= high;
  };
  const unsigned lead = byte(at);
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(at + 1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const unsigned low = lead == 0xE0 ? 0xA0 : 0x80;
    const unsigned high = lead == 0xED ? 0x9F : 0xBF;
    return continuation(at + 1, low, high) && continuation(at + 2) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const unsigned low = lead == 0xF0 ? 0x90 : 0x80;
    const unsigned high = lead == 0xF4 ? 0x8F : 0xBF;
    return continuation(at + 1, low, high) && continuation(at + 2) && continuation(at + 3) ? 4 : 0;
  }
  return 0;
}

// Writes JSON text at the end of a string. The string's size runs ahead of the text as room
// to write in (a check and a store per byte, where std::string's own appends are calls);
// finish() cuts it back to the text.
class JsonOut {
 public:
  // What text that is not well-formed UTF-8 becomes: dump()'s replacement characters, or
  // dump()'s error (Json::type_error 316), as Json::dump() with its default handler throws it.
  enum class Malformed { kReplace, kThrow };

  explicit JsonOut(std::string& out, Malformed malformed = Malformed::kReplace)
      : out_(out), start_(out.size()), length_(out.size()), malformed_(malformed) {}
  JsonOut(const JsonOut&) = delete;
  JsonOut& operator=(const JsonOut&) = delete;
  ~JsonOut() { finish(); }

  void finish() { out_.resize(length_); }
  std::size_t length() const { return length_; }  // of the string's text so far
  void cut(std::size_t length) { length_ = length; }

  [[gnu::always_inline]] void put(char c) {
    room(1);
    out_[length_++] = c;
  }
  [[gnu::always_inline]] void put(const char* text, std::size_t size) {
    room(size);
    std::memcpy(out_.data() + length_, text, size);
    length_ += size;
  }
  void put(std::string_view text) { put(text.data(), text.size()); }

  // Appends `value` as Json::dump(-1, ' ', false, replace) writes it, byte for byte: the same
  // escapes, members in the object's order, integers in decimal; floats, binary values and
  // text that is not well-formed UTF-8 (replaced by the serializer) are left to the serializer.
  void value(const Json& value) {
    switch (value.type()) {
      case Json::value_t::null:
        put("null", 4);
        return;
      case Json::value_t::boolean:
        if (value.get<bool>()) {
          put("true", 4);
        } else {
          put("false", 5);
        }
        return;
      case Json::value_t::number_integer:
        number(value.get<std::int64_t>());
        return;
      case Json::value_t::number_unsigned:
        number(value.get<std::uint64_t>());
        return;
      case Json::value_t::string:
        string(value.get_ref<const std::string&>());
        return;
      case Json::value_t::array: {
        put('[');
        bool first = true;
        for (const Json& item : value.get_ref<const Json::array_t&>()) {
          if (!first) put(',');
          first = false;
          this->value(item);
        }
        put(']');
        return;
      }
      case Json::value_t::object: {
        put('{');
        bool first = true;
        for (const auto& [key, member] : value.get_ref<const Json::object_t&>()) {
          if (!first) put(',');
          first = false;
          string(key);
          put(':');
          this->value(member);
        }
        put('}');
        return;
      }
      case Json::value_t::number_float:
      case Json::value_t::binary:
      case Json::value_t::discarded:
        break;
    }
    put(value.dump(-1, ' ', false, handler()));
  }

  // Whether `text` is written as it is between quotes: every byte is printable ASCII other
  // than '"' and '\\'.
  static bool plain(std::string_view text) {
    std::size_t i = 0;
    for (; i + 8 <= text.size(); i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, text.data() + i, 8);
      if (!plain_word(word)) return false;
    }
    if (i == text.size()) return true;  // (an empty view's data() may be null)
    std::uint64_t word = 0x2020202020202020ULL;
    std::memcpy(&word, text.data() + i, text.size() - i);
    return plain_word(word);
  }

  // `text` as a JSON string, as value(Json(text)) writes it.
  void string(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    const std::size_t start = length_;
    put('"');
    std::size_t copied = 0;  // text before this index is written
    std::size_t i = 0;
    while (i < text.size()) {
      // Eight bytes at a time (the last few padded with spaces): most text has nothing to
      // escape.
      std::uint64_t word = 0x2020202020202020ULL;
      if (text.size() - i >= 8) {
        std::memcpy(&word, text.data() + i, 8);
      } else {
        std::memcpy(&word, text.data() + i, text.size() - i);
      }
      if (plain_word(word)) {
        i += 8;
        continue;
      }
      const std::size_t stop = std::min(i + 8, text.size());
      for (; i < stop; ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte >= 0x80) {
          const std::size_t length = utf8_sequence(text, i);
          if (length == 0) {
            // The serializer's replacement of malformed bytes is its own: let it write it.
            cut(start);
            put(Json(std::string(text)).dump(-1, ' ', false, handler()));
            return;
          }
          i += length - 1;  // may run past `stop`: the next word starts after the sequence
          continue;
        }
        if (byte >= 0x20 && byte != '"' && byte != '\\') continue;
        put(text.data() + copied, i - copied);
        copied = i + 1;
        // The serializer's two-letter escapes, then \u00XX for the other control bytes.
        static constexpr std::string_view kEscaped = "\b\t\n\f\r\"\\";
        static constexpr std::string_view kLetters = "btnfr\"\\";
        if (const std::size_t at = kEscaped.find(static_cast<char>(byte));
            at != std::string_view::npos) {
          const char escape[] = {'\\', kLetters[at]};
          put(escape, sizeof escape);
        } else {
          const char escape[] = {'\\', 'u', '0', '0', kHex[byte >> 4], kHex[byte & 0xF]};
          put(escape, sizeof escape);
        }
      }
    }
    put(text.data() + copied, text.size() - copied);
    put('"');
  }

 private:
  // Whether none of the 8 bytes of `word` needs a second look in a JSON string: each is
  // printable ASCII other than '"' and '\\'. (The classic zero-byte tests, exact for "any
  // byte" when no byte has its high bit set, which the first term rules out.)
  static bool plain_word(std::uint64_t word) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
    auto has_zero = [](std::uint64_t x) { return (x - kOnes) & ~x & kHighs; };
    const std::uint64_t below_space = (word - kOnes * 0x20) & ~word & kHighs;
    return ((word & kHighs) | below_space | has_zero(word ^ (kOnes * '"')) |
            has_zero(word ^ (kOnes * '\\'))) == 0;
  }

  template <typename Integer>
  void number(Integer n) {
    char digits[24];
    const auto [end, error] = std::to_chars(digits, digits + sizeof digits, n);
    put(digits, static_cast<std::size_t>(end - digits));
  }

  // Room for `size` more bytes, and as much again as this writer wrote (so a long text grows
  // the string a logarithmic number of times, and a short one appended to a long string
  // zero-fills little).
  [[gnu::always_inline]] void room(std::size_t size) {
    if (out_.size() - length_ < size) grow(size);
  }
  [[gnu::noinline]] void grow(std::size_t size) {
    out_.resize(length_ + std::max(size + 64, length_ - start_));
  }

  Json::error_handler_t handler() const {
    return malformed_ == Malformed::kThrow ? Json::error_handler_t::strict
                                           : Json::error_handler_t::replace;
  }

  std::string& out_;
  std::size_t start_;   // where this writer's text begins
  std::size_t length_;  // where it ends so far
  Malformed malformed_;
};

}  // namespace tollgate::core

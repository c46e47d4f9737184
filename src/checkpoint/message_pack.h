// MessagePack primitives written byte for byte as nlohmann's writer writes them (the smallest
// form of each length and number), and a reader of the same forms. The value codec
// (value_store.cpp) writes whole JSON values with them; the header codec writes and reads a
// checkpoint's header field by field, without a JSON document in between.
//
// Thread-safety: plain values; a Writer or Reader is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

namespace tollgate::checkpoint_internal::message_pack {

// Encoded sizes.
std::uint64_t unsigned_size(std::uint64_t n);
std::uint64_t integer_size(std::int64_t n);
std::uint64_t float_size(double n);
std::uint64_t string_size(std::size_t length);
std::uint64_t binary_size(std::size_t length);
std::uint64_t container_header_size(std::size_t count);  // an array's or a map's

// Writes at a cursor into a buffer already sized for what it writes (see the sizes above).
class Writer {
 public:
  explicit Writer(std::uint8_t* out) : out_(out) {}

  void null() { byte(0xC0); }
  void boolean(bool value) { byte(value ? 0xC3 : 0xC2); }
  void unsigned_integer(std::uint64_t n);
  void integer(std::int64_t n);
  void float_number(double n);
  void string(std::string_view text);
  void binary(const std::uint8_t* data, std::size_t length);
  void array_header(std::size_t count) { length(count, 0x90, 15, 0, 0xDC, 0xDD); }
  void map_header(std::size_t count) { length(count, 0x80, 15, 0, 0xDE, 0xDF); }

  std::uint8_t*& cursor() { return out_; }

 private:
  void byte(std::uint64_t b) { *out_++ = static_cast<std::uint8_t>(b); }
  // A marker byte, then `n` big-endian in `bytes` bytes.
  void marked(std::uint32_t marker, std::uint64_t n, int bytes);
  // A length: in the fix form's low bits, else after the 8-, 16- or 32-bit form's marker
  // (marker8 0: no 8-bit form).
  void length(std::size_t n, std::uint32_t fix, std::size_t fix_limit, std::uint32_t marker8,
              std::uint32_t marker16, std::uint32_t marker32);

  std::uint8_t* out_;
};

// Reads the forms a Writer writes (any width of each). Throws Reader::Mismatch when the next
// item is not of the kind asked for or the input ends early; the caller decides what that
// means (the header codec falls back to its general decoder).
class Reader {
 public:
  struct Mismatch : std::runtime_error {
    Mismatch() : std::runtime_error("unexpected MessagePack item") {}
  };

  Reader(const std::uint8_t* data, std::size_t size) : at_(data), end_(data + size) {}

  std::size_t map_header();
  std::size_t array_header();
  std::string_view string();
  std::string_view binary();  // the bytes of a bin item
  std::int64_t integer();     // any integer form that fits in 64 signed bits
  std::uint64_t unsigned_integer();  // any integer form of a value from 0 to 2^64 - 1
  bool at_end() const { return at_ == end_; }
  // Whether the next item is a string (false at the end).
  bool string_next() const {
    return at_ != end_ && ((*at_ >= 0xA0 && *at_ <= 0xBF) || (*at_ >= 0xD9 && *at_ <= 0xDB));
  }

 private:
  std::uint8_t byte();
  std::uint64_t big_endian(int bytes);
  std::string_view take(std::size_t length);  // the next `length` bytes
  // The length of a container whose fix form is `fix` with up to `fix_limit` items, each of at
  // least `bytes_per_item` bytes: Mismatch when the rest of the input is too short for them.
  std::size_t container(std::uint8_t fix, std::uint8_t fix_limit, std::uint8_t marker16,
                        std::uint8_t marker32, std::size_t bytes_per_item);

  const std::uint8_t* at_;
  const std::uint8_t* end_;
};

}  // namespace tollgate::checkpoint_internal::message_pack
